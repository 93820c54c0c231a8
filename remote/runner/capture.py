"""Looking at the phone: a frame, and the UI tree of that screen state, dumped once per state.

A real ``uiautomator dump`` costs 1-3 s (docs/adb.md#uiautomator-dump); a screenshot a fraction of
that. So a tree is reused while the screen shows the same state:

1. the frame matches the last frame that came with a tree (`Screen.same_state`: a step
   that changed nothing does not dump again);
2. the phone's own last dump (typing's read-back, or one `prefetch` started after an
   app's launch) began after the last command that can change the screen, moments
   ago: it becomes this frame's tree;
3. else the phone is dumped.

When trees are cheap (a resident tree server, `remote.core.device.fast_tree`) the first rule does not
apply: every screen a step is judged on gets a tree read after its action (`still` gives no old screen).

After an action the dump starts at once and the step's wait and the frame run
beside it: the dump itself waits for a second without UI events (waitForIdle),
so the tree it returns is at least as settled as the wait would have made it.
For the same reason a step whose action ended with a read-back dump waits only
what is left of its settle time once that dump is done; and typing's frame is taken
beside its read-back dump (`beside_read_back`), once the settle time has passed in
it, as after any action (kept only while nothing changed the screen since that dump
began). A `prefetch`ed dump (after
an app's launch) is the same: the next screen's frame is taken beside it, once the
launch's own wait has run, and the tree is waited for when it is needed.
A dump that fails leaves the screen without a tree (the locator uses the
screenshot tiers); the failure is kept on the screen (``tree_error``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from remote.core.device.dump import DumpRecord
from remote.core.device.protocol import CheapTree, CostReport, Device, DumpReuse, FrameSource, Wakeable
from remote.core.locate.screen import Screen
from remote.errors import DeviceCommandError, DeviceError, SecureScreen

logger = logging.getLogger(__name__)
RECENT_DUMP_S = 3.0    # a read-back dump this recent, with nothing changed since, is the next screen's tree
WATCH_POLL_S = 0.02    # how often `beside_read_back` looks for the read-back dump to have begun
T = TypeVar("T")
Frame = tuple[Image.Image | np.ndarray, bool]


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
        self._born = time.monotonic()
        self._pending: threading.Thread | None = None   # a prefetched dump, running or done, not yet taken
        self._prefetched: str | None = None
        self._beside: tuple[Frame, int] | None = None   # a frame taken beside a read-back dump, and its generation

    def _recent(self) -> DumpRecord | None:
        """The phone's own last dump (typing's read-back), when taken in this capture's life, moments ago,
        with nothing that changes the screen run since; never one this capture already gave a screen."""
        if not isinstance(self.device, DumpReuse):
            return None
        record = self.device.recent_dump(min(RECENT_DUMP_S, time.monotonic() - self._born))
        return None if record is None or record.xml is self._paired else record

    # ------------------------------------------------------------------ public
    def prefetch(self) -> None:
        """Start dumping the screen an action leads to (an app's launch) while the step waits; the next
        `screen` with a tree waits for it and takes it when nothing has changed the screen since."""
        if not isinstance(self.device, DumpReuse) or self._pending is not None:
            return

        def dump() -> None:
            try:
                self._prefetched = self.device.dump_hierarchy()
            except DeviceError as exc:   # the next screen dumps again and meets the error itself
                logger.info("prefetched UI dump failed: %s", exc)

        self.stats.dumps += 1
        self._pending = threading.Thread(target=dump, name="ui-prefetch", daemon=True)
        self._pending.start()

    def _take_prefetched(self) -> str | None:
        """The prefetched dump (waited for), when it is of the screen now: nothing changed the screen since it
        began. It is this screen's own tree, as a dump beside an action's wait is (not a reused one)."""
        if self._pending is None:
            return None
        self._pending.join()
        self._pending = None
        xml, self._prefetched = self._prefetched, None
        record = self._recent()
        if xml is None or record is None or record.xml is not xml:
            return None
        self._paired = xml
        return xml

    def beside_read_back(self, act: Callable[[], T], settle_s: float) -> T:
        """Run ``act`` (typing, which ends with a read-back dump); once such a dump has run ``settle_s``, the
        frame is taken beside it and kept for the screen after (`after_action`, `after_typing`)."""
        device = self.device
        if not isinstance(device, DumpReuse):
            return act()
        done, taken = threading.Event(), []

        def watch() -> None:
            while not done.is_set():
                underway = device.dump_underway()
                if underway is None:
                    done.wait(WATCH_POLL_S)
                    continue
                generation, started = underway   # the action came before the dump began: settle from there
                if not done.wait(max(0.0, settle_s - (time.monotonic() - started))):
                    try:
                        taken.append((self._frame(), generation))
                    except DeviceError as exc:    # the screen after is captured the usual way
                        logger.info("frame beside the read-back failed: %s", exc)
                return

        watcher = threading.Thread(target=watch, name="frame-beside", daemon=True)
        watcher.start()
        try:
            return act()
        finally:
            done.set()
            watcher.join()
            self._beside = taken[0] if taken else None

    def after_typing(self) -> Screen | None:
        """The screen after an untargeted typing step: its read-back dump and the frame taken beside it, when
        nothing has changed the screen since that dump began (else None: the next step captures)."""
        beside, self._beside = self._beside, None
        recent = self._recent()
        if beside is None or recent is None or beside[1] != recent.generation:
            return None
        (image, secure) = beside[0]
        return self._reused(image, secure, recent.xml)

    def screen(self, *, tree: bool, fresh: bool = False) -> Screen:
        """The screen now; with ``tree`` its UI tree too (``fresh``: dump, never reuse)."""
        image, secure = self._frame()
        if not tree and not secure:
            return Screen(image)
        prefetched = self._take_prefetched()
        if prefetched is not None:
            return self._keep(Screen(image, prefetched, secure=secure))
        if not fresh:
            reused = self._reuse(image, secure)
            if reused is not None:
                return reused
        xml, error = self._dump()
        return self._keep(Screen(image, xml, secure=secure, tree_error=error))

    def with_tree(self, screen: Screen) -> Screen:
        """``screen`` (a frame taken after a step's wait, without a tree) with a fresh UI dump: its frame is not
        taken again."""
        xml, error = self._dump()
        return self._keep(Screen(screen.source, xml, secure=screen.secure, tree_error=error))

    def still(self, last: Screen | None) -> Screen | None:
        """``last`` (the last step's screen) when it is still the screen now: its tree is the phone's latest
        dump and nothing that changes the screen has run since that dump began, moments ago; else None."""
        if last is None or last.xml is None or last.secure or not isinstance(self.device, DumpReuse) or self._cheap():
            return None
        record = self.device.recent_dump(RECENT_DUMP_S)
        return last if record is not None and record.xml is last.xml else None

    def after_action(self, settle_s: float, sleep: Callable[[float], None], *, tree: bool = True) -> Screen:
        """The screen after an action: the UI dump runs while the step waits ``settle_s`` and takes the frame.

        When the action ended with a dump of its own (typing's read-back) and nothing changed the screen
        since, that dump is the tree. Without ``tree`` only the frame is taken, after the wait (the caller
        checks the step another way, and dumps with `screen` when that cannot tell).
        """
        self._take_prefetched()   # of the screen before this action: waited for (one dump at a time), not used
        beside, self._beside = self._beside, None
        if not tree:
            sleep(settle_s)
            image, secure = self._frame()
            return Screen(image, secure=secure)
        recent = self._recent()
        if recent is not None:
            if beside is not None and beside[1] == recent.generation:
                image, secure = beside[0]        # taken beside this very dump, after the settle time
            else:
                # the dump began after the action and waited for the screen to go idle: only the rest of the wait
                sleep(max(0.0, settle_s - (time.monotonic() - recent.started)))
                image, secure = self._frame()
            return self._reused(image, secure, recent.xml)
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
    def _cheap(self) -> bool:
        """Trees cost tens of milliseconds (a resident tree server): a screen's tree is read, not guessed from
        its frame looking like the last one, and the final check reads the finished screen."""
        return isinstance(self.device, CheapTree) and self.device.tree_is_cheap()

    def _frame(self) -> Frame:
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
        if last is not None and last.xml is not None and not secure and not last.secure and not self._cheap() \
                and last.same_state(screen):
            screen.hierarchy = last.xml
        else:
            recent = self._recent()
            if recent is None:
                return None
            self._paired = screen.hierarchy = recent.xml
        screen.tree_reused = True
        self.stats.reused += 1
        return self._keep(screen)

    def _reused(self, image: Image.Image | np.ndarray, secure: bool, xml: str) -> Screen:
        self._paired = xml
        self.stats.reused += 1
        screen = Screen(image, xml, secure=secure)
        screen.tree_reused = True
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
