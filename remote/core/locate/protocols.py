"""What the locator needs of a vision model, as a Protocol (``remote.ai.vision_agent.VisionAgent`` implements it),
so that the locator never imports ``remote.ai``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PIL import Image

from remote.core.records import LocateResult, UIElement


class VisionTier(Protocol):
    """The vision model as the locator's last tier (and the chooser among look-alike candidates)."""

    def find_element_by_image(self, reference_image: Image.Image, screenshot: Image.Image,
                              *, candidates: Sequence[UIElement] = ()) -> LocateResult: ...

    def find_element(self, screenshot: Image.Image, description: str,
                     *, candidates: Sequence[UIElement] = ()) -> LocateResult: ...
