"""A screen captured from the phone, as the runner holds it between steps."""

from __future__ import annotations

import logging
from typing import Any

from PIL import Image

from remote.core.locate.screen import Screen
from remote.errors import DeviceCommandError

logger = logging.getLogger(__name__)


class LiveScreen(Screen):
    """A screen captured from the device. Its UI dump is fetched on first use and kept for the record."""

    def __init__(self, image: Image.Image, adb: Any, *, secure: bool = False) -> None:
        super().__init__(image, None, None)
        self._device = adb
        self.xml: str | None = None
        self.secure = secure
        self.stale = False  # set once the phone was touched: a dump now would show another screen

    def tree(self):  # noqa: ANN201 - same as Screen.tree
        if (self._tree is None and not self._tree_error and self.hierarchy is None and self._device is not None
                and not self.stale):
            try:
                self.xml = self._device.dump_hierarchy()
                self.hierarchy = self.xml
            except DeviceCommandError as exc:
                logger.warning("UI dump failed: %s", exc)
                self._tree_error = str(exc)
                return None
        return super().tree()
