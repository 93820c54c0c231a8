"""What the locator needs of a vision model, as a Protocol (``remote.ai.vision_agent.VisionAgent`` implements it),
so that the locator never imports ``remote.ai``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PIL import Image

from remote.core.records import LocateResult, UIElement


class VisionTier(Protocol):
    """The vision model as the locator's last tier (and the chooser among look-alike candidates).

    ``candidates`` compete for the target (a number is asked among them); ``elements`` are the screen's
    elements from its UI tree (``snapping.screen_elements``): the model's answer is snapped to the one
    under it, so a tap goes to a real element."""

    def find_element_by_image(self, reference_image: Image.Image, screenshot: Image.Image,
                              *, candidates: Sequence[UIElement] = (),
                              elements: Sequence[UIElement] = ()) -> LocateResult: ...

    def find_element(self, screenshot: Image.Image, description: str,
                     *, candidates: Sequence[UIElement] = (), elements: Sequence[UIElement] = ()) -> LocateResult: ...
