"""GLM-4V-Flash, GLM-4.1V-Thinking, GLM-4.5V (Zhipu BigModel, zai-org/GLM-V): relative 0-1000, x first,
``<|begin_of_box|>[[x1,y1,x2,y2]]<|end_of_box|>`` (brackets vary), its GUI-agent prompts' ``box_2d`` also x first,
thinking in ``<think>…</think><answer>…</answer>``. Its mobile-agent prompt (``examples/gui-agent/glm-41v/agent.md``)
asks for ``Memory: … Reason: … Action: {"action_type": "click", "box_2d": [[xmin,ymin,xmax,ymax]]}`` with the box on
0-999 (read on 0-1000 like AutoGLM's handler: at most 0.1 % apart), an AndroidWorld-style action list
(``input_text``, ``navigate_back``, ``navigate_home``, ``keyboard_enter``, ``swipe`` by the finger's direction,
``open_app``, ``wait``, ``answer``, ``status``). It also writes our JSON plans, so it drives a task only with
``LLM_AGENT=always``. Sources: zai-org/GLM-V README (Grounding, GUI agents), ``examples/gui-agent/glm-41v/agent.md``,
GLM-V issues #114, #118; Midscene ``models/glm.ts`` (0-1000, x first).
"""

from remote.ai.families.spec import NORM1000, AgentProtocol, Family

FAMILY = Family(
    name="glm-v",
    models=(r"glm-4(\.\d)?v",),
    convention=NORM1000,
    ask="Give its bounding box as <|begin_of_box|>[[x1,y1,x2,y2]]<|end_of_box|>, x first, "
        "on a 0-1000 scale of the image (0,0 top-left, 1000,1000 bottom-right).",
    shape="<|begin_of_box|>[[x1,y1,x2,y2]]<|end_of_box|> on the 0-1000 scale, x first",
    agent=AgentProtocol("glm-v", "agent_glm_v", NORM1000, drives_alone=False),
    thinking=True,
    sources=("zai-org/GLM-V README Grounding", "zai-org/GLM-V examples/gui-agent/glm-41v/agent.md",
             "Midscene models/glm.ts"),
)
