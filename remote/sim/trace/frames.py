"""Recorded screenshots as the trace phone serves them: decoded on first use, cropped to the display, kept few.

The recording's screenshots are 1080x2340 JPEGs whose rows below 1920 are
black: the panel is taller than the app area the view trees describe
(``[0,0][1080,1920]``). The trace phone's display is the app area, so each
screenshot is cropped to it (a smaller one is padded with black); ``wm size``
answers the same size and tree coordinates are screenshot pixels.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from remote.errors import ConfigError
from remote.sim.render import Shot

KEEP = 4   # decoded screens kept; one holds ~6 MB of RGB, plus its PNG and raw encodings once asked for


class Frames:
    """An LRU of decoded screenshots: ``Frames((1080, 1920)).get(path).png()``."""

    def __init__(self, display: tuple[int, int], keep: int = KEEP) -> None:
        self.display = display
        self.keep = max(1, keep)
        self._shots: OrderedDict[Path, Shot] = OrderedDict()
        self._black: Shot | None = None
        self.decoded = 0          # screenshots decoded so far (a test checks the cache works)

    def get(self, path: Path) -> Shot:
        shot = self._shots.get(path)
        if shot is not None:
            self._shots.move_to_end(path)
            return shot
        shot = Shot(fit(load_image(path), self.display))
        self.decoded += 1
        self._shots[path] = shot
        while len(self._shots) > self.keep:
            self._shots.popitem(last=False)
        return shot

    def black(self) -> Shot:
        """What a FLAG_SECURE screen captures as (made once)."""
        if self._black is None:
            self._black = Shot(Image.new("RGB", self.display, (0, 0, 0)))
        return self._black


def load_image(path: Path) -> Image.Image:
    """The screenshot as RGB (DroidBot saved some PNGs under a .jpg name: the content decides)."""
    try:
        with Image.open(path) as im:
            return im.convert("RGB")
    except (OSError, UnidentifiedImageError) as exc:
        raise ConfigError(f"cannot decode the screenshot: {exc}", path=str(path)) from exc


def fit(image: Image.Image, display: tuple[int, int]) -> Image.Image:
    """Crop to the display from the top-left corner; pad with black where the image is smaller."""
    if image.size == display:
        return image
    canvas = Image.new("RGB", display, (0, 0, 0))
    canvas.paste(image.crop((0, 0, min(image.width, display[0]), min(image.height, display[1]))), (0, 0))
    return canvas


def image_size(path: Path) -> tuple[int, int] | None:
    """Width and height from the file's header, without decoding it."""
    try:
        with Image.open(path) as im:
            return im.size
    except (OSError, UnidentifiedImageError):
        return None
