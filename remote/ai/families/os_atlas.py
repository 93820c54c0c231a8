"""OS-Atlas (OS-Copilot): relative 0-1000 in Qwen2-VL box tokens,
``<|object_ref_start|>label<|object_ref_end|><|box_start|>(x1,y1),(x2,y2)<|box_end|>``. Source: OS-Copilot/OS-Atlas
README.
"""

from remote.ai.families.spec import NORM1000, Family

FAMILY = Family(
    name="os-atlas",
    models=(r"os-?atlas",),
    convention=NORM1000,
    ask="In this UI screenshot, what is the position of the element corresponding to the command above "
        "(with bbox)? Answer <|object_ref_start|>label<|object_ref_end|><|box_start|>(x1,y1),(x2,y2)<|box_end|> "
        "on a 0-1000 scale.",
    shape="<|box_start|>(x1,y1),(x2,y2)<|box_end|> on the 0-1000 scale",
    not_found="not found",
    json_prompts=False,
    sources=("OS-Copilot/OS-Atlas README",),
)
