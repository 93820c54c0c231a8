"""How each model family writes its answers, for the loopback model server (``model-sim --family NAME``).

Built from the facts in docs/models.md ("Where the conventions come from", sources per family), on
purpose without importing the product's own family code: the server plays the model, the
product reads it. A *neutral* answer says where the target is in phone pixels (``{"box":
[x1, y1, x2, y2]}``, ``{"point": [x, y]}``) or what to do (``{"action": "tap", "box": [...]}``);
:func:`render` writes it the way the family would, in the frame the family's server made of the
image it received (Qwen's ``smart_resize``; DashScope's downscale when
``vl_high_resolution_images`` is missing). ``variant`` writes the real-but-hostile forms
tests need: ``thinking`` (a wrong draft inside ``<think>``), ``corrected`` (a wrong answer, then
"Corrected:" and the right one), ``strings`` (numbers as strings), ``fence``, ``chinese`` (prose
around it).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Size = tuple[int, int]
NEUTRAL_KEYS = ("box", "point", "action")
VARIANTS = ("plain", "thinking", "corrected", "strings", "fence", "chinese")


@dataclass(frozen=True)
class Dialect:
    name: str
    scale: str                      # pixel | norm1000 | fraction
    order: str = "xy"               # yx: Gemini
    block: int = 1
    min_pixels: int = 0
    max_pixels: int = 0             # the model's own cap
    server_pixels: int = 0          # the provider's cap when vl_high_resolution_images is not sent
    agent: str = ""                 # autoglm | ui-tars | mobile_use
    box_style: str = "json"
    point_style: str = "json"


Q = 28
DIALECTS: dict[str, Dialect] = {d.name: d for d in (
    Dialect("qwen2.5-vl", "pixel", block=Q, min_pixels=4 * Q * Q, max_pixels=16384 * Q * Q,
            server_pixels=1280 * Q * Q, agent="mobile_use", box_style="qwen", point_style="qwen_point"),
    Dialect("qwen-vl-max", "pixel", block=32, min_pixels=4 * 32 * 32, max_pixels=16384 * 32 * 32,
            server_pixels=1280 * Q * Q, agent="mobile_use", box_style="qwen", point_style="qwen_point"),
    Dialect("qwen-vl-max-2508", "pixel", block=32, min_pixels=4 * 32 * 32, max_pixels=16384 * 32 * 32,
            server_pixels=1280 * Q * Q, agent="mobile_use", box_style="qwen", point_style="qwen_point"),
    Dialect("qwen3-vl", "norm1000", block=32, agent="mobile_use", box_style="qwen", point_style="qwen_point"),
    Dialect("glm-v", "norm1000", box_style="glm", point_style="glm"),
    Dialect("gemini", "norm1000", order="yx", box_style="gemini", point_style="gemini_point"),
    Dialect("gpt", "pixel", box_style="ours", point_style="ours_point"),
    Dialect("claude", "pixel", box_style="claude", point_style="claude"),
    Dialect("ui-tars-1.5", "pixel", block=Q, min_pixels=100 * Q * Q, max_pixels=16384 * Q * Q, agent="ui-tars",
            box_style="tars_point_tag", point_style="tars_tokens"),
    Dialect("ui-tars-1.0", "norm1000", agent="ui-tars", box_style="tars_box", point_style="tars_plain"),
    Dialect("doubao-ui-tars", "norm1000", agent="ui-tars", box_style="tars_list", point_style="tars_point_tag"),
    Dialect("doubao-vision", "norm1000", box_style="bbox_tag", point_style="point_tag"),
    Dialect("autoglm-phone", "norm1000", agent="autoglm", box_style="autoglm", point_style="autoglm"),
    Dialect("os-atlas", "norm1000", box_style="atlas", point_style="atlas"),
    Dialect("showui", "fraction", box_style="showui_action", point_style="showui"),
    Dialect("unknown", "norm1000", box_style="ours", point_style="ours_point"),
)}


def seen_frame(dialect: Dialect, size: Size, high_resolution: bool) -> Size:
    """The frame the family's side makes of an image of ``size``: ``smart_resize`` (block, pixel bounds; the
    provider's lower cap unless high resolution was asked), as Qwen publishes it."""
    w, h = size
    b = dialect.block
    if b <= 1:
        return w, h
    cap = dialect.max_pixels if high_resolution or not dialect.server_pixels else dialect.server_pixels
    sw, sh = max(b, round(w / b) * b), max(b, round(h / b) * b)
    if cap and sw * sh > cap:
        beta = math.sqrt(w * h / cap)
        sw, sh = max(b, math.floor(w / beta / b) * b), max(b, math.floor(h / beta / b) * b)
    elif dialect.min_pixels and sw * sh < dialect.min_pixels:
        beta = math.sqrt(dialect.min_pixels / (w * h))
        sw, sh = math.ceil(w * beta / b) * b, math.ceil(h * beta / b) * b
    return sw, sh


def _values(dialect: Dialect, fractions: list[float], frame: Size) -> list[Any]:
    """Fractions of the image (x first) -> the family's numbers (its scale, its order), as it writes them."""
    out: list[Any] = []
    for i, f in enumerate(fractions):
        if dialect.scale == "pixel":
            out.append(round(f * frame[i % 2]))
        elif dialect.scale == "fraction":
            out.append(round(f, 2))
        else:
            out.append(round(f * 1000))
    if dialect.order == "yx":
        out = [out[i + 1 - 2 * (i % 2)] for i in range(len(out))]
    return out


def _nums(values: list[Any], sep: str = ",") -> str:
    return sep.join(str(v) for v in values)


BOX_STYLES: dict[str, Callable[[list[Any]], str]] = {
    "qwen": lambda v: "```json\n" + json.dumps([{"bbox_2d": v, "label": "target"}]) + "\n```",
    "qwen_point": lambda v: "```json\n" + json.dumps([{"point_2d": v, "label": "target"}]) + "\n```",
    "glm": lambda v: f"<|begin_of_box|>[[{_nums(v)}]]<|end_of_box|>",
    "gemini": lambda v: "```json\n" + json.dumps([{"box_2d": v, "label": "target"}]) + "\n```",
    "gemini_point": lambda v: json.dumps([{"point": v, "label": "target"}]),
    "ours": lambda v: json.dumps({"found": True, "bbox": v, "confidence": 0.8}),
    "ours_point": lambda v: json.dumps({"found": True, "point": v}),
    "claude": lambda v: json.dumps({"action": "left_click", "coordinate": v[:2] if len(v) == 2 else
                                    [round((v[0] + v[2]) / 2), round((v[1] + v[3]) / 2)]}),
    "tars_tokens": lambda v: f"Thought: 目标在这里。\nAction: click(start_box='<|box_start|>({_nums(v)})<|box_end|>')",
    "tars_point_tag": lambda v: f"Thought: 点击目标。\nAction: click(start_box='<point>{_nums(_centre(v), ' ')}</point>')",
    "tars_plain": lambda v: f"Thought: 点击目标。\nAction: click(start_box='({_nums(v)})')",
    "tars_box": lambda v: f"Thought: 点击目标。\nAction: click(start_box='({_nums(v)})')",
    "tars_list": lambda v: f"Thought: 点击目标。\nAction: click(start_box='[{_nums(v, ', ')}]')",
    "bbox_tag": lambda v: f"<bbox>{_nums(v, ' ')}</bbox>",
    "point_tag": lambda v: f"<point>{_nums(v, ' ')}</point>",
    "autoglm": lambda v: f'<think>目标就在这里。</think><answer>do(action="Tap", element=[{_nums(_centre(v))}])</answer>',
    "atlas": lambda v: ("<|object_ref_start|>target<|object_ref_end|><|box_start|>("
                        + (f"{v[0]},{v[1]}),({v[2]},{v[3]}" if len(v) == 4 else _nums(v)) + ")<|box_end|>"),
    "showui": lambda v: json.dumps(_centre(v)),
    "showui_action": lambda v: str({"action": "CLICK", "value": None, "position": _centre(v)}),
}


def _centre(v: list[Any]) -> list[Any]:
    if len(v) == 2:
        return v
    mid = [(v[0] + v[2]) / 2, (v[1] + v[3]) / 2]
    return [round(m, 3) if isinstance(v[0], float) else round(m) for m in mid]


def fractions_of(neutral: Any, screen: Size) -> list[float]:
    """A neutral box/point in phone pixels -> fractions of the screen (x first)."""
    return [float(v) / screen[i % 2] for i, v in enumerate(neutral)]


def render_geometry(dialect: Dialect, neutral: list[float], screen: Size, frame: Size, kind: str) -> str:
    style = dialect.point_style if kind == "point" else dialect.box_style
    return BOX_STYLES[style](_values(dialect, fractions_of(neutral, screen), frame))


def is_neutral(reply: Any) -> bool:
    return isinstance(reply, dict) and any(k in reply for k in NEUTRAL_KEYS) and "found" not in reply


def render(dialect: Dialect, reply: dict[str, Any], screen: Size, frame: Size) -> str:
    """A neutral reply (``{"box": [...]}``, ``{"point": [...]}``, ``{"action": ...}``, optional ``variant``,
    ``decoy`` for a wrong draft) in ``dialect``'s words."""
    if "action" in reply:
        text = render_action(dialect, reply, screen, frame)
    else:
        kind = "point" if "point" in reply else "box"
        text = render_geometry(dialect, reply[kind], screen, frame, kind)
    return _variant(dialect, text, reply, screen, frame)


def _variant(dialect: Dialect, text: str, reply: dict[str, Any], screen: Size, frame: Size) -> str:
    variant = str(reply.get("variant") or "plain")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    decoy = reply.get("decoy") or [10, 10, 60, 60]
    wrong = render_geometry(dialect, decoy, screen, frame, "point" if "point" in reply else "box")
    if variant == "thinking":
        return f"<think>先猜一下：{wrong}\n不对，再仔细看看。</think>\n{text}"
    if variant == "corrected":
        return f"{wrong}\n\nWait, that is the wrong element. Corrected:\n{text}"
    if variant == "strings":
        return _quote_numbers(text)
    if variant == "fence":
        return text if text.startswith("```") else f"```\n{text}\n```"
    if variant == "chinese":
        return f"好的，我在截图中找到了目标元素，结果如下：\n{text}\n以上坐标供参考。"
    return text


def _quote_numbers(text: str) -> str:
    """JSON numbers inside lists as strings (``[1, 2]`` -> ``["1", "2"]``), booleans as "true"."""
    text = re.sub(r"(?<=[\[,\s])(-?\d+(?:\.\d+)?)(?=\s*[,\]])", r'"\1"', text)
    return text.replace(": true", ': "true"')


# ---------------------------------------------------------------- phone-agent actions
def _point_values(dialect: Dialect, reply: dict[str, Any], key: str, screen: Size, frame: Size) -> list[Any]:
    raw = reply[key]
    point = raw if len(raw) == 2 else [(raw[0] + raw[2]) / 2, (raw[1] + raw[3]) / 2]
    values = _values(dialect, fractions_of(point, screen), frame)
    return values[::-1] if dialect.order == "yx" else values   # actions are x first in every agent grammar


def render_action(dialect: Dialect, reply: dict[str, Any], screen: Size, frame: Size) -> str:
    """``{"action": "tap", "box": [...]}`` (or ``point``), ``type`` + ``text``, ``launch`` + ``app``, ``swipe`` +
    ``from``/``to``, ``back``, ``home``, ``wait``, ``long_press``, ``take_over`` + ``message``, ``finish`` +
    ``message``, with ``thought``: in the dialect's agent protocol (AutoGLM, UI-TARS, mobile_use)."""
    verb = str(reply["action"])
    thought = str(reply.get("thought") or "下一步。")
    where = "box" if "box" in reply else "point"
    xy = _point_values(dialect, reply, where, screen, frame) if where in reply else None
    text = str(reply.get("text") or reply.get("app") or reply.get("message") or "")
    if dialect.agent == "autoglm":
        return f"<think>{thought}</think><answer>{_autoglm(verb, xy, text, reply, dialect, screen, frame)}</answer>"
    if dialect.agent == "ui-tars":
        return f"Thought: {thought}\nAction: {_tars(verb, xy, text, reply, dialect, screen, frame)}"
    if dialect.agent == "mobile_use":
        args = _mobile_use(verb, xy, text, reply, dialect, screen, frame)
        call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
        return f"Thought: {thought}\nAction: \"{verb}\"\n<tool_call>\n{call}\n</tool_call>"
    raise ValueError(f"family {dialect.name} has no phone-agent protocol")


def _autoglm(verb: str, xy: list[Any] | None, text: str, reply: dict[str, Any], d: Dialect, s: Size, f: Size) -> str:
    if verb in ("tap", "long_press", "double_tap"):
        name = {"tap": "Tap", "long_press": "Long Press", "double_tap": "Double Tap"}[verb]
        extra = f', message="{reply["sensitive"]}"' if reply.get("sensitive") else ""
        return f'do(action="{name}", element=[{_nums(xy or [])}]{extra})'
    if verb == "swipe":
        a = _point_values(d, reply, "from", s, f)
        b = _point_values(d, reply, "to", s, f)
        return f'do(action="Swipe", start=[{_nums(a)}], end=[{_nums(b)}])'
    simple = {"type": f'do(action="Type", text={json.dumps(text, ensure_ascii=False)})',
              "launch": f'do(action="Launch", app={json.dumps(text, ensure_ascii=False)})',
              "back": 'do(action="Back")', "home": 'do(action="Home")',
              "wait": 'do(action="Wait", duration="1 seconds")',
              "take_over": f'do(action="Take_over", message={json.dumps(text, ensure_ascii=False)})',
              "finish": f"finish(message={json.dumps(text, ensure_ascii=False)})"}
    return simple[verb]


def _tars(verb: str, xy: list[Any] | None, text: str, reply: dict[str, Any], d: Dialect, s: Size, f: Size) -> str:
    def box(v: list[Any]) -> str:
        return f"'<|box_start|>({_nums(v)})<|box_end|>'" if d.scale == "pixel" else f"'({_nums(v)})'"

    if verb in ("tap", "long_press"):
        return f"{'click' if verb == 'tap' else 'long_press'}(start_box={box(xy or [])})"
    if verb == "swipe":
        return f"drag(start_box={box(_point_values(d, reply, 'from', s, f))}, " \
               f"end_box={box(_point_values(d, reply, 'to', s, f))})"
    quoted = text.replace("\\", "\\\\").replace("'", "\\'")
    simple = {"type": f"type(content='{quoted}')", "launch": f"open_app(app_name='{quoted}')",
              "back": "press_back()", "home": "press_home()", "wait": "wait()", "take_over": "call_user()",
              "finish": f"finished(content='{quoted}')"}
    return simple[verb]


def _mobile_use(verb: str, xy: list[Any] | None, text: str, reply: dict[str, Any], d: Dialect, s: Size,
                f: Size) -> dict[str, Any]:
    if verb in ("tap", "long_press"):
        return {"action": "click" if verb == "tap" else "long_press", "coordinate": xy}
    if verb == "swipe":
        return {"action": "swipe", "coordinate": _point_values(d, reply, "from", s, f),
                "coordinate2": _point_values(d, reply, "to", s, f)}
    simple: dict[str, dict[str, Any]] = {
        "type": {"action": "type", "text": text}, "launch": {"action": "open", "text": text},
        "back": {"action": "system_button", "button": "Back"}, "home": {"action": "system_button", "button": "Home"},
        "wait": {"action": "wait", "time": 1}, "finish": {"action": "terminate", "status": "success"},
        "take_over": {"action": "answer", "text": text}}
    return simple[verb]
