"""Where the studio's screens come from: the live phone, or a screenshot file with its dump.

``LivePhone`` takes frames (a screenshot only: what the page shows, several a
second) and screens (a screenshot with the UI dump taken right after it, through
the runner's own ``Capture``: what inspecting and recording decide on). The
screen is kept until the phone is acted on (``acted()``) or the page asks for a
fresh one, so a click inspects the screen the page shows with its tree.
``StillScreen`` is a file: the same view, nothing to act on.
"""

from __future__ import annotations

import io
import threading
import time
from typing import Any, Protocol

from PIL import Image

from remote.core.locate.screen import Screen
from remote.errors import SecureScreen
from remote.runner.tools import Capture

JPEG_QUALITY = 80
PNG_LEVEL = 1          # the live view favours speed: level 1 is ~0.1 s at 1080x2400, level 6 half again


class ScreenSource(Protocol):
    """What the studio's views read."""

    device: Any          # the phone to act on (gated when the studio serves beyond loopback); None for a file
    generation: int      # counts the actions done: a screen of an older generation is stale

    def frame(self) -> Image.Image: ...
    def screen(self, *, fresh: bool = False) -> Screen: ...
    def acted(self) -> None: ...
    def front(self) -> str: ...


def encode(image: Image.Image, fmt: str) -> tuple[bytes, str]:
    """``(bytes, media type)`` of ``image`` as ``png`` (the phone's pixels, lossless) or ``jpeg``."""
    buffer = io.BytesIO()
    if fmt == "jpeg":
        image.convert("RGB").save(buffer, format="JPEG", quality=JPEG_QUALITY)
        return buffer.getvalue(), "image/jpeg"
    image.save(buffer, format="PNG", compress_level=PNG_LEVEL)
    return buffer.getvalue(), "image/png"


class LivePhone:
    """The phone the studio works on. ``device`` acts (through the allow list when there is one); ``adb`` reads."""

    def __init__(self, adb: Any, device: Any = None) -> None:
        self.adb = adb
        self.device = device if device is not None else adb
        self.generation = 0
        self._screen: Screen | None = None
        self._screen_generation = -1
        self._lock = threading.Lock()
        self.frames = 0
        self.started = time.monotonic()

    def frame(self) -> Image.Image:
        """The screen as it is now (a secure window shows black, as on the phone)."""
        self.frames += 1
        try:
            image: Image.Image = self.adb.screenshot()
            return image
        except SecureScreen:
            return Image.new("RGB", self.adb.window_size(), (0, 0, 0))

    def screen(self, *, fresh: bool = False) -> Screen:
        """The screen with its UI tree: the one taken last, unless the phone was acted on since (or ``fresh``)."""
        with self._lock:
            if fresh or self._screen is None or self._screen_generation != self.generation:
                self._screen = Capture(self.adb).screen(tree=True)
                self._screen_generation = self.generation
            return self._screen

    def acted(self) -> None:
        self.generation += 1

    def front(self) -> str:
        """The package of the app in front."""
        return str(self.adb.current_app().get("package", ""))


class StillScreen:
    """A screenshot file and its UI dump: inspected like the phone, never acted on."""

    device = None
    generation = 0

    def __init__(self, image: Image.Image, xml: str | None) -> None:
        self._screen = Screen(image.convert("RGB"), xml)

    def frame(self) -> Image.Image:
        return self._screen.pil

    def screen(self, *, fresh: bool = False) -> Screen:
        return self._screen

    def acted(self) -> None:
        return None

    def front(self) -> str:
        """The app the dump shows (the first package of its nodes), if it has one."""
        tree = self._screen.tree()
        packages = tree.packages() if tree is not None else []
        return packages[0] if packages else ""
