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
import time
from collections.abc import Callable, Sequence
from typing import Any
from xml.etree import ElementTree

from adbutils.errors import AdbError
from PIL import Image

from remote.core.device import refusals, states
from remote.core.device.capture import CaptureDecodeError, decode_png, decode_raw, frame_uniformity
from remote.core.device.keys import KEYCODES, keycode
from remote.core.device.rom import Rom, parse_getprop
from remote.core.device.rom import detect as rom_of
from remote.core.device.text_input import TextTyper
from remote.core.device.transport import AdbLink, NoSpawnClient, no_server, server_answers
from remote.core.records import ScreenshotMetadata
from remote.errors import ActionError, DeviceCommandError, DeviceError, SecureScreen

__all__ = ["ADBController", "KEYCODES", "keycode"]

logger = logging.getLogger(__name__)
DUMP_PATH = "/data/local/tmp/remote_uidump.xml"


class ADBController:
    """One phone, through an adb server (a real one, or the simulated phone's).

    >>> adb = ADBController("emulator-5554").connect()      # doctest: +SKIP
    >>> adb.tap(540, 1200); adb.input_text("你好")             # doctest: +SKIP
    """

    def __init__(self, serial: str | None = None, host: str = "127.0.0.1", port: int = 5037, *,
                 socket_timeout: float = 10.0, command_timeout: float = 30.0, reconnect_attempts: int = 3,
                 reconnect_delay: float = 0.3, operation_delay: float = 0.0,
                 state_dir: str | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.link = AdbLink(serial, host, port, socket_timeout=socket_timeout, command_timeout=command_timeout,
                            reconnect_attempts=reconnect_attempts, reconnect_delay=reconnect_delay, sleep=sleep)
        self.operation_delay = operation_delay
        self._sleep = sleep
        self.typer = TextTyper(self, self.focused_text, state_dir=state_dir, operation_delay=operation_delay,
                               sleep=sleep)
        self._rom: Rom | None = None
        self._size: tuple[int, int] | None = None
        self._packages: set[str] | None = None
        self.last_screenshot: ScreenshotMetadata | None = None

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
        """Run a shell command. A list is quoted argument by argument (the safe form).

        A refusal (`refusals`: ``input``, ``ime``, ``am``, ``monkey``, ``pm``, ``settings`` answering a
        SecurityException) raises `PhoneRefused`, naming the switch to flip on this phone's ROM.
        """
        out = self.link.shell(args, timeout)
        refusal = refusals.read(args, out)
        if refusal is not None:
            raise refusals.error(refusal, self.rom(), self.serial)
        return out

    def rom(self) -> Rom:
        """The phone's ROM and Android version, from one ``getprop`` (read once)."""
        if self._rom is None:
            self._rom = rom_of(parse_getprop(self.link.shell(["getprop"])))
        return self._rom

    def close(self) -> None:
        """Restore the input method that was active before we switched to ADBKeyboard."""
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
        """(width, height) in pixels: ``wm size`` override first, then physical."""
        if self._size is None:
            out = self.shell(["wm", "size"])
            m = re.search(r"Override size:\s*(\d+)x(\d+)", out) or re.search(r"Physical size:\s*(\d+)x(\d+)", out)
            if not m:
                raise DeviceCommandError("could not read the screen size", command="wm size", output=out,
                                         serial=self.serial)
            self._size = (int(m.group(1)), int(m.group(2)))
        return self._size

    def screenshot(self, *, allow_uniform: bool = False) -> Image.Image:
        """The screen as an RGB image; raw ``screencap`` first, PNG as the fallback.

        A black or single-colour frame raises `SecureScreen` (FLAG_SECURE windows
        capture as black) unless ``allow_uniform``: it is never passed on silently.
        """
        started = time.perf_counter()
        try:
            img = decode_raw(self.link.service("exec:screencap"))
        except CaptureDecodeError as exc:
            logger.info("raw screencap unusable (%s); trying PNG", exc)
            try:
                img = decode_png(bytes(self.link.service("exec:screencap -p")))
            except CaptureDecodeError as exc2:
                raise DeviceCommandError(f"screen capture failed: {exc2}", command="screencap",
                                         serial=self.serial) from exc2
        self._size = self._size or img.size
        self.last_screenshot = ScreenshotMetadata(timestamp=time.time(), width=img.width, height=img.height,
                                                  elapsed_ms=(time.perf_counter() - started) * 1000)
        if not allow_uniform:
            flat, colour = frame_uniformity(img)
            if flat:
                what = "black" if max(colour) < 16 else f"a single colour {colour}"
                raise SecureScreen(f"the screenshot is {what}: a secure window (FLAG_SECURE) or a failed capture",
                                   serial=self.serial,
                                   hint="the UI tree still works on secure screens; if every app is black, "
                                        "the capture itself fails: unlock the phone and retry")
        return img

    def dump_hierarchy(self) -> str:
        """The ``uiautomator dump`` XML of the current screen (one shell call: dump, then cat)."""
        out = self.shell(f"rm -f {DUMP_PATH}; uiautomator dump {DUMP_PATH}; cat {DUMP_PATH}",
                         timeout=max(self.link.command_timeout, 20))
        start = out.find("<?xml")
        if start < 0 or "ERROR" in out[: max(start, 0)] or "</hierarchy>" not in out:
            message = out[:300].strip() or "no output"
            hint = ("the screen never went idle (animation, video): retry on a still screen"
                    if "idle" in message else "the dump did not complete: retry; if it keeps failing, another "
                    "UiAutomation client (uiautomator2, Appium) may hold the phone's accessibility service")
            raise DeviceCommandError(f"uiautomator dump failed: {message}", command="uiautomator dump",
                                     output=out[:2000], serial=self.serial, hint=hint)
        return out[start:]

    def focused_text(self) -> str | None:
        """Text of the focused field, read back from the UI dump (None when nothing is focused).

        An empty field's dump shows its hint as its text (``getTextForAccessibility``); when the dump also
        carries the hint (newer Androids), that text is read as empty.
        """
        root = ElementTree.fromstring(self.dump_hierarchy().encode("utf-8"))
        focused = [n for n in root.iter("node") if n.get("focused") == "true"]
        if not focused:
            return None
        node = focused[-1]
        text, hint = node.get("text", ""), node.get("hint")
        return "" if hint and text == hint else text

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

    def tap(self, x: float, y: float) -> None:
        self._act(["input", "tap", *self._point(x, y)])

    def long_press(self, x: float, y: float, duration_ms: int = 800) -> None:
        px, py = self._point(x, y)
        self._act(["input", "swipe", px, py, px, py, max(1, int(duration_ms))])

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None:
        self._act(["input", "swipe", *self._point(x1, y1), *self._point(x2, y2), max(1, int(duration_ms))])

    def swipe_direction(self, direction: str, distance: float = 0.5, duration_ms: int = 300) -> None:
        """Move the finger ``up``/``down``/``left``/``right`` across the middle of the screen.

        ``left`` shows the next launcher page; ``up`` scrolls a list towards its end.
        """
        w, h = self.window_size()
        cx, cy = w // 2, h // 2
        dx, dy = int(w * distance / 2), int(h * distance / 2)
        vectors = {"up": (cx, cy + dy, cx, cy - dy), "down": (cx, cy - dy, cx, cy + dy),
                   "left": (cx + dx, cy, cx - dx, cy), "right": (cx - dx, cy, cx + dx, cy)}
        if direction not in vectors:
            raise ActionError(f"unknown swipe direction {direction!r}", hint="use up, down, left or right")
        self.swipe(*vectors[direction], duration_ms=duration_ms)

    def input_text(self, text: str, *, clear: bool = False, verify: bool = False) -> bool:
        """Type into the focused field (ADBKeyboard for any language, else ASCII ``input text``)."""
        return self.typer.type(text, clear=clear, verify=verify)

    def clear_text(self) -> None:
        self.typer.clear()

    def has_adbkeyboard(self) -> bool:
        return self.typer.has_adbkeyboard()

    def current_ime(self) -> str:
        return self.typer.current_ime()

    def input_keyevent(self, key: int | str) -> None:
        self._act(["input", "keyevent", keycode(key)])

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
        if not package or not re.fullmatch(r"[A-Za-z][\w.]*", package):
            raise ActionError(f"bad package name {package[:60]!r}")
        out = self._act(["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1"])
        if "No activities found" in out or "not found" in out.lower():
            raise DeviceCommandError(f"app {package} is not installed or has no launcher activity",
                                     command="monkey", output=out, serial=self.serial)

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

    def current_app(self) -> dict[str, str]:
        """``{"package": …, "activity": …}`` of the focused window (empty strings if none)."""
        out = self.shell(["dumpsys", "window"])
        m = (re.search(r"mCurrentFocus=Window\{[^}]*?\s([\w.]+)/([\w.$]+)\}", out)
             or re.search(r"mFocusedApp=.*?\s([\w.]+)/([\w.$]+)", out))
        return {"package": m.group(1), "activity": m.group(2)} if m else {"package": "", "activity": ""}

    # ---------------------------------------------------------------- info
    def getprop(self, name: str) -> str:
        return self.shell(["getprop", name]).strip()

    def info(self) -> dict[str, Any]:
        """What `remote devices` shows: serial, model, Android, ROM, resolution, ADBKeyboard's state.

        Read without any command a phone may refuse (no ``ime``, no ``input``).
        """
        w, h = self.window_size()
        rom = self.rom()
        build, keyboards = self.typer.build(), self.typer.keyboards()
        keyboard = ("current" if keyboards.adbkeyboard_current else "enabled" if keyboards.adbkeyboard_enabled
                    else "installed, not enabled") if build.installed else "not installed"
        return {"serial": self.serial, "state": "device", "model": self.getprop("ro.product.model"),
                "android": rom.android, "rom": rom.name, "resolution": f"{w}x{h}",
                "adbkeyboard": build.installed, "keyboard": keyboard}

    @staticmethod
    def list_devices(host: str = "127.0.0.1", port: int = 5037, socket_timeout: float = 5.0) -> list[tuple[str, str]]:
        """``(serial, state)`` of every phone an adb server lists, ready or not (`states`)."""
        if not server_answers(host, port):
            raise no_server(host, port)
        client = NoSpawnClient(host=host, port=port, socket_timeout=socket_timeout)
        try:
            return [(i.serial, states.normalise(i.state)) for i in client.list()]
        except (TimeoutError, AdbError, OSError) as exc:
            raise DeviceError(f"the adb server on {host}:{port} did not answer: {exc}",
                              hint="restart it with `adb kill-server; adb start-server`") from exc

    @staticmethod
    def list_serials(host: str = "127.0.0.1", port: int = 5037, socket_timeout: float = 5.0) -> list[str]:
        """Serials of the ready phones an adb server sees (DeviceNotFound when no server answers)."""
        return [serial for serial, state in ADBController.list_devices(host, port, socket_timeout)
                if state == states.READY]
