"""The screen's checks for `remote doctor`: UI dump health and time, displays, rotation, lock and screen state,
link speed and screenshot time, the resident tree server. One function each, ``(ADBController) -> Line``; nothing they run changes
what the phone shows (a dump, a screenshot, ``dumpsys``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple

from remote.core.device import screen_state
from remote.core.device.capture import frame_uniformity, secure_app_area
from remote.core.device.fast_tree import TreeMode
from remote.core.device.tree_server import TreeServerError, Trouble
from remote.errors import DumpFailed, SecureScreen

if TYPE_CHECKING:
    from remote.core.device.adb_controller import ADBController

SLOW_DUMP_S = 3.0          # a dump is a second of idle plus an app_process start (§7); 3 s: something keeps it busy
SLOW_SCREENSHOT_S = 1.0    # the target for a 1080x2400 screenshot, over USB and over 5 MB/s Wi-Fi (R10)


class Line(NamedTuple):
    """One line of the report: ``✓ UI dump  1.6 s`` or ✗ with the steps that fix it."""

    name: str
    ok: bool
    measured: str
    steps: tuple[str, ...] = ()


def ui_dump(adb: ADBController) -> Line:
    adb.tree.stop()                                  # never two UiAutomation clients: the dump alone
    fast, adb.dumper.fast = adb.dumper.fast, None    # this line measures `uiautomator dump` itself
    started = time.perf_counter()
    try:
        adb.dumper.dump()
    except DumpFailed as exc:
        adb.dumper.fast = fast
        said = exc.output.strip().splitlines()[0][:120] if exc.output.strip() else "no output"
        return Line("UI dump", False, f"failed ({exc.kind}): the phone said {said!r}", (exc.hint,))
    seconds = time.perf_counter() - started
    adb.dumper.fast = fast
    retries = adb.dumper.stats.attempts - adb.dumper.stats.ok
    measured = f"{seconds:.1f} s" + (f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else "")
    if seconds > SLOW_DUMP_S:
        return Line("UI dump", False, f"{measured}: slow (a screen that keeps changing?)",
                    ("go to a still screen (the home screen) and run again; an animation, a video or a live "
                     "wallpaper keeps `uiautomator dump` waiting for the screen to go idle",))
    return Line("UI dump", True, measured)


def displays(adb: ADBController) -> Line:
    ids = screen_state.display_ids(adb.shell(["dumpsys", "SurfaceFlinger", "--display-id"]))
    if len(ids) < 2:
        return Line("displays", True, "one display")
    chosen = adb.frames.report.display or adb.frames.display()
    return Line("displays", True, f"{len(ids)} displays; screenshots use the default one (`screencap -d {chosen}`)")


def rotation(adb: ADBController) -> Line:
    turned = screen_state.rotation(adb.shell(["dumpsys", "display"]))
    w, h = adb.window_size()
    what = "portrait" if turned % 2 == 0 else "landscape"
    return Line("rotation", True, f"{what} ({turned * 90}°): taps and screenshots in {w}x{h}")


def lock(adb: ADBController) -> Line:
    state = adb.screen_state.lock()
    if state.keyguard and state.secure:
        return Line("lock and screen", False, "locked with a PIN, pattern or password: remote never types one",
                    ("unlock the phone by hand before a run",
                     "for a test phone: Settings → Security → Screen lock → None (or Swipe)",
                     "keep it awake while charging: Developer options → Stay awake"))
    awake = {True: "screen on", False: "screen off", None: "screen state not reported"}[state.awake]
    if state.keyguard or state.awake is False:
        return Line("lock and screen", True, f"{awake}, {'lock screen without a PIN' if state.keyguard else 'no lock'}"
                    ": a run wakes it and swipes the lock screen away")
    return Line("lock and screen", True, f"{awake}, unlocked")


def screenshot(adb: ADBController) -> Line:
    try:
        adb.frame(allow_uniform=True)        # the first frame times the link and picks the wire format
        started = time.perf_counter()
        frame = adb.frame(allow_uniform=True)
    except SecureScreen as exc:              # allow_uniform: not raised; kept for a capture that fails oddly
        return Line("screenshot", False, exc.message, (exc.hint,))
    seconds = time.perf_counter() - started
    report = adb.link_report()
    speed = f"{report.mb_s:.1f} MB/s" if report.mb_s else "faster than it can be timed"
    # the tree server's screenshots, when they serve, are JPEGs it encodes; else screencap's wire format
    source = "a JPEG from the tree server" if report.server_shots else report.wire.upper() or "a frame"
    measured = f"{seconds:.2f} s for {frame.shape[1]}x{frame.shape[0]} as {source} (link {speed})"
    if secure_app_area(frame) and not frame_uniformity(frame)[0]:   # the app's own choice, not the phone's fault
        measured += "; the app in front is black under the status bar (a secure layer): steps there use the UI tree"
    if seconds > SLOW_SCREENSHOT_S:
        return Line("screenshot", False, measured + ": slow",
                    ("connect the phone over USB (Wi-Fi ADB moves 0.1-5 MB/s)",
                     "use a USB 3 port and cable if the phone has one; close other apps that capture the screen"))
    return Line("screenshot", True, measured)


CHECKS = (ui_dump, displays, rotation, lock, screenshot)


def fast_tree(adb: ADBController) -> Line:
    """The resident tree server (`remote.core.device.fast_tree`): started, its version, a warm read's time; or
    why not and what to do."""
    tree = adb.tree
    if tree.mode is TreeMode.DUMP:
        return Line("fast tree", True, "off (--tree dump / REMOTE_TREE=dump): trees come from uiautomator dump")
    try:
        first = tree.read()
        started = time.perf_counter()
        warm = tree.read() if first is not None else None
    except TreeServerError as exc:       # --tree server: no fallback
        tree.report.fallback, tree.report.trouble = str(exc), exc.trouble.value
        warm = None
    seconds = time.perf_counter() - started if warm is not None else 0.0
    report = tree.report
    if warm is not None:
        cold = "already running" if report.cold_start_s == 0.0 else f"cold start {report.cold_start_s or 0:.2f} s"
        return Line("fast tree", True, f"u2.jar {report.version} ({cold}), a warm read {seconds * 1000:.0f} ms")
    actionable = report.trouble in (Trouble.HELD.value, Trouble.NO_PACKAGE.value) or tree.mode is TreeMode.SERVER
    return Line("fast tree", not actionable, f"not started: {report.fallback}",
                (_fast_tree_fix(report.trouble, report.holder),))


def _fast_tree_fix(trouble: str, holder: str) -> str:
    if trouble == Trouble.HELD.value:
        return (f"stop {holder or 'the other automation tool'} (close its app or server) and run again; until then "
                "runs read trees with uiautomator dump (1-3 s each)")
    if trouble == Trouble.NO_PACKAGE.value:
        return "install remote's dependencies again (`pip install uiautomator2`): its wheel ships u2.jar"
    return ("this phone does not keep uiautomator2's server running (a ROM that stops it?): runs read trees with "
            "uiautomator dump (1-3 s each); `--tree dump` skips the attempt")
