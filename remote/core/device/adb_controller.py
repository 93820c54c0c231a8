"""ADBController: the executor. Every phone action goes through here.

A short assembly of capabilities (adbutils' own shape): the link to the phone
(`transport.AdbLink`: finding it, services, bounded reconnects, foreign errors
mapped to ours), screen capture decoding (`capture`), typing (`text_input.TextTyper`
with ADBKeyboard and the keyboard it restores), key names (`keys`).

Shell commands are built from lists and quoted with ``shlex.join``: typing
``"; reboot; echo "`` types those characters and runs nothing.
"""

from __future__ import annotations

import logging
import re
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from remote.core.coords import swipe_vector
from remote.core.device import refusals, screen_state, transport
from remote.core.device.ahead import Ahead
from remote.core.device.audio import Volume, music_volume
from remote.core.device.capture import refuse_unusable, secure_app_area, to_pil
from remote.core.device.dump import DumpRecord, DumpStats, UiDumper
from remote.core.device.fast_tree import FastTree, TreeMode, default_frames, default_mode
from remote.core.device.frames import FrameGrabber, LinkReport
from remote.core.device.keys import KEYCODES, keycode
from remote.core.device.launching import AppLauncher
from remote.core.device.protocol import FieldRead
from remote.core.device.rom import Rom, parse_getprop
from remote.core.device.rom import detect as rom_of
from remote.core.device.screen_state import ScreenState
from remote.core.device.text_input import TextTyper
from remote.core.device.transport import AdbLink
from remote.core.records import ScreenshotMetadata
from remote.errors import ActionError, DeviceError

if TYPE_CHECKING:   # the image libraries load when a frame is first decoded, not with the phone's link
    import numpy as np
    from PIL import Image

__all__ = ["ADBController", "KEYCODES", "keycode"]

logger = logging.getLogger(__name__)
CMD_INPUT_SDK = 30        # `cmd input` (InputShellCommand, no app_process per call) from Android 11 (R11)
DOUBLE_TAP_GAP_S = 0.06   # between the taps of a double tap: over 40 ms, under 300 ms (ViewConfiguration)


class ADBController:
    """One phone, through an adb server (a real one, or the simulated phone's).

    >>> adb = ADBController("emulator-5554").connect()      # doctest: +SKIP
    >>> adb.tap(540, 1200); adb.input_text("你好")             # doctest: +SKIP
    """

    def __init__(self, serial: str | None = None, host: str = "127.0.0.1", port: int = 5037, *,
                 socket_timeout: float = 10.0, command_timeout: float = 30.0, reconnect_attempts: int = 3,
                 reconnect_delay: float = 0.3, operation_delay: float = 0.0,
                 state_dir: str | None = None, sleep: Callable[[float], None] = time.sleep,
                 tree: TreeMode | str | None = None, frames: str | None = None) -> None:
        self.link = AdbLink(serial, host, port, socket_timeout=socket_timeout, command_timeout=command_timeout,
                            reconnect_attempts=reconnect_attempts, reconnect_delay=reconnect_delay, sleep=sleep)
        self.operation_delay = operation_delay
        self._sleep = sleep
        self.typer = TextTyper(self, lambda: self.focused_text(), state_dir=state_dir, operation_delay=operation_delay,
                               sleep=sleep, reads_at_once=self.tree_is_cheap)
        self._rom: Rom | None = None
        self._size: tuple[int, int] | None = None
        self._packages: set[str] | None = None
        self._cmd_input: bool | None = None
        self.last_screenshot: ScreenshotMetadata | None = None
        self.dumper = UiDumper(self.link, sleep=sleep)
        self.tree = FastTree(self.link, tree or default_mode(), holder_of=self.dumper.find_holder, sleep=sleep)
        self.dumper.fast = self.tree
        self._frames_when_read = (frames or default_frames()) == "needed"
        self.frames = FrameGrabber(self.link, self._default_display, shot=self.tree.shot, shot_ready=self.tree.ready)
        self.screen_state = ScreenState(self.link, self.window_size, serial=serial or "", sleep=sleep)
        self.launcher = AppLauncher(self.shell, self._act, lambda: self.serial)
        # facts asked side by side (`warm_session`): one try each, a failure is the caller's own ask again
        self.ahead = Ahead(lambda argv: self.link.shell(argv, retry=False))

    @property
    def serial(self) -> str:
        return self.link.serial

    # ---------------------------------------------------------------- connection
    def connect(self) -> ADBController:
        """Find the device (and ``adb connect`` a Wi-Fi ``ip:port`` serial); restore a stale IME."""
        self.link.guard(self.link.resolve)
        self.typer.recover_stale_ime()
        return self

    def shell(self, args: Sequence[object] | str, timeout: float | None = None) -> str:
        """Run a shell command; a list is quoted argument by argument (the safe form). A refusal (`refusals`: a
        SecurityException from ``input``, ``ime``, ``am``, ``monkey``, ``pm``, ``settings``) raises `PhoneRefused`,
        naming the switch to flip on this phone's ROM."""
        out = self.ahead.take(args)
        if out is None:
            out = self.link.shell(args, timeout)
        refusal = refusals.read(args, out)
        if refusal is not None:
            raise refusals.error(refusal, self.rom(), self.serial)
        return out

    def rom(self) -> Rom:
        """The phone's ROM and Android version, from one ``getprop`` (read once)."""
        if self._rom is None:
            self._rom = rom_of(parse_getprop(self.shell(["getprop"])))
        return self._rom

    def close(self) -> None:
        """Restore the input method that was active before we switched to ADBKeyboard."""
        self.ahead.close()
        attempts, self.link.reconnect_attempts = self.link.reconnect_attempts, 0  # at exit: one quick try
        try:
            self.typer.restore()
        finally:
            self.link.reconnect_attempts = attempts

    def __enter__(self) -> ADBController:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- screen
    def window_size(self) -> tuple[int, int]:
        """(width, height) of the display as it is turned now: ``wm size`` (override first, then physical) gives the
        natural, portrait size; the rotation from ``dumpsys display`` turns it (R9). A frame of another size corrects
        it."""
        if self._size is None:
            out = self.shell(["wm", "size"])
            m = re.search(r"Override size:\s*(\d+)x(\d+)", out) or re.search(r"Physical size:\s*(\d+)x(\d+)", out)
            if not m:
                raise DeviceError(f"could not read the screen size (`wm size` said {out[:120]!r})", serial=self.serial)
            w, h = int(m.group(1)), int(m.group(2))
            turned = screen_state.rotation(self.shell(["dumpsys", "display"])) % 2
            self._size = (h, w) if turned else (w, h)
        return self._size

    def _default_display(self) -> str | None:
        sf = self.shell(["dumpsys", "SurfaceFlinger", "--display-id"])
        if len(screen_state.display_ids(sf)) < 2:
            return None
        return screen_state.default_display(sf, self.shell(["dumpsys", "display"]))

    def frame(self, *, allow_uniform: bool = False) -> np.ndarray:
        """The screen as the BGR array the locator works on, decoded once (`frames.FrameGrabber`).

        A black or single-colour frame, or an app area that is black under the bars (a
        FLAG_SECURE layer, R8), raises `SecureScreen` unless ``allow_uniform``; a phone found
        asleep is woken (and a lock without a PIN swiped away) and captured once more.
        """
        started = time.perf_counter()
        bgr = self.frames.grab()
        if not allow_uniform and secure_app_area(bgr) and not self.screen_state.lock().ready:
            self.wake_and_unlock()   # asleep (black) or on the lock screen: make it usable, then look again
            bgr = self.frames.grab()
        h, w = bgr.shape[:2]
        if self._size != (w, h):
            self._size = (w, h)       # the frame is the truth (a phone turned since we asked)
        self.last_screenshot = ScreenshotMetadata(timestamp=time.time(), width=w, height=h,
                                                  elapsed_ms=(time.perf_counter() - started) * 1000)
        if not allow_uniform:
            refuse_unusable(bgr, self.serial)
        return bgr

    def screenshot(self, *, allow_uniform: bool = False) -> Image.Image:
        """The screen as an RGB PIL image (made from `frame`); `SecureScreen` as there."""
        return to_pil(self.frame(allow_uniform=allow_uniform))

    def link_report(self) -> LinkReport:
        """What a screenshot costs on this connection and the wire format chosen (after the first capture)."""
        return self.frames.report

    def dump_hierarchy(self) -> str:
        """A fresh ``uiautomator dump`` of the active window, retried on its known errors (`dump.UiDumper`)."""
        return self.dumper.dump()

    def recent_dump(self, max_age_s: float) -> DumpRecord | None:
        """The last dump, if nothing that can change the screen has run since it began and it is recent."""
        return self.dumper.recent(max_age_s, count=False)   # the caller counts what it reuses

    def dump_underway(self) -> tuple[int, float] | None:
        """The running dump's screen count and start (`time.monotonic`), None when none runs."""
        return self.dumper.underway

    def screen_changes(self) -> int:
        """Commands sent that may have changed the app's screen (not the keyboard's choice: `AdbLink.acted`)."""
        return self.link.acted

    def warm_session(self) -> None:
        """At a run's start, beside its first commands: start the resident tree server (`fast_tree.FastTree.warm`),
        and ask the facts a run reads once side by side (the size, the ROM, the packages, the displays: `ahead`);
        what fails there is met again where it is needed."""
        self.tree.warm()
        unknown = {("wm", "size"): self._size, ("dumpsys", "display"): self._size, ("getprop",): self._rom,
                   ("pm", "list", "packages"): self._packages,
                   ("dumpsys", "SurfaceFlinger", "--display-id"): self.frames.display_read or None}
        self.ahead.ask([list(command) for command, known in unknown.items() if known is None])

    def expect(self, packages: Sequence[str], texts: Sequence[str]) -> None:
        """A plan's steps are known, its first is next: ask ahead the launcher activities of the apps it opens.
        With the tree server, also time the frame link (`frames.FrameGrabber.warm`, once the server answers:
        beside the first step rather than before its first frame) and, when the plan types, get the keyboard
        ready for its first text on a thread of its own (`text_input.TextTyper.prepare`: read what the phone
        has, switch to ADBKeyboard) rather than in a later step's wait. With ``uiautomator dump`` neither: the
        dump taken during a launch's wait would be made stale by the keyboard's switch, and the link's timing
        would share the host with that dump (the first frame times it, as before)."""
        self.ahead.ask([self.launcher.resolve_command(p) for p in packages
                        if re.fullmatch(r"[A-Za-z][\w.]*", p) and not self.launcher.known(p)])
        if not self.tree.cheap:
            return
        self.frames.warm()
        if texts:
            threading.Thread(target=self.typer.prepare, args=(texts[0],), name="keyboard-ahead", daemon=True).start()

    def tree_is_cheap(self) -> bool:
        """A fresh tree comes from the resident server (or will: it has not been tried yet)."""
        return self.tree.cheap

    def frames_when_read(self) -> bool:
        """With cheap trees, a screen's frame is taken when something reads its pixels (``--frames needed``)."""
        return self._frames_when_read and self.tree.cheap

    def tree_answers_now(self, within: float = 0.0) -> bool:
        """The resident server answers now: started, not still starting (a read would not wait for it);
        ``within``: a server still starting is waited for this long at most."""
        if within > 0:
            self.tree.ready(within)
        return self.tree.answering

    def dump_stats(self) -> DumpStats:
        self.dumper.stats.tree = self.tree.report.to_dict()
        return self.dumper.stats

    def focused_text(self, field_reader: FieldRead | None = None) -> str | None:
        """Text of the focused field, read back from the UI dump (`dump.UiDumper.focused_text`)."""
        return self.dumper.focused_text(field_reader)

    def wake_and_unlock(self) -> list[str]:
        """Wake the phone and swipe away a lock screen without a PIN; `ScreenLocked` when a PIN is set."""
        return self.screen_state.wake_and_unlock()

    # ---------------------------------------------------------------- input
    def _point(self, x: float, y: float) -> tuple[int, int]:
        w, h = self.window_size()
        try:
            xi, yi = int(round(x)), int(round(y))
        except (TypeError, ValueError, OverflowError) as exc:
            raise ActionError(f"bad coordinates ({x!r}, {y!r})") from exc
        if not (0 <= xi < w and 0 <= yi < h):
            raise ActionError(f"point ({xi}, {yi}) is outside the screen {w}x{h}")
        return xi, yi

    def _act(self, args: Sequence[Any]) -> str:
        out = self.shell([str(a) for a in args])
        if self.operation_delay:
            self._sleep(self.operation_delay)
        return out

    def _input(self) -> list[str]:
        """``cmd input`` on Android 11+ (one binder call), else ``input`` (an app_process start per call, R11)."""
        if self._cmd_input is None:
            self._cmd_input = self.rom().sdk >= CMD_INPUT_SDK
        return ["cmd", "input"] if self._cmd_input else ["input"]

    def _inject(self, args: Sequence[Any]) -> str:
        out = self._act([*self._input(), *args])
        if self._cmd_input and ("No shell command implementation" in out or "Can't find service" in out):
            self._cmd_input = False       # a ROM without InputShellCommand: the `input` program it is
            out = self._act(["input", *args])
        return out

    def tap(self, x: float, y: float) -> None:
        self._inject(["tap", *self._point(x, y)])

    def double_tap(self, x: float, y: float) -> bool:
        """Two taps inside Android's double-tap window, in one shell command; False when this phone cannot
        (before Android 11 every `input` starts an app_process of 0.2-1 s: the two taps land too far apart)."""
        px, py = self._point(x, y)
        one = shlex.join([*self._input(), "tap", str(px), str(py)])
        self._act_line(f"{one}; sleep {DOUBLE_TAP_GAP_S}; {one}")
        return bool(self._cmd_input)

    def _act_line(self, line: str) -> str:
        out = self.shell(line)
        if self.operation_delay:
            self._sleep(self.operation_delay)
        return out

    def long_press(self, x: float, y: float, duration_ms: int = 800) -> None:
        px, py = self._point(x, y)
        self._inject(["swipe", px, py, px, py, max(1, int(duration_ms))])

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None:
        self._inject(["swipe", *self._point(x1, y1), *self._point(x2, y2), max(1, int(duration_ms))])

    def swipe_direction(self, direction: str, distance: float = 0.5, duration_ms: int = 300) -> None:
        """Move the finger ``up``/``down``/``left``/``right`` across the middle of the screen.

        ``left`` shows the next launcher page; ``up`` scrolls a list towards its end.
        """
        self.swipe(*swipe_vector(direction, self.window_size(), distance), duration_ms=duration_ms)

    def input_text(self, text: str, *, clear: bool = False, verify: bool = False,
                   before: str | None = None, field_reader: FieldRead | None = None) -> bool:
        """Type into the focused field (ADBKeyboard for any language, else ASCII ``input text``).

        ``before``: what the field holds, when the caller already knows it from a UI tree (no read).
        ``field_reader``: reads the field on the screen when the read-back's UI dump fails (`focused_text`).
        """
        read = None if field_reader is None else (lambda: self.focused_text(field_reader))
        return self.typer.type(text, clear=clear, verify=verify, before=before, read_field=read)

    def clear_text(self) -> None:
        self.typer.clear()

    def has_adbkeyboard(self) -> bool:
        return self.typer.has_adbkeyboard()

    def current_ime(self) -> str:
        return self.typer.current_ime()

    def input_keyevent(self, key: int | str) -> None:
        self._inject(["keyevent", keycode(key)])

    def press_home(self) -> None:
        self.input_keyevent("HOME")

    def press_back(self) -> None:
        self.input_keyevent("BACK")

    def go_home(self) -> None:
        """HOME twice: the first may only return to an app's own start page."""
        self.press_home()
        self._sleep(0.3)
        self.press_home()
        self._sleep(0.5)

    def launch_app(self, package: str) -> None:
        """Open ``package`` as its launcher icon does (`launching.AppLauncher`)."""
        if not package or not re.fullmatch(r"[A-Za-z][\w.]*", package):
            raise ActionError(f"bad package name {package[:60]!r}")
        self.launcher.launch(package)

    def open_url(self, url: str) -> None:
        if not url or any(c in url for c in "\n\r"):
            raise ActionError(f"bad URL {url!r}")
        self._act(["am", "start", "-a", "android.intent.action.VIEW", "-d", url])

    def call(self, number: str) -> None:
        if not re.fullmatch(r"\+?[\d*#,; -]{1,32}", number or ""):
            raise ActionError(f"bad phone number {number!r}")
        self._act(["am", "start", "-a", "android.intent.action.CALL", "-d", "tel:" + number.replace(" ", "")])

    def installed_packages(self) -> set[str]:
        """Every package on the phone (``pm list packages``), read once per connection."""
        if self._packages is None:
            out = self.shell(["pm", "list", "packages"])
            self._packages = {line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("package:")}
        return self._packages

    def app_version(self, package: str) -> str | None:
        """The installed ``versionName`` of ``package`` (``dumpsys package``: ``    versionName=8.0.47``), or None."""
        m = re.search(r"^\s*versionName=(\S+)", self.shell(["dumpsys", "package", package]), re.MULTILINE)
        return m.group(1) if m else None

    def volume(self) -> Volume | None:
        """The media volume now (``dumpsys audio``, `remote.core.device.audio`), None when the phone does not say."""
        return music_volume(self.shell(["dumpsys", "audio"]))

    def current_app(self) -> dict[str, str]:
        """``{"package": …, "activity": …}`` in front on the default display (empty strings if none).

        With two displays the default display's own focus line is read (a Flip's cover screen comes first,
        R5); the lock screen or the notification shade in front reads as ``com.android.systemui``.
        """
        package, activity = screen_state.focus(self.shell(["dumpsys", "window"]), 0)
        return {"package": package, "activity": activity}

    # ---------------------------------------------------------------- info
    def keyboard_shown(self) -> bool | None:
        """Is the soft keyboard up (``dumpsys input_method``)? None when the phone does not say."""
        return screen_state.keyboard_shown(self.shell(["dumpsys", "input_method"]))

    def prepare_typing(self, text: str) -> None:
        """Make the keyboard ready to type ``text`` (`TextTyper.prepare`), while a step would only wait."""
        self.typer.prepare(text)

    def getprop(self, name: str) -> str:
        return self.shell(["getprop", name]).strip()

    list_devices = staticmethod(transport.list_devices)
    list_serials = staticmethod(transport.list_serials)
