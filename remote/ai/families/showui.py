"""ShowUI (showlab): **0-1 fractions**, a bare ``[x, y]`` for grounding, navigation as a Python literal
``{'action': 'CLICK', 'value': None, 'position': [x, y]}``. Source: showlab/ShowUI ``QUICK_START.md``.
"""

from remote.ai.answers import Convention, Scale
from remote.ai.families.spec import Family

FAMILY = Family(
    name="showui",
    models=(r"showui",),
    convention=Convention(Scale.FRACTION),
    ask="Give the clickable location [x, y] of the element, a relative coordinate on the screenshot, "
        "scaled from 0 to 1.",
    shape="[x, y] with x and y from 0 to 1",
    not_found="not found",
    json_prompts=False,
    sources=("showlab/ShowUI QUICK_START.md",),
)
