"""AutoGLM-Phone-9B (zai-org/Open-AutoGLM; hosted as ``autoglm-phone`` on Zhipu BigModel): a whole-agent
protocol. Its system prompt lists ``do(action="Tap", element=[x,y])``, ``Launch``, ``Type``, ``Swipe``,
``Long Press``, ``Back``, ``Home``, ``Wait``, ``Take_over`` and ``finish(message=…)``; it answers
``<think>…</think><answer>…</answer>``. The prompt says the screen runs from (0,0) to (999,999); its handler maps
``x / 1000 * width``, which is what is followed here. Sources: zai-org/Open-AutoGLM
``phone_agent/config/prompts_zh.py``, ``phone_agent/actions/handler.py``, README; Midscene ``models/auto-glm``.
"""

from remote.ai.families.spec import NORM1000, AgentProtocol, Family

FAMILY = Family(
    name="autoglm-phone",
    models=(r"autoglm",),
    convention=NORM1000,
    ask="坐标系统从左上角 (0,0) 开始到右下角 (999,999) 结束。只用这一种格式回答："
        '<think>…</think><answer>do(action="Tap", element=[x,y])</answer>',
    shape='<think>…</think><answer>do(action="Tap", element=[x,y])</answer>, x and y from 0 to 999',
    not_found='<answer>finish(message="没有找到：屏幕上是什么")</answer>',
    json_prompts=False,
    agent=AgentProtocol("autoglm", "agent_autoglm", NORM1000),
    thinking=True,
    sources=("zai-org/Open-AutoGLM phone_agent/config/prompts_zh.py", "zai-org/Open-AutoGLM phone_agent/actions/handler.py",
             "Midscene models/auto-glm"),
)
