"""Claude (vision, computer use): pixels of the image Claude saw, after its own downscale (a longest side over
1568 px, or more than about 1.15 megapixels, is scaled down); Anthropic says Claude does badly with normalized
0-1000 requests. Images are sent already within those limits, so the frame is the image sent. Sources:
Anthropic docs "Vision" (image sizes) and the computer-use tool reference (``{"action": "left_click",
"coordinate": [x, y]}``).
"""

from remote.ai.families.spec import PIXEL, Family
from remote.ai.frames import FramePolicy

FAMILY = Family(
    name="claude",
    models=(r"claude",),
    convention=PIXEL,
    ask="Reply with one JSON object giving the pixel coordinates of the element's centre on this "
        '${width}x${height} image: {"action": "left_click", "coordinate": [x, y]}.',
    shape='{"action": "left_click", "coordinate": [x, y]} in pixels of the image',
    frame=FramePolicy(max_side=1568, max_pixels=1_150_000),
    sources=("Anthropic docs: Vision", "Anthropic docs: computer use tool"),
)
