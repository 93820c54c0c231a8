"""One reader for every family's reply shapes: a reply -> a typed :class:`~remote.ai.answers.Reading`.

The shapes (facts in ``docs/models.md``, from each family's own documentation)::

    ```json [{"bbox_2d": [120, 40, 260, 96], "label": "搜索"}] ```     Qwen2.5-VL / Qwen3-VL (list, fenced)
    [{"box_2d": [40, 120, 96, 260], "label": "搜索"}]                 Gemini (y first: the family says so)
    <|begin_of_box|>[[120,40,260,96]]<|end_of_box|>                   GLM-4.1V / 4.5V
    <bbox>120 40 260 96</bbox>, "bbox_120_40_260_96", <point>x y</point>  Doubao / Seed
    <|box_start|>(120,40),(260,96)<|box_end|>                         OS-Atlas (Qwen2-VL tokens)
    Action: click(start_box='<|box_start|>(190,68)<|box_end|>')      UI-TARS-1.5 (1.0: '(x,y)'; Doubao: '[x1,y1,x2,y2]')
    <answer>do(action="Tap", element=[500,300])</answer>              AutoGLM-Phone; finish(message="…")
    <tool_call>{"name": "mobile_use", "arguments": {...}}</tool_call>  Qwen / GUI-Owl mobile agents
    {'action': 'CLICK', 'value': None, 'position': [0.73, 0.21]}     ShowUI (Python literal; navigation: TAP, INPUT, SWIPE ...)
    Memory: … Reason: … Action: {"action_type": "click", "box_2d": [[x1,y1,x2,y2]]}   GLM-4.1V / 4.5V mobile agent
    {"action": "left_click", "coordinate": [640, 212]}                Claude (computer use)
    {"found": true, "bbox": ["120", "40", "260", "96"]}               our own JSON (numbers as strings too)
    {"found": true, "mark": 3}                                       set-of-mark

The answer is read outside the thinking (:func:`remote.ai.reply.split_thinking`),
and of several complete answers the last is meant. What the numbers *mean* is
the caller's ``convention`` (the family's), never guessed from their size.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import replace
from typing import Any

from remote.ai.answers import Action, Box, Convention, Item, Mark, NotFound, Point, Reading, ReplyError, Verb
from remote.ai.reply import Span, brackets, json_spans, split_thinking

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_CALL = re.compile(r"\b(do|finish|finished|click|left_single|left_double|double_click|long_press|type|scroll|"
                   r"drag|swipe|open_app|press_home|press_back|press_enter|wait|call_user|hotkey|press)\s*\(")
_TOKENS = re.compile(
    r"<\|box_start\|>(?P<qwen>.*?)<\|box_end\|>"
    r"|<\|begin_of_box\|>(?P<glm>.*?)<\|end_of_box\|>"
    r"|<bbox>(?P<bbox>.*?)</bbox>"
    r"|<point>(?P<point>.*?)</point>"
    r"|\bbbox_(?P<flat>\d+(?:_\d+){3})\b", re.DOTALL)
_NOT_FOUND = re.compile(r"not\s+found|cannot\s+(?:find|see|locate)|can't\s+(?:find|see)|no\s+such|不存在|"
                        r"没有找到|未找到|找不到|没找到|无法找到|看不到", re.IGNORECASE)
_ACTION_LINE = re.compile(r"^\s*Action\s*:", re.MULTILINE)
BOX_KEYS = ("bbox_2d", "box_2d", "bbox", "box", "bounding_box", "coordinates", "start_box")
POINT_KEYS = ("point_2d", "point", "coordinate", "position", "click_point", "center")
MAX_NUMBERS = 64

# The phone-agent verbs of every grammar, by the name the model uses (lower case, spaces -> _).
VERBS: dict[str, Verb] = {
    "tap": Verb.TAP, "click": Verb.TAP, "left_single": Verb.TAP, "left_click": Verb.TAP,
    "double_tap": Verb.DOUBLE_TAP, "left_double": Verb.DOUBLE_TAP, "double_click": Verb.DOUBLE_TAP,
    "long_press": Verb.LONG_PRESS, "type": Verb.TYPE, "type_name": Verb.TYPE, "input": Verb.TYPE,
    "swipe": Verb.SWIPE, "scroll": Verb.SWIPE, "drag": Verb.SWIPE, "launch": Verb.LAUNCH,
    "open_app": Verb.LAUNCH, "open": Verb.LAUNCH, "awake": Verb.LAUNCH, "back": Verb.BACK,
    "press_back": Verb.BACK, "home": Verb.HOME, "press_home": Verb.HOME, "enter": Verb.ENTER,
    "press_enter": Verb.ENTER, "wait": Verb.WAIT, "take_over": Verb.TAKE_OVER, "call_user": Verb.TAKE_OVER,
    "interact": Verb.TAKE_OVER, "finish": Verb.FINISH, "finished": Verb.FINISH, "terminate": Verb.FINISH,
    "answer": Verb.FINISH,
}


def numbers(value: Any) -> list[float] | None:
    """The numbers of a coordinate value, however written: ``[1, 2]``, ``["1", "2"]``, ``[[1, 2, 3, 4]]``,
    ``"(1,2),(3,4)"``, ``"<bbox>1 2 3 4</bbox>"``, ``"bbox_1_2_3_4"``; None when there are none or one is not
    finite."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        out = [float(value)]
    elif isinstance(value, str):
        out = [float(n) for n in _NUMBER.findall(value.replace("bbox_", " ").replace("_", " "))[:MAX_NUMBERS]]
    elif isinstance(value, list | tuple):
        out = []
        for v in value[:MAX_NUMBERS]:
            inner = numbers(v)
            if inner is None:
                return None
            out += inner
    else:
        return None
    return out if out and all(math.isfinite(v) for v in out) else None


def _geometry(values: list[float] | None, convention: Convention) -> Box | Point | None:
    """Two numbers are a point, four a box (``yx`` swapped to x first, corners ordered)."""
    if values is None:
        return None
    if len(values) == 2:
        a, b = values
        x, y = (b, a) if convention.order == "yx" else (a, b)
        return Point(x, y, convention)
    if len(values) == 4:
        a, b, c, d = values
        x1, y1, x2, y2 = (b, a, d, c) if convention.order == "yx" else (a, b, c, d)
        return Box(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2), convention)
    return None


def _truthy(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if isinstance(value, int | float):
        return bool(value)
    return None


# ---------------------------------------------------------------- JSON answers
def _from_object(data: dict[str, Any], convention: Convention) -> Item | None:
    """One JSON object -> one item: not found, a mark, an agent action, a box (keys win), a point."""
    found = _truthy(data.get("found"))
    if found is False:
        return NotFound(str(data.get("reason") or ""), str(data.get("suggestion") or ""))
    if "mark" in data and not isinstance(data["mark"], bool):
        mark = numbers(data["mark"])
        return Mark(int(mark[0])) if mark and len(mark) == 1 and mark[0] == int(mark[0]) else None
    if isinstance(data.get("arguments"), dict):           # a tool call {"name": ..., "arguments": {...}}
        return _from_object(data["arguments"], convention)
    if isinstance(data.get("action"), str) and data["action"].strip():
        return _json_action(data, convention)
    if isinstance(data.get("action_type"), str) and data["action_type"].strip():
        return _json_action(_action_type(data), convention)
    if all(k in data for k in ("xmin", "ymin", "xmax", "ymax")):   # named keys say their own order
        values = numbers([data["xmin"], data["ymin"], data["xmax"], data["ymax"]])
        return _geometry(values, Convention(convention.scale, "xy"))
    for key in (*BOX_KEYS, *POINT_KEYS):
        if key in data:
            return _geometry(numbers(data[key]), convention)
    return None


# GLM-4.1V / 4.5V's mobile agent writes AndroidWorld's action names; its swipe names the finger's direction.
_ACTION_TYPES = {"input_text": "type", "keyboard_enter": "enter", "navigate_home": "home", "navigate_back": "back",
                 "status": "terminate", "open_app": "open_app"}
_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


def _action_type(data: dict[str, Any]) -> dict[str, Any]:
    """``{"action_type": "click", "box_2d": [[...]]}`` (GLM-V's mobile agent) as an ``action`` object: the box's
    centre is the point, ``goal_status`` the status, a swipe's finger direction the content's (as UI-TARS's)."""
    kind = str(data["action_type"]).strip().lower()
    out: dict[str, Any] = {k: v for k, v in data.items() if k != "action_type"}
    out["action"] = _ACTION_TYPES.get(kind, kind)
    if "box_2d" in data:
        out["coordinate"] = data["box_2d"]
    if kind == "status":
        out["status"] = "success" if str(data.get("goal_status", "")).lower() == "complete" else "fail"
    if kind == "swipe" and str(data.get("direction", "")).lower() in _OPPOSITE:
        out["direction"] = _OPPOSITE[str(data["direction"]).lower()]
    return out


def _json_action(data: dict[str, Any], convention: Convention) -> Item | None:
    """mobile_use / Claude / ShowUI / GLM-V actions: ``{"action": "click", "coordinate": [x, y]}``; a ShowUI swipe's
    ``position`` is ``[[x1, y1], [x2, y2]]``."""
    name = data["action"].strip().lower().replace(" ", "_")
    if name == "system_button":
        name = str(data.get("button") or "").strip().lower()
    verb = VERBS.get(name)
    if verb is None:
        return None
    where = next((data[k] for k in ("coordinate", "position", "point", "start_coordinate") if k in data), None)
    if verb is Verb.SWIPE and isinstance(where, list | tuple) and len(where) == 2 and \
            all(isinstance(p, list | tuple) for p in where):
        where, data = where[0], {**data, "end": where[1]}
    point = _geometry(numbers(where), convention)
    end = _geometry(numbers(next((data[k] for k in ("coordinate2", "end_coordinate", "end") if k in data),
                                 None)), convention)
    text = next((data[k] for k in ("text", "value", "app_name", "content", "app", "message") if k in data), "")
    status = str(data.get("status", "")).lower()
    return _complete(Action(verb, _point(point), _point(end), "" if text is None else str(text),
                            direction=str(data.get("direction") or ""),
                            seconds=_seconds(data.get("time", data.get("duration"))),
                            success=None if not status else status in ("success", "successful", "done")))


def _complete(action: Action) -> Action | None:
    """An action that has what its verb needs (a tap needs its point ...), else None: unreadable."""
    if action.verb in (Verb.TAP, Verb.DOUBLE_TAP, Verb.LONG_PRESS) and action.point is None:
        return None
    if action.verb is Verb.SWIPE and not (action.point and action.end) and not action.direction:
        return None
    if action.verb in (Verb.TYPE, Verb.LAUNCH) and not action.text:
        return None
    return action


def _point(geometry: Box | Point | None) -> Point | None:
    return geometry.center if isinstance(geometry, Box) else geometry


def _seconds(value: Any) -> float:
    found = numbers(value)
    return max(0.0, found[0]) if found else 0.0


def _from_json(span: Span, convention: Convention) -> tuple[Item, ...]:
    """A JSON value: an object is one item; a list of objects one item each; a list of numbers a box/point."""
    value = span.value
    if isinstance(value, dict):
        return _from_dict(value, convention)
    if value and all(isinstance(v, dict) for v in value):
        return _all_or_none([_from_object(v, convention) for v in value])
    if value and all(isinstance(v, list | tuple) and len(v) == 4 for v in value):   # GLM's [[x1,y1,x2,y2], ...]
        return _all_or_none([_geometry(numbers(v), convention) for v in value])
    geometry = _geometry(numbers(value), convention)
    return (geometry,) if geometry is not None else ()


def _from_dict(value: dict[str, Any], convention: Convention) -> tuple[Item, ...]:
    """One object: its item; a box and a point in one answer are both kept (the caller checks they agree)."""
    item = _from_object(value, convention)
    if isinstance(item, Box):
        extra = next((value[k] for k in POINT_KEYS if k in value), None)
        point = _geometry(numbers(extra), convention) if extra is not None else None
        if isinstance(point, Point):
            return item, point
    return (item,) if item is not None else ()


def _all_or_none(items: list[Item | None]) -> tuple[Item, ...]:
    """Every element's item, or none at all when one of them is unreadable."""
    read = tuple(i for i in items if i is not None)
    return read if len(read) == len(items) else ()


# ---------------------------------------------------------------- action calls and special tokens
def _call_span(text: str, start: int) -> int:
    """The end of the call whose ``(`` is at ``start`` (quotes honoured), or -1."""
    return next((i + 1 for i, depth in brackets(text, start, start + 4000) if depth == 0), -1)


def _call_args(source: str) -> dict[str, Any] | None:
    """``do(action="Tap", element=[1,2])`` -> its keyword arguments (literals only; nothing is executed)."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call):
        return None
    out: dict[str, Any] = {}
    for i, arg in enumerate(node.args):
        try:
            out[f"_{i}"] = ast.literal_eval(arg)
        except (ValueError, SyntaxError, TypeError, RecursionError):
            return None
    for kw in node.keywords:
        try:
            out[str(kw.arg)] = ast.literal_eval(kw.value)
        except (ValueError, SyntaxError, TypeError, RecursionError):
            return None
    return out


def _from_call(name: str, args: dict[str, Any], convention: Convention) -> Item | None:
    if name == "do":   # AutoGLM: do(action="Tap", element=[x,y]) / do(action="Swipe", start=[..], end=[..]) ...
        action = str(args.get("action", "")).strip()
        if not action:
            return None
        data: dict[str, Any] = {**args, "action": action}
        data["coordinate"] = args.get("element", args.get("start"))
        data["coordinate2"] = args.get("end")
        data.pop("message", None)
        item = _json_action(data, convention)
        if isinstance(item, Action) and item.verb is Verb.TAP and args.get("message"):
            return replace(item, sensitive=str(args["message"]))
        if isinstance(item, Action) and item.verb is Verb.TAKE_OVER:
            return replace(item, text=str(args.get("message", "")))
        return item
    verb = VERBS.get(name)
    if verb is None:
        return None
    point = _point(_geometry(numbers(args.get("start_box", args.get("point", args.get("_0")))), convention))
    end = _point(_geometry(numbers(args.get("end_box", args.get("end_point"))), convention))
    text = next((args[k] for k in ("content", "app_name", "message", "text") if k in args), "")
    return _complete(Action(verb, point, end, "" if text is None else str(text),
                            direction=str(args.get("direction") or ""), seconds=_seconds(args.get("time"))))


def _tokens_item(match: re.Match[str], convention: Convention) -> Item | None:
    raw = next(g for g in match.groups() if g is not None)
    return _geometry(numbers(raw.replace("_", " ")), convention)


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _candidates(answer: str, convention: Convention) -> list[tuple[int, str, tuple[Item, ...], dict[str, Any]]]:
    """Every readable answer in ``answer`` as (end offset, shape, items, data), tool calls and action calls
    first (their tokens and lists belong to them), then JSON, then bare tokens."""
    found: list[tuple[int, str, tuple[Item, ...], dict[str, Any]]] = []
    taken: list[tuple[int, int]] = []
    for m in _TOOL_CALL.finditer(answer):
        spans = json_spans(m.group(1))
        if spans and isinstance(spans[-1].value, dict):
            item = _from_object(spans[-1].value, convention)
            if item is not None:
                found.append((m.end(), "tool_call", (item,), spans[-1].value))
        taken.append(m.span())
    text = _masked(answer, taken)
    for m in _CALL.finditer(text):
        end = _call_span(text, m.end() - 1)
        if end < 0:
            continue
        args = _call_args(_tokens_as_strings(text[m.start():end]))
        if args is not None:
            item = _from_call(m.group(1), args, convention)
            if item is not None:
                found.append((end, "call", (item,), args))
        taken.append((m.start(), end))
    text = _masked(answer, taken)
    for span in json_spans(text):
        items = _from_json(span, convention)
        if items:
            found.append((span.end, "json", items, span.value if isinstance(span.value, dict) else {}))
        taken.append((span.start, span.end))
    text = _masked(answer, taken)
    for m in _TOKENS.finditer(text):
        item = _tokens_item(m, convention)
        if item is not None:
            found.append((m.end(), "tokens", (item,), {}))
    return found


def _tokens_as_strings(call: str) -> str:
    """UI-TARS writes ``start_box=<|box_start|>(1,2)<|box_end|>`` unquoted at times: quote such values."""
    return re.sub(r"=\s*(<\|box_start\|>.*?<\|box_end\|>|<point>.*?</point>|<bbox>.*?</bbox>)",
                  lambda m: "=" + repr(m.group(1)), call)


def read_reply(text: str, convention: Convention) -> Reading:
    """The final answer of ``text`` as typed items in ``convention``; :class:`ReplyError` when none.

    >>> from remote.ai.answers import Scale
    >>> read_reply("<think>[100, 100, 200, 200]</think>Action: click(start_box='(500,300)')",
    ...            Convention(Scale.NORM1000)).first.point
    Point(x=500.0, y=300.0, convention=Convention(scale=<Scale.NORM1000: 'norm1000'>, order='xy'))
    """
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply is empty")
    answer, thought = split_thinking(text)
    if _ACTION_LINE.search(answer) and "<tool_call>" not in answer:
        head, _, answer = answer.rpartition("Action:")
        thought = (thought + "\n" + head).strip()
    found = _candidates(answer, convention)
    if found:
        _, shape, items, data = max(found, key=lambda f: f[0])
        return Reading(items, shape, data, thought)
    if answer.strip().isdigit() and len(answer.strip()) < 4:
        return Reading((Mark(int(answer.strip())),), "text", {}, thought)
    if _NOT_FOUND.search(answer):
        return Reading((NotFound(answer.strip()[:200]),), "text", {}, thought)
    if not answer:
        raise ReplyError("the reply has no answer outside its thinking")
    raise ReplyError("the reply holds no box, point, element number or action")
