"""Looking at the phone: a frame, and the UI tree of that screen state, dumped once per state.

A real ``uiautomator dump`` costs 1-3 s (ADB_NOTES §7); a screenshot a fraction of
that. So a tree is reused while the screen shows the same state:

1. the frame matches the last frame that came with a tree (`Screen.same_state`: a step
   that changed nothing does not dump again);
2. the phone's own last dump (typing's read-back) was taken after the last command
   that can change the screen, moments ago: it becomes this frame's tree;
3. else the phone is dumped.

After an action the dump starts at once and the step's wait and the frame run
beside it: the dump itself waits for a second without UI events (waitForIdle),
so the tree it returns is at least as settled as the wait would have made it.
A dump that fails leaves the screen without a tree (the locator uses the
screenshot tiers); the failure is kept on the screen (``tree_error``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from remote.core.device.protocol import CostReport, Device, DumpReuse, FrameSource, Wakeable
from remote.core.locate.screen import Screen
from remote.errors import DeviceCommandError, SecureScreen

logger = logging.getLogger(__name__)
RECENT_DUMP_S = 3.0    # a read-back dump this recent, with nothing changed since, is the next screen's tree


@dataclass
class CaptureStats:
    frames: int = 0
    dumps: int = 0          # dumps this capture asked for
    reused: int = 0         # screens given an earlier tree instead
    failed: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class Capture:
    """``Capture(device).screen(tree=True)``: a frame, and (reused or dumped) the UI tree of that state."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.last: Screen | None = None       # the last screen that came with a tree
        self._paired: str | None = None       # the last phone dump given to a screen
        self.stats = CaptureStats()
        self.field_box: tuple[int, int, int, int] | None = None   # the field being typed into (OCR read-back)
        self._born = time.monotonic()

    def _recent(self) -> str | None:
        """The phone's own last dump (typing's read-back), when taken in this capture's life, moments ago,
        with nothing that changes the screen run since; never one this capture already gave a screen."""
        if not isinstance(self.device, DumpReuse):
            return None
        xml = self.device.recent_dump(min(RECENT_DUMP_S, time.monotonic() - self._born))
        return None if xml is None or xml is self._paired else xml

    # ------------------------------------------------------------------ public
    def screen(self, *, tree: bool, fresh: bool = False) -> Screen:
        """The screen now; with ``tree`` its UI tree too (``fresh``: dump, never reuse)."""
        image, secure = self._frame()
        if not tree and not secure:
            return Screen(image)
        if not fresh:
            reused = self._reuse(image, secure)
            if reused is not None:
                return reused
        xml, error = self._dump()
        return self._keep(Screen(image, xml, secure=secure, tree_error=error))

    def after_action(self, settle_s: float, sleep: Callable[[float], None]) -> Screen:
        """The screen after an action: the UI dump runs while the step waits ``settle_s`` and takes the frame.

        When the action ended with a dump of its own (typing's read-back) and nothing changed the screen
        since, that dump is the tree.
        """
        recent = self._recent()
        if recent is not None:
            sleep(settle_s)
            image, secure = self._frame()
            self._paired = recent
            self.stats.reused += 1
            screen = Screen(image, recent, secure=secure)
            screen.tree_reused = True
            return self._keep(screen)
        result: dict[str, Any] = {}

        def dump() -> None:
            try:
                result["xml"], result["error"] = self._dump()
            except BaseException as exc:   # handed to the step's thread below
                result["raised"] = exc

        worker = threading.Thread(target=dump, name="ui-dump", daemon=True)
        worker.start()
        try:
            sleep(settle_s)
            image, secure = self._frame()
        finally:
            worker.join()
        if "raised" in result:
            raise result["raised"]
        return self._keep(Screen(image, result["xml"], secure=secure, tree_error=result["error"]))

    # ------------------------------------------------------------------ parts
    def _frame(self) -> tuple[Image.Image | np.ndarray, bool]:
        self.stats.frames += 1
        try:
            if isinstance(self.device, FrameSource):
                return self.device.frame(), False
            return self.device.screenshot(), False
        except SecureScreen:
            # FLAG_SECURE screens still have a UI tree: locate text:/id: targets there.
            logger.warning("secure (black) screen: locating by the UI tree only")
            return Image.new("RGB", self.device.window_size(), (0, 0, 0)), True

    def _dump(self) -> tuple[str | None, str]:
        self.stats.dumps += 1
        try:
            xml = self.device.dump_hierarchy()
        except DeviceCommandError as exc:
            self.stats.failed += 1
            logger.warning("UI dump failed: %s", exc)
            return None, str(exc)
        self._paired = xml
        return xml, ""

    def _reuse(self, image: Image.Image | np.ndarray, secure: bool) -> Screen | None:
        screen = Screen(image, secure=secure)
        last = self.last
        if last is not None and last.xml is not None and not secure and not last.secure and last.same_state(screen):
            screen.hierarchy = last.xml
        else:
            xml = self._recent()
            if xml is None:
                return None
            self._paired = xml
            screen.hierarchy = xml
        screen.tree_reused = True
        self.stats.reused += 1
        return self._keep(screen)

    def _keep(self, screen: Screen) -> Screen:
        if screen.xml is not None:
            self.last = screen
        return screen



def device_costs(device: Device, capture: Capture | None) -> dict[str, Any]:
    """For the run record: the link's screenshot cost and format, the UI dumps made and reused."""
    out: dict[str, Any] = {}
    if isinstance(device, CostReport):
        out["link"] = device.link_report().to_dict()
        out["dumps"] = device.dump_stats().to_dict()
    if capture is not None:
        out["captures"] = capture.stats.to_dict()
    return out


def wake(device: Device, note: Callable[[str], None]) -> None:
    """Before a task: wake the phone and swipe away a lock screen without a PIN (`ScreenLocked` when one
    asks for it); each thing done is a note for the run."""
    if isinstance(device, Wakeable):
        for done in device.wake_and_unlock():
            note(done)
