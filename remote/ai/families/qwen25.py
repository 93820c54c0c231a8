"""Qwen2.5-VL (open weights; qwen-vl-max / qwen-vl-plus snapshots before 2025-08 on DashScope).

Boxes are absolute pixels of the image after ``smart_resize`` (sides multiples of 28);
the reply is a fenced JSON list, even for one object. Sources: QwenLM/Qwen2.5-VL
``cookbooks/spatial_understanding.ipynb``, ``qwen-vl-utils`` (smart_resize); Midscene
``models/qwen.ts`` (pixel bbox, block 28, ``vl_high_resolution_images``).
"""

from remote.ai.families.spec import (
    DASHSCOPE_HOSTS,
    DASHSCOPE_PIXELS,
    HIGH_RESOLUTION,
    PIXEL,
    QWEN_BLOCK,
    AgentProtocol,
    Family,
)
from remote.ai.frames import FramePolicy

FAMILY = Family(
    name="qwen2.5-vl",
    models=(r"qwen2\.?5-?vl", r"qwen-vl-(max|plus)-20(24|25-0[1-7])", r"gui-?owl"),   # GUI-Owl: a Qwen2.5-VL tune
    convention=PIXEL,
    ask="Locate it and output its bbox coordinates in JSON format: "
        '[{"bbox_2d": [x1, y1, x2, y2], "label": "..."}], in absolute pixels of this image '
        "(it is ${width}x${height} pixels).",
    shape='```json\n[{"bbox_2d": [x1, y1, x2, y2], "label": "..."}]\n``` in pixels of the image',
    frame=FramePolicy(block=QWEN_BLOCK, min_pixels=4 * QWEN_BLOCK ** 2, max_pixels=DASHSCOPE_PIXELS),
    request=HIGH_RESOLUTION,
    request_hosts=DASHSCOPE_HOSTS,
    agent=AgentProtocol("mobile_use", "agent_mobile_use", PIXEL, drives_alone=False),
    sources=("QwenLM/Qwen2.5-VL cookbooks/spatial_understanding.ipynb", "qwen-vl-utils smart_resize",
             "Midscene models/qwen.ts", "X-PLUG/MobileAgent (Mobile-Agent-v3, GUI-Owl)"),
)
