"""ShowUI (showlab): **0-1 fractions**, a bare ``[x, y]`` for grounding, navigation as a Python literal
``{'action': 'CLICK', 'value': None, 'position': [x, y]}``. Its smartphone navigation action space is ``TAP``,
``INPUT`` (value and position), ``SWIPE`` (position ``[[x1,y1], [x2,y2]]``), ``ENTER`` and ``ANSWER`` (value: the
status, "task complete"), under a fixed system prompt with ``Task:`` and ``Action History:``. It cannot write our
JSON plans, so it drives every task no template covers. Sources: showlab/ShowUI ``QUICK_START.md``,
``data/template/shared_navigation.py``.
"""

from remote.ai.answers import Convention, Scale
from remote.ai.families.spec import AgentProtocol, Family

FAMILY = Family(
    name="showui",
    models=(r"showui",),
    convention=Convention(Scale.FRACTION),
    ask="Give the clickable location [x, y] of the element, a relative coordinate on the screenshot, "
        "scaled from 0 to 1.",
    shape="[x, y] with x and y from 0 to 1",
    not_found="not found",
    json_prompts=False,
    agent=AgentProtocol("showui", "agent_showui", Convention(Scale.FRACTION)),
    sources=("showlab/ShowUI QUICK_START.md", "showlab/ShowUI data/template/shared_navigation.py"),
)
