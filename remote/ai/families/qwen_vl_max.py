"""qwen-vl-max / qwen-vl-plus without a date (or ``-latest``) on DashScope: which snapshot the alias points to
changes over time, and the snapshots disagree on the block (28 before 2025-08, 32 from the 2025-08-13
snapshot). Both answer in pixels of their resized frame, so images go out with sides that are multiples of
both (224): whichever snapshot answers, the frame it saw is the image sent. Sources: Alibaba Model Studio
model list; docs/models.md (family table).
"""

from remote.ai.families.qwen25 import FAMILY as QWEN25
from remote.ai.families.spec import (
    DASHSCOPE_HOSTS,
    DASHSCOPE_PIXELS,
    HIGH_RESOLUTION,
    PIXEL,
    QWEN3_BLOCK,
    QWEN_BLOCK,
    AgentProtocol,
    Family,
)
from remote.ai.frames import FramePolicy

BOTH_BLOCKS = QWEN_BLOCK * QWEN3_BLOCK // 4   # 224, the least common multiple of 28 and 32

FAMILY = Family(
    name="qwen-vl-max",
    models=(r"qwen-vl-(max|plus)(-latest)?$",),
    convention=PIXEL,
    ask=QWEN25.ask,
    shape=QWEN25.shape,
    frame=FramePolicy(block=BOTH_BLOCKS, min_pixels=4 * BOTH_BLOCKS ** 2, max_pixels=DASHSCOPE_PIXELS),
    request=HIGH_RESOLUTION,
    request_hosts=DASHSCOPE_HOSTS,
    agent=AgentProtocol("mobile_use", "agent_mobile_use", PIXEL, drives_alone=False),
    sources=("Alibaba Model Studio model list",),
)
