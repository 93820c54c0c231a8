"""The ADB link to one phone: finding it, running a service, reconnecting a bounded number of times.

This is the one boundary where adbutils' errors (``AdbError``, ``AdbTimeout``,
``AdbConnectionError``) and socket errors (``ConnectionResetError``, ``EOFError``,
timeouts) become ours (`remote.errors`). A dropped link is retried a bounded
number of times (re-resolving the device, ``adb connect`` again for ``ip:port``)
before `DeviceDisconnected`.

adbutils starts ``adb start-server`` by itself when nothing answers on the port,
and leaves that server running; `AdbLink` never does: no answer on the port is
`DeviceNotFound` with what to start.

Shell commands are built from lists and quoted with ``shlex.join``: typing
``"; reboot; echo "`` types those characters and runs nothing. Services are
read into one ``bytearray`` (adbutils' own ``read_until_close`` is quadratic on a
10 MB frame).
"""

from __future__ import annotations

import logging
import re
import shlex
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import adbutils
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from remote.core.device import states
from remote.errors import DeviceCommandError, DeviceDisconnected, DeviceError, DeviceNotFound

logger = logging.getLogger(__name__)
T = TypeVar("T")

# Commands that only read: everything else may change the screen and moves `AdbLink.generation` on.
_READS_ONLY = re.compile(r"^(?:rm -f /data/local/tmp/remote_uidump|(?:screencap|uiautomator dump|dumpsys|getprop|"
                         r"settings get|wm (?:size|density)|pm (?:list|path)|cmd package resolve-activity|ime list|ps|cat|ls|echo|id|"
                         r"sleep|head|toybox md5sum|md5)\b)")
# Choosing the keyboard (ADBKeyboard's setup ahead of typing, on a thread of its own; its restore): moves
# `generation` on, not `acted`: it may redraw a keyboard that is up, not what a step did to the app's screen.
_KEYBOARD_CHOICE = re.compile(r"^ime (?:enable|set)\b")
READY_POLLS, READY_POLL_S = 8, 0.5   # an offline / authorizing phone is waited for at most 4 s
_TRANSIENT_ADB = ("not found", "offline", "Unknown data: b''", "connection closed", "closed",
                  "no device with transport id", "no devices/emulators found")


def changes_screen(cmd: str) -> bool:
    """May this shell command change what the screen shows? (Everything but the reads we know.)"""
    return not _READS_ONLY.match(cmd)


def server_answers(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when something accepts a TCP connection on ``host:port`` (an adb server, we hope)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class NoSpawnClient(adbutils.AdbClient):  # type: ignore[misc]  # adbutils ships no type hints
    """An adbutils client that never starts an adb server of its own (adbutils would, and leave it running)."""

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        if not server_answers(self.host, self.port):
            raise AdbConnectionError(f"no adb server answers on {self.host}:{self.port}")
        return super().make_connection(timeout)


def no_server(host: str, port: int) -> DeviceNotFound:
    return DeviceNotFound(f"no adb server answers on {host}:{port}",
                          hint="start one with `adb start-server` (port 5037), check --adb-port, or try the "
                               "simulated phone: --device sim")


class AdbLink:
    """Runs services on one phone; ``shell(["input", "tap", 1, 2])`` -> its output."""

    def __init__(self, serial: str | None = None, host: str = "127.0.0.1", port: int = 5037, *,
                 socket_timeout: float = 10.0, command_timeout: float = 30.0, reconnect_attempts: int = 3,
                 reconnect_delay: float = 0.3, sleep: Callable[[float], None] = time.sleep) -> None:
        self.serial = serial or ""
        self.host, self.port = host, port
        self.command_timeout = command_timeout
        self.reconnect_attempts = max(0, reconnect_attempts)
        self.reconnect_delay = reconnect_delay
        self.sleep = sleep
        self.client = NoSpawnClient(host=host, port=port, socket_timeout=socket_timeout)
        self._device: adbutils.AdbDevice | None = None
        self._found = False     # a phone was found once: one not found later is a lost connection
        self.generation = 0     # shell commands that may have changed the screen, so far (taps, keys, launches)
        self.acted = 0          # of them, all but choosing the keyboard (`_KEYBOARD_CHOICE`): what a step acts with

    def resolve(self) -> None:
        """Find the device (``adb connect`` first for an ``ip:port`` serial); DeviceNotFound if absent.

        A phone listed but not ready says why (`states`): unauthorized, no permissions; one that is
        offline or authorizing (right after ``adb connect`` or plug-in) is waited for a bounded while.
        """
        if not server_answers(self.host, self.port):
            raise no_server(self.host, self.port)
        if self.serial and ":" in self.serial and not self.serial.startswith("emulator"):
            reply = self.client.connect(self.serial, timeout=5)
            if "connected" not in reply or "failed" in reply or "cannot" in reply:
                raise DeviceNotFound(f"could not connect to {self.serial}: {reply.strip()}", serial=self.serial,
                                     hint="check the phone's IP and port, that it is on the same network, and "
                                          "that wireless debugging is on (`adb tcpip 5555` over USB first)")
        info = self._pick()
        for _ in range(READY_POLLS):
            if states.normalise(info.state) not in states.TRANSIENT:
                break
            self.sleep(READY_POLL_S)
            info = self._pick()
        if info.state != states.READY:
            raise states.not_ready(info.serial, info.state)
        self.serial = info.serial
        tid = (info.tags or {}).get("transport_id")
        # A transport id skips adbutils' extra `host:version` round trip on every command.
        self._device = (self.client.device(transport_id=int(tid)) if tid and tid.isdigit()
                        else self.client.device(self.serial))
        self._found = True

    def _pick(self) -> adbutils.AdbDeviceInfo:
        """The listed phone this link means (`states.choose`), with its tags."""
        listed = self.client.list(extended=True)
        serial, _ = states.choose(self.serial, [(i.serial, i.state) for i in listed])
        return next(i for i in listed if i.serial == serial)

    @property
    def device(self) -> adbutils.AdbDevice:
        """The phone's adbutils device, found again after a reconnect; a phone this link had that is gone
        now is a lost connection (`DeviceDisconnected`), as the bounded reconnects of `guard` say."""
        if self._device is None:
            try:
                self.resolve()
            except DeviceNotFound as exc:
                if not self._found:
                    raise
                raise self._lost(exc) from exc
        assert self._device is not None
        return self._device

    def _lost(self, last: BaseException | None) -> DeviceDisconnected:
        return DeviceDisconnected(f"lost the connection to {self.serial or 'the device'}: {last}", serial=self.serial,
                                  hint="check the USB cable or Wi-Fi, then `python -m remote devices`; for Wi-Fi "
                                       "ADB run `adb connect IP:PORT` again")

    def guard(self, fn: Callable[[], T], *, retry: bool = True) -> T:
        """Run ``fn``; map foreign errors to ours, reconnecting a bounded number of times (``retry``; without
        it, one try and no warning: for work done ahead, which the caller's own ask repeats)."""
        last: BaseException | None = None
        for attempt in range((self.reconnect_attempts if retry else 0) + 1):
            if attempt:
                self.sleep(self.reconnect_delay * attempt)
                self._device = None
                try:
                    self.resolve()
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
                state = states.from_transport_error(text)
                if state in ("unauthorized", "no permissions"):
                    raise states.not_ready(self.serial or "device", state) from exc
                if not any(marker in text for marker in _TRANSIENT_ADB):
                    raise DeviceCommandError(f"adb refused the request: {text}", serial=self.serial) from exc
                last = exc
            except (OSError, EOFError) as exc:  # ConnectionResetError, BrokenPipeError, socket.timeout, ...
                last = exc
            if retry:
                logger.warning("adb link to %s failed (%s); reconnecting (%d/%d)", self.serial or "device",
                               last, attempt + 1, self.reconnect_attempts)
        if not server_answers(self.host, self.port):
            raise no_server(self.host, self.port) from last
        raise self._lost(last) from last

    def service(self, service: str, timeout: float | None = None, *, retry: bool = True) -> bytearray:
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
                _hang_up(conn)   # the device closed first
        return self.guard(run, retry=retry)

    def probe(self, service: str, nbytes: int, *, retry: bool = True) -> tuple[bytes, float, float | None]:
        """Read the first ``nbytes`` a service sends, then hang up: (those bytes, seconds to the first
        byte, bytes per second after it, None when everything came in one piece)."""
        def run() -> tuple[bytes, float, float | None]:
            started = time.perf_counter()
            conn = self.device.open_transport(timeout=self.command_timeout)
            try:
                conn.send_command(service)
                conn.check_okay()
                sock = conn.conn
                buf = bytearray(sock.recv(1 << 16))
                first = time.perf_counter()
                head = len(buf)
                while buf and len(buf) < nbytes:
                    chunk = sock.recv(min(1 << 20, nbytes - len(buf)))
                    if not chunk:
                        break
                    buf += chunk
                rest = time.perf_counter() - first
                speed = (len(buf) - head) / rest if len(buf) > head and rest > 0 else None
                return bytes(buf), first - started, speed
            finally:
                _hang_up(conn)
        return self.guard(run, retry=retry)

    def shell(self, args: Sequence[object] | str, timeout: float | None = None, *, retry: bool = True) -> str:
        """Run a shell command. A list is quoted argument by argument (the safe form)."""
        cmd = args if isinstance(args, str) else shlex.join(str(a) for a in args)
        if changes_screen(cmd):
            self.generation += 1
            self.acted += 0 if _KEYBOARD_CHOICE.match(cmd) else 1
        out = self.service("shell:" + cmd, timeout, retry=retry).decode("utf-8", errors="replace")
        logger.debug("shell %s -> %d chars", cmd[:120], len(out))
        return out.rstrip("\r\n")


def _hang_up(conn: Any) -> None:
    """Close a transport's socket, skipping adbutils' shutdown-and-sleep close (10 ms per call)."""
    try:
        conn.conn.close()
    except (OSError, AdbError):
        pass


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


def list_serials(host: str = "127.0.0.1", port: int = 5037, socket_timeout: float = 5.0) -> list[str]:
    """Serials of the ready phones an adb server sees (DeviceNotFound when no server answers)."""
    return [serial for serial, state in list_devices(host, port, socket_timeout) if state == states.READY]
