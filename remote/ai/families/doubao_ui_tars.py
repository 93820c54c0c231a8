"""Doubao-1.5-UI-TARS (Volcengine Ark): relative 0-1000, ``click(start_box='[x1, y1, x2, y2]')`` under a fixed
system prompt, after a ``Thought:`` line. Sources: Volcengine Ark docs (GUI agent); Midscene ``models/ui-tars``
(``vlm-ui-tars-doubao-1.5``, normalized by 1000).
"""

from remote.ai.families.spec import NORM1000, AgentProtocol, Family

FAMILY = Family(
    name="doubao-ui-tars",
    models=(r"doubao-(1[.-]5-)?ui-?tars",),
    convention=NORM1000,
    ask="Output only the element's box, as Action: click(start_box='[x1, y1, x2, y2]') on a 0-1000 scale "
        "of the image.",
    shape="Action: click(start_box='[x1, y1, x2, y2]') on the 0-1000 scale",
    not_found="Action: finished(content='not found: what the screen shows instead')",
    json_prompts=False,
    agent=AgentProtocol("ui-tars", "agent_ui_tars", NORM1000),
    sources=("Volcengine Ark docs: GUI agent", "Midscene models/ui-tars/adapter.ts"),
)
