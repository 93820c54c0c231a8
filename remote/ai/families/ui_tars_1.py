"""UI-TARS 1.0 (ui-tars-2b/7b/72b, -sft / -dpo): relative 0-1000, ``Thought: …\\nAction: click(start_box='(x,y)')``
(no JSON). Source: bytedance/UI-TARS ``README_v1.md``.
"""

from remote.ai.families.spec import NORM1000, AgentProtocol, Family

FAMILY = Family(
    name="ui-tars-1.0",
    models=(r"ui-?tars",),
    convention=NORM1000,
    ask="Output only the coordinate of one point in your response, as Action: click(start_box='(x,y)') "
        "on a 0-1000 scale of the image.",
    shape="Action: click(start_box='(x,y)') on the 0-1000 scale",
    not_found="Action: finished(content='not found: what the screen shows instead')",
    json_prompts=False,
    agent=AgentProtocol("ui-tars", "agent_ui_tars", NORM1000),
    sources=("bytedance/UI-TARS README_v1.md",),
)
