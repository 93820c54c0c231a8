"""Gemini 2.x (Google's OpenAI-compatible endpoint, OpenRouter): relative 0-1000 with **y first**:
``[{"box_2d": [ymin, xmin, ymax, xmax], "label": ...}]``, points ``[y, x]``. Sources: google-gemini/cookbook
``quickstarts/Spatial_understanding.ipynb`` ("the y coordinates are first"); Midscene ``models/gemini.ts``.
"""

from remote.ai.answers import Convention, Scale
from remote.ai.families.spec import Family

FAMILY = Family(
    name="gemini",
    models=(r"gemini-",),
    convention=Convention(Scale.NORM1000, "yx"),
    ask='Return its bounding box as a JSON list [{"box_2d": [ymin, xmin, ymax, xmax], "label": "..."}] '
        "normalized to 0-1000 (y first).",
    shape='[{"box_2d": [ymin, xmin, ymax, xmax], "label": "..."}] normalized to 0-1000, y first',
    thinking=True,
    sources=("google-gemini/cookbook quickstarts/Spatial_understanding.ipynb", "Midscene models/gemini.ts"),
)
