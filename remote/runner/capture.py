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
apply: every screen a step is judged on gets a tree read after its action (`still` gives no old screen). A wait
that ends on the effect drawn (`await_drawn` with ``keep``) reads its last tree beside a frame: that pair is the
screen after the wait, taken by the next look when nothing has changed the screen since (`_take_held`).

After an action the dump starts at once and the step's wait and the frame run
beside it: the dump itself waits for a second without UI events (waitForIdle),
so the tree it returns is at least as settled as the wait would have made it.
For the same reason a step whose action ended with a read-back dump waits only
what is left of its settle time once that dump is done; and typing's frame is taken
beside its read-back dump (`frame_beside_read_back`), once the settle time has passed in
it, as after any action. That frame is a value, `FrameBeside` (what was captured, when, after which
action), which the typing step hands on to `after_action` / `screen_after_typing`; it stands for the
screen after only while nothing changed the screen since its dump began. A `prefetch`ed dump (after
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
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from remote.core.device.dump import DumpRecord
from remote.core.device.protocol import CheapTree, CostReport, Device, DumpReuse, FrameSource, Wakeable
from remote.core.locate.screen import FrameLater, Screen
from remote.errors import DeviceCommandError, DeviceError, SecureScreen
from remote.runner import drawn
from remote.runner.frames import CaptureStats, FrameBeside, later_frame

logger = logging.getLogger(__name__)
RECENT_DUMP_S = 3.0    # a read-back dump this recent, with nothing changed since, is the next screen's tree
HELD_S = 1.0           # a screen read as a wait ended (`await_drawn` with ``keep``) serves this long, unchanged
WATCH_POLL_S = 0.02    # how often `frame_beside_read_back` looks for the read-back dump to have begun
T = TypeVar("T")
Frame = tuple[Image.Image | np.ndarray, bool]


class Capture:
    """``Capture(device).screen(tree=True)``: a frame, and (reused or dumped) the UI tree of that state.

    What it keeps between calls, all of it about its own screens: `last` (the last screen it gave with a tree:
    the first reuse rule compares frames against it), the last phone dump it gave a screen (never given twice),
    a prefetched dump not yet taken, and its counts (`stats`). What a step carries from its action to the
    screen after it (the frame beside a read-back) is a value the step passes, not kept here.
    """

    def __init__(self, device: Device) -> None:
        self.device = device
        self.last: Screen | None = None       # the last screen that came with a tree
        self._paired: str | None = None       # the last phone dump given to a screen
        self.stats = CaptureStats()
        self._born = time.monotonic()
        self._pending: threading.Thread | None = None   # a prefetched dump, running or done, not yet taken
        self._prefetched: str | None = None
        self._held: tuple[str, Frame | None] | None = None   # the tree (and frame) a wait ended on, not yet taken
        self.pixels_wanted = True   # the next step may read the pixels of the screen after this one (`frames`)

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
        `screen` with a tree waits for it and takes it when nothing has changed the screen since. Not with
        cheap trees: the server reads at once, without the dump's wait for idle, so its tree of the moment after
        the launch would show the screen before the app; the screen's tree is read after the wait instead."""
        if not isinstance(self.device, DumpReuse) or self._pending is not None or self._cheap():
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

    def frame_beside_read_back(self, act: Callable[[], T], settle_s: float) -> tuple[T, FrameBeside | None]:
        """Run ``act`` (typing, which ends with a read-back dump); what it returned, and the frame taken beside
        that dump once it had run ``settle_s`` (None when none was: no dump began, or the frame failed), for
        the screen after (`after_action`, `screen_after_typing`). Reads the phone's dump underway; counts the
        frame."""
        device = self.device
        if not isinstance(device, DumpReuse) or self._later():
            return act(), None
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
                        image, secure = self._frame()
                        taken.append(FrameBeside(image, secure, generation, time.monotonic()))
                    except DeviceError as exc:    # the screen after is captured the usual way
                        logger.info("frame beside the read-back failed: %s", exc)
                return

        watcher = threading.Thread(target=watch, name="frame-beside", daemon=True)
        watcher.start()
        try:
            result = act()
        finally:
            done.set()
            watcher.join()
        return result, (taken[0] if taken else None)

    def screen_after_typing(self, beside: FrameBeside | None) -> Screen | None:
        """The screen after an untargeted typing step: its read-back dump with ``beside`` (the frame taken beside
        it), when nothing has changed the screen since that dump began; else None (the next step captures).
        Reads the phone's last dump; the screen it returns becomes `last`."""
        recent = self._recent()
        if recent is not None and beside is None and self._later():
            return self._reused(self._frame_later(), False, recent.xml)
        if beside is None or not beside.of(recent):
            return None
        assert recent is not None
        return self._reused(beside.image, beside.secure, recent.xml)

    def screen(self, *, tree: bool, fresh: bool = False, pixels: bool = False) -> Screen:
        """The screen now; with ``tree`` its UI tree too (``fresh``: dump, never reuse; ``pixels``: its frame
        taken with it, whatever `pixels_wanted` says). A screen with a tree becomes `last`."""
        if tree and self._cheap():
            # read beside the frame, never reused: it costs no time beside the frame, and a tree reused from the
            # phone's last read (a poll of `await_drawn`, a read-back) would send a target not found to be looked
            # for again on a fresh one (`Aimer.locate`). The pair a wait ended on is such a read, moments ago
            return self._take_held() or self._fresh_pair(pixels)
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

    def with_fresh_tree(self, screen: Screen) -> Screen:
        """A new screen: ``screen``'s frame (taken after a step's wait, without a tree; not taken again) with a
        fresh UI dump. It becomes `last` when the dump gave a tree."""
        xml, error = self._dump()
        return self._keep(Screen(screen.source, xml, secure=screen.secure, tree_error=error))

    def last_if_unchanged(self, last: Screen | None) -> Screen | None:
        """``last`` (the last step's screen) when it is still the screen now, else None. With the dump: its tree
        is the phone's latest dump and nothing that changes the screen has run since that dump began, moments ago
        (reads the phone's last dump; changes nothing). With cheap trees: a tree read now is ``last``'s, to the
        letter; the screen given is that fresh tree with ``last``'s frame (it becomes `last`). Either way the
        caller judges on it only what a tree decides, and captures again for anything that needs the pixels."""
        if last is None or last.xml is None or last.frame_taken and last.secure or not isinstance(self.device,
                                                                                                   DumpReuse):
            return None
        if self._cheap():
            xml, _ = self._dump()
            # a frame not taken of the last screen is taken of this one, if something reads it: a command (a key
            # the tree does not show) may have gone in since the last screen was read
            frame = last.source if last.frame_taken else self._frame_later()
            return self._keep(Screen(frame, xml)) if xml is not None and xml == last.xml else None
        record = self.device.recent_dump(RECENT_DUMP_S)
        return last if record is not None and record.xml is last.xml else None

    def after_action(self, settle_s: float, sleep: Callable[[float], None], *, tree: bool = True,
                     beside: FrameBeside | None = None) -> Screen:
        """The screen after an action: the UI dump runs while the step waits ``settle_s`` and takes the frame.

        When the action ended with a dump of its own (typing's read-back) and nothing changed the screen
        since, that dump is the tree, and ``beside`` (the frame typing took beside it) the frame. Without
        ``tree`` only the frame is taken, after the wait (the caller checks the step another way, and dumps
        with `screen` when that cannot tell). Waits for a prefetched dump; a screen with a tree becomes `last`.
        With cheap trees (the resident server reads without waiting for idle) the tree is read after the wait,
        beside the frame: never a tree of the moment right after the action.
        """
        self._take_prefetched()   # of the screen before this action: waited for (one dump at a time), not used
        if not tree:
            sleep(settle_s)
            image, secure = self._frame()
            return Screen(image, secure=secure)
        if self._cheap():
            # the server's read does not wait for the screen to go idle as the dump does: read right after the
            # action, its tree would be of the screen before the action's effect. Read once the screen shows it
            self.await_drawn(settle_s, sleep, keep=True)
            return self._take_held() or self._fresh_pair()
        recent = self._recent()
        if recent is not None:
            if beside is not None and beside.of(recent):
                image, secure = beside.image, beside.secure   # taken beside this very dump, after the settle time
            else:
                # the dump began after the action and waited for the screen to go idle: only the rest of the wait
                sleep(max(0.0, settle_s - (time.monotonic() - recent.started)))
                image, secure = self._frame()
            return self._reused(image, secure, recent.xml)

        def wait_then_frame() -> Frame:
            sleep(settle_s)
            return self._frame()

        return self._with_tree(wait_then_frame)

    def await_drawn(self, settle_s: float, sleep: Callable[[float], None], *, app: str | None = None,
                    keep: bool = False) -> None:
        """The wait after an action. With cheap trees it ends once the screen shows the action's effect: the tree
        changed from `last` (the screen acted on), or the window is ``app``'s after its launch, and held still
        (`drawn.await_drawn`: at most ``settle_s``, a little longer while nothing changed); else (the dump, or a
        server that did not start) ``settle_s``. A server still starting (a run's first launch) is waited for
        within ``settle_s``, and the rest of it ends on the effect. ``keep`` (the caller looks at the screen next):
        the read that held is made beside a frame, and the pair kept for that look (`_take_held`)."""
        device, started = self.device, time.monotonic()
        self._held = None
        if not (isinstance(device, CheapTree) and device.tree_is_cheap() and device.tree_answers_now(settle_s)):
            sleep(max(0.0, settle_s - (time.monotonic() - started)))   # the dump, or no server within the wait
        else:
            before = self.last.xml if self.last is not None else None
            later = self._later()
            seen = drawn.await_drawn(device.dump_hierarchy, max(0.0, settle_s - (time.monotonic() - started)), sleep,
                                     before=before, app=app, beside=self._frame if keep and not later else None)
            self.stats.dumps += seen.reads
            self.stats.drawn += seen.shown
            if keep and seen.tree is not None and (seen.beside is not None or later):
                self._held = (seen.tree, seen.beside)
        self.stats.waited_ms += (time.monotonic() - started) * 1000

    def _take_held(self) -> Screen | None:
        """The tree and frame a wait ended on (`await_drawn` with ``keep``), as a screen of its own, when that
        tree is still the phone's last read, nothing has changed the screen since it began and it is at most
        `HELD_S` old; it becomes `last`. Else None (and it is dropped)."""
        held, self._held = self._held, None
        if held is None or not isinstance(self.device, DumpReuse):
            return None
        xml, frame = held
        record = self.device.recent_dump(HELD_S)
        if record is None or record.xml is not xml:
            return None
        self._paired = xml
        if frame is None:
            return self._keep(Screen(self._frame_later(), xml))
        return self._keep(Screen(frame[0], xml, secure=frame[1]))

    def _fresh_pair(self, pixels: bool = False) -> Screen:
        """With cheap trees: a tree read now, beside a frame, or (`_later`, unless ``pixels``) with its frame taken
        when first read; a read that fails leaves the screen to its frame. It becomes `last`."""
        if pixels or not self._later():
            return self._with_tree(self._frame)
        xml, error = self._dump()
        if xml is None:
            image, secure = self._frame()
            return Screen(image, secure=secure, tree_error=error)
        return self._keep(Screen(self._frame_later(), xml))

    def _later(self) -> bool:
        """A screen's frame is taken when something reads it (`remote.runner.frames`): trees are cheap, the phone
        is set so (``--frames needed``), and the next step is not known to read the pixels of the screen now."""
        return not self.pixels_wanted and isinstance(self.device, CheapTree) and self.device.frames_when_read()

    def _frame_later(self) -> FrameLater:
        return later_frame(self.device, self._frame)

    def _with_tree(self, frame: Callable[[], Frame]) -> Screen:
        """A screen whose UI tree is read on a thread of its own while ``frame`` runs here (the frame, or a wait
        and then the frame: the dump waits for the screen to go idle itself); it becomes `last`."""
        result: dict[str, Any] = {}

        def dump() -> None:
            try:
                result["xml"], result["error"] = self._dump()
            except BaseException as exc:   # handed to the step's thread below
                result["raised"] = exc

        worker = threading.Thread(target=dump, name="ui-dump", daemon=True)
        worker.start()
        try:
            image, secure = frame()
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

    def _reused(self, image: Image.Image | np.ndarray | FrameLater, secure: bool, xml: str) -> Screen:
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
