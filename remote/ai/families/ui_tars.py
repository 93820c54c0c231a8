"""UI-TARS-1.5 (open weights, e.g. ui-tars-1.5-7b on vLLM): absolute pixels of its ``smart_resize`` frame
(block 28, 100x28x28 to 16384x28x28 pixels), written ``Action: click(start_box='<|box_start|>(x,y)<|box_end|>')``
or ``<point>x y</point>`` after a ``Thought:`` line. Its MOBILE_USE template drives a phone (``long_press``,
``open_app``, ``press_home``, ``press_back``, ``type(content=…)``, ``finished(content=…)``). Sources:
bytedance/UI-TARS README, ``README_coordinates.md``, ``codes/ui_tars/action_parser.py`` (smart_resize bounds),
prompt templates.
"""

from remote.ai.families.spec import PIXEL, QWEN_BLOCK, AgentProtocol, Family
from remote.ai.frames import FramePolicy

FAMILY = Family(
    name="ui-tars-1.5",
    models=(r"ui-?tars-1[.-]5",),
    convention=PIXEL,
    ask="Output only the coordinate of one point in your response, as "
        "Action: click(start_box='<|box_start|>(x,y)<|box_end|>') in pixels of this ${width}x${height} image.",
    shape="Action: click(start_box='<|box_start|>(x,y)<|box_end|>') in pixels of the image",
    not_found="Action: finished(content='not found: what the screen shows instead')",
    frame=FramePolicy(block=QWEN_BLOCK, min_pixels=100 * QWEN_BLOCK ** 2, max_pixels=16384 * QWEN_BLOCK ** 2),
    json_prompts=False,
    agent=AgentProtocol("ui-tars", "agent_ui_tars", PIXEL),
    sources=("bytedance/UI-TARS README", "bytedance/UI-TARS README_coordinates.md",
             "bytedance/UI-TARS codes/ui_tars/action_parser.py"),
)
