"""ADBController: the executor. Every phone action goes through here, over adbutils.

This is the one boundary where adbutils' errors (``AdbError``, ``AdbTimeout``,
``AdbConnectionError``) and socket errors (``ConnectionResetError``, ``EOFError``,
timeouts) become ours (`remote.errors`). A dropped link is retried a bounded
number of times (re-resolving the device, ``adb connect`` again for ``ip:port``)
before `DeviceDisconnected`.

Shell commands are built from lists and quoted with ``shlex.join``: typing
``"; reboot; echo "`` types those characters and runs nothing. Services are
opened with adbutils' public connection API and read into one ``bytearray``
(adbutils' own ``read_until_close`` is quadratic on a 10 MB frame, and its
``screenshot()`` returns a black image on decode errors).
"""

from __future__ import annotations

import atexit
import logging
import re
import shlex
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from xml.etree import ElementTree

import adbutils
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout
from PIL import Image

from remote.core.device import ime as adb_ime
from remote.core.device.capture import CaptureDecodeError, decode_png, decode_raw, frame_uniformity
from remote.core.device.text_input import TextInput
from remote.errors import (
    ActionError,
    DeviceCommandError,
    DeviceDisconnected,
    DeviceError,
    DeviceNotFound,
    SecureScreen,
)
from remote.records import ScreenshotMetadata

logger = logging.getLogger(__name__)
T = TypeVar("T")

KEYCODES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "END_CALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20,
    "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25,
    "POWER": 26, "CAMERA": 27, "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82,
    "SEARCH": 84, "MEDIA_PLAY_PAUSE": 85, "PAGE_UP": 92, "PAGE_DOWN": 93, "ESCAPE": 111,
    "FORWARD_DEL": 112, "MOVE_HOME": 122, "MOVE_END": 123, "VOLUME_MUTE": 164, "APP_SWITCH": 187,
    "WAKEUP": 224, "SLEEP": 223,
}
DUMP_PATH = "/data/local/tmp/remote_uidump.xml"
_TRANSIENT_ADB = ("not found", "offline", "Unknown data: b''", "connection closed", "closed",
                  "no device with transport id", "no devices/emulators found")


def keycode(key: int | str) -> int:
    """``66``, ``"ENTER"``, ``"enter"`` and ``"KEYCODE_ENTER"`` all give 66."""
    if isinstance(key, int) and not isinstance(key, bool):
        if 0 <= key <= 400:
            return key
        raise ActionError(f"key code {key} is out of range")
    name = str(key).strip().upper().removeprefix("KEYCODE_")
    if name.isdigit():
        return keycode(int(name))
    if name not in KEYCODES:
        raise ActionError(f"unknown key {key!r}", hint=f"use a key code number or one of {', '.join(KEYCODES)}")
    return KEYCODES[name]


class ADBController(TextInput):
    """One phone, through an adb server (a real one, or the simulated phone's).

    >>> adb = ADBController("emulator-5554").connect()      # doctest: +SKIP
    >>> adb.tap(540, 1200); adb.input_text("你好")             # doctest: +SKIP
    """

    def __init__(self, serial: str | None = None, host: str = "127.0.0.1", port: int = 5037, *,
                 socket_timeout: float = 10.0, command_timeout: float = 30.0, reconnect_attempts: int = 3,
                 reconnect_delay: float = 0.3, operation_delay: float = 0.0,
                 state_dir: str | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.serial = serial or ""
        self.host, self.port = host, port
        self.command_timeout = command_timeout
        self.reconnect_attempts = max(0, reconnect_attempts)
        self.reconnect_delay = reconnect_delay
        self.operation_delay = operation_delay
        self._sleep = sleep
        self._state_dir = state_dir
        self._client = adbutils.AdbClient(host=host, port=port, socket_timeout=socket_timeout)
        self._device: adbutils.AdbDevice | None = None
        self._size: tuple[int, int] | None = None
        self._adbkeyboard: bool | None = None
        self._previous_ime: str | None = None
        self._ime_switched = False
        self._atexit = False
        self.last_screenshot: ScreenshotMetadata | None = None

    # ---------------------------------------------------------------- connection
    def connect(self) -> ADBController:
        """Find the device (and ``adb connect`` a Wi-Fi ``ip:port`` serial); restore a stale IME."""
        self._guard(self._resolve)
        self._recover_stale_ime()
        return self

    def _resolve(self) -> None:
        if self.serial and ":" in self.serial and not self.serial.startswith("emulator"):
            reply = self._client.connect(self.serial, timeout=5)
            if "connected" not in reply or "failed" in reply or "cannot" in reply:
                raise DeviceNotFound(f"could not connect to {self.serial}: {reply.strip()}", serial=self.serial,
                                     hint="check the phone's IP and port, that it is on the same network, and "
                                          "that wireless debugging is on (`adb tcpip 5555` over USB first)")
        infos = [i for i in self._client.list(extended=True) if i.state == "device"]
        if self.serial:
            match = [i for i in infos if i.serial == self.serial]
            if not match:
                seen = ", ".join(i.serial for i in infos) or "none"
                raise DeviceNotFound(f"device {self.serial!r} not found (connected: {seen})", serial=self.serial,
                                     hint="check `python -m remote devices`; accept the USB debugging prompt on "
                                          "the phone")
            info = match[0]
        elif len(infos) == 1:
            info = infos[0]
        elif not infos:
            raise DeviceNotFound("no device connected",
                                 hint="plug the phone in with USB debugging on, or try the simulated phone: "
                                      "--device sim")
        else:
            raise DeviceNotFound(f"{len(infos)} devices connected ({', '.join(i.serial for i in infos)})",
                                 hint="choose one with --device SERIAL or ADB_SERIAL")
        self.serial = info.serial
        tid = (info.tags or {}).get("transport_id")
        # A transport id skips adbutils' extra `host:version` round trip on every command.
        self._device = (self._client.device(transport_id=int(tid)) if tid and tid.isdigit()
                        else self._client.device(self.serial))

    @property
    def device(self) -> adbutils.AdbDevice:
        if self._device is None:
            self.connect()
        assert self._device is not None
        return self._device

    def _guard(self, fn: Callable[[], T]) -> T:
        """Run ``fn``; map foreign errors to ours, reconnecting a bounded number of times."""
        last: BaseException | None = None
        for attempt in range(self.reconnect_attempts + 1):
            if attempt:
                self._sleep(self.reconnect_delay * attempt)
                self._device = None
                try:
                    self._resolve()
                except DeviceNotFound as exc:
                    last = exc
                    continue
                except (AdbError, OSError, EOFError) as exc:
                    last = exc
                    continue
            try:
                return fn()
            except DeviceError:
                raise
            except (AdbTimeout, AdbConnectionError) as exc:
                last = exc
            except AdbError as exc:
                text = str(exc)
                if "unauthorized" in text:
                    raise DeviceError(f"device {self.serial} is unauthorized", serial=self.serial,
                                      hint="unlock the phone and accept the 'Allow USB debugging' prompt") from exc
                if not any(marker in text for marker in _TRANSIENT_ADB):
                    raise DeviceCommandError(f"adb refused the request: {text}", serial=self.serial) from exc
                last = exc
            except (OSError, EOFError) as exc:  # ConnectionResetError, BrokenPipeError, socket.timeout, ...
                last = exc
            logger.warning("adb link to %s failed (%s); reconnecting (%d/%d)", self.serial or "device",
                           last, attempt + 1, self.reconnect_attempts)
        raise DeviceDisconnected(f"lost the connection to {self.serial or 'the device'}: {last}",
                                 serial=self.serial,
                                 hint="check the USB cable or Wi-Fi, then `python -m remote devices`; for Wi-Fi "
                                      "ADB run `adb connect IP:PORT` again") from last

    def _service(self, service: str, timeout: float | None = None) -> bytearray:
        """Open a device service (``shell:…``, ``exec:…``) and read its output until it closes."""
        def run() -> bytearray:
            conn = self.device.open_transport(timeout=timeout or self.command_timeout)
            try:
                conn.send_command(service)
                conn.check_okay()
                sock = conn.conn
                buf = bytearray()
                while True:
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        return buf
                    buf += chunk
            finally:
                # The device closed first; skip adbutils' shutdown-and-sleep close (10 ms per call).
                try:
                    conn.conn.close()
                except (OSError, AdbError):
                    pass
        return self._guard(run)

    def shell(self, args: Sequence[str] | str, timeout: float | None = None) -> str:
        """Run a shell command. A list is quoted argument by argument (the safe form)."""
        cmd = args if isinstance(args, str) else shlex.join(str(a) for a in args)
        out = self._service("shell:" + cmd, timeout).decode("utf-8", errors="replace")
        logger.debug("shell %s -> %d chars", cmd[:120], len(out))
        return out.rstrip("\r\n")

    def close(self) -> None:
        """Restore the input method that was active before we switched to ADBKeyboard."""
        if self._atexit:
            atexit.unregister(self.close)
            self._atexit = False
        if not self._ime_switched:
            return
        attempts, self.reconnect_attempts = self.reconnect_attempts, 0  # at exit: one quick try
        try:
            if self._previous_ime:
                self.shell(["ime", "set", self._previous_ime], timeout=5)
                logger.info("restored input method %s", self._previous_ime)
            adb_ime.ImeStateFile(self.serial, self._state_dir).clear()
        except DeviceError as exc:
            # The state file stays, so the next start restores it.
            logger.warning("could not restore input method %s now: %s", self._previous_ime, exc)
        finally:
            self.reconnect_attempts = attempts
            self._ime_switched = False

    def __enter__(self) -> ADBController:
        return self.connect()

    def __exit__(self, *exc: Any) -> None:
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
            img = decode_raw(self._service("exec:screencap"))
        except CaptureDecodeError as exc:
            logger.info("raw screencap unusable (%s); trying PNG", exc)
            try:
                img = decode_png(bytes(self._service("exec:screencap -p")))
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
                         timeout=max(self.command_timeout, 20))
        start = out.find("<?xml")
        if start < 0 or "ERROR" in out[: max(start, 0)] or "</hierarchy>" not in out:
            message = out[:300].strip() or "no output"
            hint = ("the screen never went idle (animation, video): retry on a still screen"
                    if "idle" in message else "another UiAutomation client (uiautomator2, Appium) may be running")
            raise DeviceCommandError(f"uiautomator dump failed: {message}", command="uiautomator dump",
                                     output=out[:2000], serial=self.serial, hint=hint)
        return out[start:]

    def focused_text(self) -> str | None:
        """Text of the focused field, read back from the UI dump (None when nothing is focused)."""
        root = ElementTree.fromstring(self.dump_hierarchy().encode("utf-8"))
        focused = [n for n in root.iter("node") if n.get("focused") == "true"]
        return focused[-1].get("text", "") if focused else None

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
            raise ActionError(f"bad package name {package!r}")
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
        """Serial, model, resolution and ADBKeyboard presence (for `remote devices`)."""
        w, h = self.window_size()
        return {"serial": self.serial, "model": self.getprop("ro.product.model"), "resolution": f"{w}x{h}",
                "adbkeyboard": self.has_adbkeyboard()}

    @staticmethod
    def list_serials(host: str = "127.0.0.1", port: int = 5037, socket_timeout: float = 5.0) -> list[str]:
        client = adbutils.AdbClient(host=host, port=port, socket_timeout=socket_timeout)
        try:
            return [i.serial for i in client.list() if i.state == "device"]
        except (TimeoutError, AdbError, OSError) as exc:
            raise DeviceError(f"no adb server answers on {host}:{port}: {exc}",
                              hint="start one with `adb start-server`, or try `python -m remote sim`") from exc
