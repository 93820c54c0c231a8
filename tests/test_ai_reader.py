"""The one reply reader, table by table: every family's shapes, thinking drafts, second objects, strings,
fences, Chinese prose, action calls of the phone agents, and what it refuses to read."""

from __future__ import annotations

import pytest

from remote.ai.answers import Action, Box, Convention, Mark, NotFound, Point, ReplyError, Scale, Verb
from remote.ai.reader import read_reply
from remote.ai.reply import parse_json_reply, split_thinking

N = Convention(Scale.NORM1000)
P = Convention(Scale.PIXEL)
Y = Convention(Scale.NORM1000, "yx")
F = Convention(Scale.FRACTION)
BOX = (120.0, 40.0, 260.0, 96.0)


def box_of(reading) -> tuple[float, ...]:
    item = reading.first
    assert isinstance(item, Box), reading
    return item.x1, item.y1, item.x2, item.y2


@pytest.mark.parametrize("reply, convention", [
    ('```json\n[{"bbox_2d": [120, 40, 260, 96], "label": "搜索"}]\n```', P),                 # Qwen2.5-VL
    ('[{"box_2d": [40, 120, 96, 260], "label": "search"}]', Y),                                # Gemini, y first
    ('<|begin_of_box|>[[120,40,260,96]]<|end_of_box|>', N),                                   # GLM
    ('<|begin_of_box|>[120,40,260,96]<|end_of_box|>', N),
    ('{"box_2d": [120, 40, 260, 96]}', N),                                                     # GLM's box_2d: x first
    ('<bbox>120 40 260 96</bbox>', N),                                                         # Doubao
    ('{"found": true, "bbox": "<bbox>120 40 260 96</bbox>"}', N),
    ('{"found": true, "bbox": "bbox_120_40_260_96"}', N),
    ('<|object_ref_start|>搜索<|object_ref_end|><|box_start|>(120,40),(260,96)<|box_end|>', N),  # OS-Atlas
    ('{"found": "true", "bbox": ["120", "40", "260", "96"], "confidence": "0.9"}', N),         # strings
    ('{"xmin": 120, "ymin": 40, "xmax": 260, "ymax": 96}', Y),                                 # named keys win
    ('[260, 96, 120, 40]', N),                                                                 # corners swapped
    ("Sure! ```json\n{'found': True, 'bbox': [120, 40, 260, 96],}\n```", N),                  # Python literal
    ('好的，找到了。结果如下：\n```json\n[{"bbox_2d": [120, 40, 260, 96]}]\n```\n以上。', P),       # Chinese prose
])
def test_box_shapes(reply, convention):
    assert box_of(read_reply(reply, convention)) == BOX


@pytest.mark.parametrize("reply, convention, xy", [
    ("Thought: 点设置\nAction: click(start_box='<|box_start|>(190,68)<|box_end|>')", P, (190, 68)),   # UI-TARS-1.5
    ("Action: click(start_box=<|box_start|>(190,68)<|box_end|>)", P, (190, 68)),                     # unquoted
    ("Action: click(start_box='<point>190 68</point>')", P, (190, 68)),
    ("Thought: x\nAction: click(start_box='(190,68)')", N, (190, 68)),                               # UI-TARS 1.0
    ('<think>先点设置</think><answer>do(action="Tap", element=[190,68])</answer>', N, (190, 68)),       # AutoGLM
    ("[0.73, 0.21]", F, (0.73, 0.21)),                                                               # ShowUI
    ("{'action': 'CLICK', 'value': None, 'position': [0.73, 0.21]}", F, (0.73, 0.21)),
    ('I will click it: {"action": "left_click", "coordinate": [640, 212]}', P, (640, 212)),          # Claude
    ('<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [540, 120]}}\n</tool_call>',
     P, (540, 120)),
    ('[{"point_2d": [540, 120], "label": "设置"}]', N, (540, 120)),                                   # Qwen point
    ('[{"point": [120, 540], "label": "x"}]', Y, (540, 120)),                                          # Gemini [y, x]
    ("<point>540 120</point>", N, (540, 120)),
    ("Thought: 点击搜索框\nAction: click(start_box='[120, 40, 260, 96]')", N, (190, 68)),   # Doubao-UI-TARS: its centre
])
def test_point_shapes(reply, convention, xy):
    item = read_reply(reply, convention).first
    point = item.point if isinstance(item, Action) else item
    assert isinstance(point, Point) and (point.x, point.y) == xy and point.convention == convention


@pytest.mark.parametrize("reply", [
    '<think>draft {"found": true, "bbox": [1, 2, 3, 4]}</think>{"found": true, "bbox": [120, 40, 260, 96]}',
    '<thought>[1, 2, 3, 4]</thought>\n<bbox>120 40 260 96</bbox>',
    'reasoning [[1,2,3,4]] ...</think><|begin_of_box|>[[120,40,260,96]]<|end_of_box|>',      # opening tag stripped
    '<think>x</think><answer><|begin_of_box|>[[120,40,260,96]]<|end_of_box|></answer>',
    '{"found": true, "bbox": [1, 2, 3, 4]} Wait, wrong one. Corrected: {"found": true, "bbox": [120, 40, 260, 96]}',
    '{"found": true, "bbox": [1, 2, 3, 4]}\n{"found": true, "bbox": [120, 40, 260, 96]}\n{"found": true, "bbox": [5',
])
def test_the_last_answer_outside_the_thinking_is_meant(reply):
    assert box_of(read_reply(reply, N)) == BOX


@pytest.mark.parametrize("reply", [
    '<think>{"found": true, "bbox": [120, 40, 260, 96]}',             # only a draft, never closed
    '<think>{"found": true, "bbox": [1, 2, 3, 4]}</think>',           # nothing outside the thinking
    "I can see the button in the middle of the screen.",
    "",
    '{"found": true, "bbox": [1, 2, 3]}',
    '{"found": true, "bbox": [1, "a", 3, 4]}',
    '{"found": true, "bbox": [NaN, 2, 3, 4]}',
    "Action: click(start_box='')",
    '<answer>do(action="Tap")</answer>',
    '<answer>do(action="Note", message="x")</answer>',
    "Action: hotkey(key='ctrl c')",
])
def test_what_cannot_be_read_is_an_error(reply):
    with pytest.raises(ReplyError):
        read_reply(reply, N)


@pytest.mark.parametrize("reply, expected", [
    ('{"found": false, "reason": "聊天列表为空", "suggestion": "向下滑动"}', NotFound("聊天列表为空", "向下滑动")),
    ('{"found": "false"}', NotFound()),
    ("屏幕上没有找到这个按钮。", NotFound("屏幕上没有找到这个按钮。")),
    ('{"found": true, "mark": "3"}', Mark(3)),
    ("3", Mark(3)),
])
def test_not_found_and_marks(reply, expected):
    assert read_reply(reply, N).first == expected


@pytest.mark.parametrize("reply, verb, fields", [
    ('<answer>do(action="Launch", app="微信")</answer>', Verb.LAUNCH, {"text": "微信"}),
    ('<answer>do(action="Type", text="你好")</answer>', Verb.TYPE, {"text": "你好"}),
    ('<answer>do(action="Type_Name", text="张三")</answer>', Verb.TYPE, {"text": "张三"}),
    ('<answer>do(action="Back")</answer>', Verb.BACK, {}),
    ('<answer>do(action="Home")</answer>', Verb.HOME, {}),
    ('<answer>do(action="Wait", duration="2 seconds")</answer>', Verb.WAIT, {"seconds": 2.0}),
    ('<answer>do(action="Take_over", message="请完成登录")</answer>', Verb.TAKE_OVER, {"text": "请完成登录"}),
    ('<answer>do(action="Tap", element=[500,300], message="重要操作")</answer>', Verb.TAP, {"sensitive": "重要操作"}),
    ('<answer>finish(message="已完成")</answer>', Verb.FINISH, {"text": "已完成"}),
    ("Thought: 输入\nAction: type(content='it\\'s 你好')", Verb.TYPE, {"text": "it's 你好"}),
    ("Action: open_app(app_name='设置')", Verb.LAUNCH, {"text": "设置"}),
    ("Action: press_back()", Verb.BACK, {}),
    ("Action: press_home()", Verb.HOME, {}),
    ("Action: finished(content='done')", Verb.FINISH, {"text": "done"}),
    ("Action: call_user()", Verb.TAKE_OVER, {}),
    ("Action: scroll(start_box='(500,500)', direction='down')", Verb.SWIPE, {"direction": "down"}),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Back"}}</tool_call>',
     Verb.BACK, {}),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "terminate", "status": "success"}}</tool_call>',
     Verb.FINISH, {"success": True}),
    ('<tool_call>{"name": "mobile_use", "arguments": {"action": "open", "text": "微信"}}</tool_call>',
     Verb.LAUNCH, {"text": "微信"}),
])
def test_agent_actions(reply, verb, fields):
    action = read_reply(reply, N).first
    assert isinstance(action, Action) and action.verb is verb
    for name, value in fields.items():
        assert getattr(action, name) == value


def test_a_swipe_has_both_ends_in_the_convention():
    action = read_reply('<answer>do(action="Swipe", start=[500,800], end=[500,200])</answer>', N).first
    assert (action.point.x, action.point.y, action.end.x, action.end.y) == (500, 800, 500, 200)
    drag = read_reply("Action: drag(start_box='(10,20)', end_box='(30,40)')", P).first
    assert drag.verb is Verb.SWIPE and (drag.end.x, drag.end.y) == (30, 40) and drag.end.convention == P


def test_several_boxes_of_one_answer_are_all_kept():
    reading = read_reply('```json\n[{"bbox_2d": [1, 2, 3, 4]}, {"bbox_2d": [5, 6, 7, 8]}]\n```', P)
    assert len(reading.items) == 2 and reading.shape == "json"
    both = read_reply('{"bbox_2d": [120, 40, 260, 96], "point_2d": [190, 68]}', N)
    assert isinstance(both.items[0], Box) and isinstance(both.items[1], Point)


def test_json_replies_for_plans_take_the_last_object_outside_the_thinking():
    assert parse_json_reply('<think>{"steps": []}</think>{"steps": [1]}') == {"steps": [1]}
    assert parse_json_reply('{"a": 1} Corrected: {"a": 2}') == {"a": 2}
    assert parse_json_reply("[1, 2]") == [1, 2]
    with pytest.raises(ReplyError, match="outside its thinking"):
        parse_json_reply('<think>{"a": 1}</think> no json')
    answer, thought = split_thinking("<think>plan</think><answer>do()</answer>")
    assert (answer, thought) == ("do()", "plan")


def test_a_runaway_reply_is_cut_not_parsed_for_minutes():
    import time
    huge = "[" * 100_000 + "x"
    start = time.perf_counter()
    with pytest.raises(ReplyError):
        read_reply(huge, N)
    assert time.perf_counter() - start < 5
