"""GPT-4o / 4.1 / mini: no trained grounding convention. They follow the JSON asked, but the numbers are
guesses (usually pixels of the image they saw, rarely accurate; sometimes a second "Corrected:" object).
So they are never trusted: set-of-mark when the screen has elements, else a box confirmed by a zoomed crop.
Sources: Midscene ``models/gpt.ts`` (reads GPT boxes as pixels); peers recommend set-of-mark for models
without trained grounding (docs/models.md).
"""

from remote.ai.families.spec import PIXEL, Family

FAMILY = Family(
    name="gpt",
    models=(r"gpt-", r"chatgpt"),
    convention=PIXEL,
    ask="Reply with one JSON object: "
        '{"found": true, "bbox": [x1, y1, x2, y2], "confidence": 0.9}, in pixels of this ${width}x${height} image.',
    shape='{"found": true, "bbox": [x1, y1, x2, y2]} in pixels of the image',
    trusted=False,
    sources=("Midscene models/gpt.ts", "docs/models.md: gpt row"),
)
