"""Doubao / Seed vision models (Volcengine Ark: doubao-1.5-vision-pro, doubao-seed-1.6-vision ...): relative
0-1000 in ``<bbox>x1 y1 x2 y2</bbox>``; in asked JSON the box may arrive as a string (``"<bbox>…</bbox>"``,
``"bbox_859_773_923_808"``). Sources: Volcengine Ark docs (视觉定位); Midscene commit "tolerate malformed Doubao
bbox values" and its ``doubao.test.ts``.
"""

from remote.ai.families.spec import NORM1000, Family

FAMILY = Family(
    name="doubao-vision",
    models=(r"doubao.*vision", r"doubao-seed", r"seed-?1[.-][56]", r"seed.*-vl"),
    convention=NORM1000,
    ask="Give its bounding box as <bbox>x1 y1 x2 y2</bbox> on a 0-1000 scale of the image "
        "(0,0 top-left, 1000,1000 bottom-right).",
    shape="<bbox>x1 y1 x2 y2</bbox> on the 0-1000 scale",
    thinking=True,
    sources=("Volcengine Ark docs: 视觉定位", "Midscene models/doubao.ts"),
)
