"""qwen-vl-max / qwen-vl-plus snapshots dated 2025-08 and later: pixels of the resized frame, sides in
multiples of 32 (32x32 px tokens). Sources: public write-ups of the 2025-08-13 snapshot (32x32 px tokens); Alibaba Model Studio model list;
docs/models.md (family table).
"""

from remote.ai.families.qwen25 import FAMILY as QWEN25
from remote.ai.families.spec import (
    DASHSCOPE_HOSTS,
    DASHSCOPE_PIXELS,
    HIGH_RESOLUTION,
    PIXEL,
    QWEN3_BLOCK,
    AgentProtocol,
    Family,
)
from remote.ai.frames import FramePolicy

FAMILY = Family(
    name="qwen-vl-max-2508",
    models=(r"qwen-vl-(max|plus)-(2025-(0[89]|1[0-2])|20[3-9]\d|202[6-9])",),
    convention=PIXEL,
    ask=QWEN25.ask,
    shape=QWEN25.shape,
    frame=FramePolicy(block=QWEN3_BLOCK, min_pixels=4 * QWEN3_BLOCK ** 2, max_pixels=DASHSCOPE_PIXELS),
    request=HIGH_RESOLUTION,
    request_hosts=DASHSCOPE_HOSTS,
    agent=AgentProtocol("mobile_use", "agent_mobile_use", PIXEL, drives_alone=False),
    sources=("public write-ups of qwen-vl-max-2025-08-13 (32x32 px tokens)", "Alibaba Model Studio model list"),
)
