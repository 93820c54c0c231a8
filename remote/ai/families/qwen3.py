"""Qwen3-VL (open weights; qwen3-vl-plus / -flash on DashScope): relative 0-1000 boxes and points, fenced
``bbox_2d`` / ``point_2d`` lists; thinking variants put ``<think>…</think>`` in the content when the server has
no reasoning parser. Its mobile-agent cookbook tells the model the screen is 999x999 and divides by 999, so
its ``mobile_use`` actions are 0-999. Sources: QwenLM/Qwen3-VL ``cookbooks/spatial_understanding.ipynb``,
``cookbooks/mobile_agent.ipynb``; Midscene ``models/qwen.ts``.
"""

from remote.ai.answers import Convention, Scale
from remote.ai.families.spec import (
    DASHSCOPE_HOSTS,
    HIGH_RESOLUTION,
    NORM1000,
    QWEN3_BLOCK,
    AgentProtocol,
    Family,
)
from remote.ai.frames import FramePolicy

FAMILY = Family(
    name="qwen3-vl",
    models=(r"qwen3(\.\d)?-?vl",),
    convention=NORM1000,
    ask="Locate it and output its bbox coordinates in JSON format: "
        '[{"bbox_2d": [x1, y1, x2, y2], "label": "..."}], on a 0-1000 scale of the image '
        "(0,0 top-left, 1000,1000 bottom-right).",
    shape='```json\n[{"bbox_2d": [x1, y1, x2, y2], "label": "..."}]\n``` on the 0-1000 scale',
    # Relative numbers do not depend on the frame: only the block is followed (sharper tokens).
    frame=FramePolicy(block=QWEN3_BLOCK),
    request=HIGH_RESOLUTION,
    request_hosts=DASHSCOPE_HOSTS,
    agent=AgentProtocol("mobile_use", "agent_mobile_use", Convention(Scale.NORM999), drives_alone=False),
    thinking=True,
    sources=("QwenLM/Qwen3-VL cookbooks/spatial_understanding.ipynb", "QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb",
             "Midscene models/qwen.ts"),
)
