"""A model no family knows: its coordinates are not trusted. It is asked for a number on numbered elements
(set-of-mark) when the screen has elements, else for our JSON box on a 0-1000 scale, confirmed by a zoomed
crop before anything is tapped.
"""

from remote.ai.families.spec import NORM1000, Family

FAMILY = Family(
    name="unknown",
    models=(),
    convention=NORM1000,
    ask='Reply with one JSON object: {"found": true, "bbox": [x1, y1, x2, y2], "confidence": 0.9}, '
        "on a 0-1000 scale of the image (0,0 top-left, 1000,1000 bottom-right).",
    shape='{"found": true, "bbox": [x1, y1, x2, y2]} on the 0-1000 scale',
    trusted=False,
)
