"""Screens and model names for the dialect tests and ``bench/dialect_bench.py``.

A screen is a grid of labelled buttons at any resolution: an image and the uiautomator
dump that describes it, as the locator receives them. ``MODELS`` names one model of each
family (the family follows the name). ``locate`` runs one ``dynamic:`` locate through the
real locator, the real ``VisionAgent`` and the real ``openai`` client against a loopback
server that answers in the family's dialect.
"""

from __future__ import annotations

import functools
from typing import Any

from PIL import Image, ImageDraw

from remote.ai.answers import Scale
from remote.ai.families import family_for
from remote.ai.llm import LLMClient, RetryPolicy
from remote.ai.vision_agent import VisionAgent
from remote.config import LLMConfig
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.core.records import LocateResult

MODELS = {
    "qwen2.5-vl": "qwen2.5-vl-72b-instruct", "qwen-vl-max": "qwen-vl-max", "qwen-vl-max-2508": "qwen-vl-max-2025-08-13",
    "qwen3-vl": "qwen3-vl-plus", "glm-v": "glm-4.5v", "gemini": "gemini-2.5-flash", "gpt": "gpt-4o-mini",
    "claude": "claude-sonnet-4-5", "ui-tars-1.5": "ui-tars-1.5-7b", "ui-tars-1.0": "ui-tars-7b-dpo",
    "doubao-ui-tars": "doubao-1-5-ui-tars-250428", "doubao-vision": "doubao-seed-1-6-vision-250815",
    "autoglm-phone": "autoglm-phone-9b", "os-atlas": "os-atlas-pro-7b", "showui": "showui-2b",
    "unknown": "my-new-vl-model",
}
RESOLUTIONS = ((720, 1600), (1080, 2400), (1440, 3200))
SEND_SIDES = (1280, 768)
LABELS = ("搜索", "通讯录", "发现", "我", "设置", "发送")
TARGET = "设置"
FAST = RetryPolicy(base=0.01, max_wait=0.05, retry_after_cap=0.2)


def layout(size: tuple[int, int]) -> dict[str, tuple[int, int, int, int]]:
    """Six buttons, two columns by three rows, in the lower half: label -> bounds."""
    w, h = size
    bw, bh = int(w * 0.4), int(h * 0.07)
    out = {}
    for i, label in enumerate(LABELS):
        col, row = i % 2, i // 2
        x1 = int(w * 0.06) + col * int(w * 0.48)
        y1 = int(h * 0.5) + row * int(h * 0.12)
        out[label] = (x1, y1, x1 + bw, y1 + bh)
    return out


def _node(i: int, text: str, bounds: tuple[int, int, int, int], clickable: bool, children: str = "") -> str:
    b = f"[{bounds[0]},{bounds[1]}][{bounds[2]},{bounds[3]}]"
    attrs = (f'index="{i}" text="{text}" resource-id="" class="android.widget.Button" package="sim.test" '
             f'content-desc="" checkable="false" checked="false" clickable="{str(clickable).lower()}" enabled="true" '
             f'focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" '
             f'selected="false" bounds="{b}"')
    return f"<node {attrs}>{children}</node>" if children else f"<node {attrs} />"


def hierarchy(size: tuple[int, int]) -> str:
    kids = "".join(_node(i, label, box, True) for i, (label, box) in enumerate(layout(size).items()))
    return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
            + _node(0, "", (0, 0, *size), False, kids) + "</hierarchy>")


@functools.cache
def image(size: tuple[int, int]) -> Image.Image:
    img = Image.new("RGB", size, (245, 245, 245))
    draw = ImageDraw.Draw(img)
    for box in layout(size).values():
        draw.rectangle(box, fill=(60, 120, 220))
    return img


def screen(size: tuple[int, int], *, tree: bool = True) -> Screen:
    return Screen(image(size), hierarchy(size) if tree else None)


def centre(box: tuple[int, int, int, int]) -> list[float]:
    return [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]


def quantum(family: str, source: tuple[int, int], seen: tuple[int, int]) -> float:
    """Device pixels per unit the family writes (its answers are rounded to that unit)."""
    scale = family_for(MODELS[family]).convention.scale
    if scale is Scale.PIXEL:
        return max(source[0] / seen[0], source[1] / seen[1])
    if scale is Scale.FRACTION:
        return max(source) / 100   # ShowUI writes two decimals
    return max(source) / 1000


def config(url: str, family: str, side: int, **extra: Any) -> LLMConfig:
    return LLMConfig.custom(api_key="sk-dialect", base_url=url, model=MODELS[family], max_image_side=side,
                            timeout=5.0, max_retries=0, **extra)


@functools.cache
def client(url: str, family: str, side: int) -> LLMClient:
    """One client per (server, family, send size): making an openai client costs more than a locate."""
    return LLMClient(config(url, family, side), retry=FAST)


def locate(url: str, family: str, size: tuple[int, int], side: int, *, tree: bool = True,
           target: str = "dynamic:设置按钮", zoom: bool = True) -> LocateResult:
    llm = client(url, family, side)
    vision = VisionAgent(llm.config, client=llm, zoom=zoom)
    return HybridLocator(vision=vision).locate(target, screen(size, tree=tree))
