"""Synthetic images shared by the locator tests."""

from __future__ import annotations

import numpy as np
from PIL import Image


def icon(seed: int, size: int = 60) -> Image.Image:
    """A light square with a few random coloured blocks: textured enough to match, different per seed."""
    rng = np.random.default_rng(seed)
    img = np.full((size, size, 3), 240, np.uint8)
    for _ in range(6):
        x, y = rng.integers(0, size - 12, 2)
        img[y:y + rng.integers(6, 20), x:x + rng.integers(6, 20)] = rng.integers(0, 255, 3)
    return Image.fromarray(img)


def text_screen(labels, size=(1080, 2400), fill=(30, 30, 30)) -> Image.Image:
    """A white screen with ``labels`` ((x, y), text, px) drawn in the project's bundled CJK font."""
    from pathlib import Path

    from PIL import ImageDraw, ImageFont

    import remote

    font = Path(remote.__file__).resolve().parent / "assets" / "fonts" / "WenQuanYiMicroHeiSubset.ttf"
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    for (x, y), text, px in labels:
        d.text((x, y), text, fill=fill, font=ImageFont.truetype(str(font), px))
    return img
