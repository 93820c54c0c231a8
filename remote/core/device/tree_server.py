"""A UI tree in tens of milliseconds: uiautomator2's resident server (``u2.jar``), spoken to over adbutils.

``uiautomator dump`` starts a JVM and a UiAutomation connection per call and waits one second for the
screen to go idle (1-3 s on real phones). uiautomator2's server keeps one UiAutomation client alive on the
phone and answers JSON-RPC over HTTP on a device port; docs/devices.md ("The resident tree server") gives
the protocol with its public sources. The jar is the one the ``uiautomator2`` wheel ships (nothing is
downloaded at run time); its md5 is compared with the phone's copy and it is pushed only when they differ,
then checked again.

The client is ours (http.client over an adbutils ``create_connection`` stream, as uiautomator2's own
``core.py`` does) because uiautomator2's ``BasicUiautomatorServer`` relaunches the server on every failed
call and polls every 0.5 s; the policy here is `remote.core.device.fast_tree`'s: one relaunch, then the
dump for the rest of the run.

    server = TreeServer(link); server.start(); xml = server.read(); server.stop()
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import http.client
import importlib.resources
import json
import logging
import socket
import threading
import time
from typing import Any

import adbutils
from adbutils.errors import AdbError

from remote.core.device.transport import AdbLink
from remote.errors import DeviceError

logger = logging.getLogger(__name__)
JAR = "/data/local/tmp/u2.jar"
PORT = 9008
LAUNCH = f"CLASSPATH={JAR} app_process / com.wetest.uia2.Main -p {PORT}"
READY_TIMEOUT_S = 30.0          # uiautomator2 waits as long for the first pong
PING_EVERY_S = 0.05             # a ping is one local adb stream; uiautomator2 waits 0.5 s between them
READ_TIMEOUT_S = 15.0
MAX_DEPTH = 50                  # uiautomator2's default
EMPTY_RETRIES, EMPTY_PAUSE_S = 3, 0.2
SHOT_QUALITY = 80               # uiautomator2's own screenshot() asks for 80
# JSON-RPC errors after which the server is gone (uiautomator2 core.py stops it and relaunches)
_DEAD = ("UiAutomation not connected", "DeadObjectException", "DeadSystemRuntimeException")


class Trouble(enum.StrEnum):
    """Why the server gives no tree."""

    NO_PACKAGE = "no_package"      # the uiautomator2 package (which ships the jar) is not installed
    PUSH = "push"                  # the jar did not arrive whole
    HELD = "held"                  # another UiAutomation client: "already registered"
    LAUNCH = "launch"              # it quit or never answered /ping
    DIED = "died"                  # it stopped answering, or lost its UiAutomation
    EMPTY = "empty"                # empty hierarchies past the retries


class TreeServerError(DeviceError):
    def __init__(self, trouble: Trouble, message: str, output: str = "") -> None:
        super().__init__(message)
        self.trouble = trouble
        self.output = output


def packaged_jar() -> tuple[bytes, str]:
    """(the jar's bytes, its version) from the installed uiautomator2 wheel; TreeServerError when absent."""
    try:
        assets = importlib.resources.files("uiautomator2") / "assets"
        data = (assets / "u2.jar").read_bytes()
        version = json.loads((assets / "version.json").read_text()).get("u2.jar", "?")
    except (ModuleNotFoundError, FileNotFoundError, ValueError) as exc:
        raise TreeServerError(Trouble.NO_PACKAGE, f"uiautomator2's u2.jar is not installed: {exc}") from exc
    return data, str(version)


class _Launch:
    """The launch line's shell stream: its output, read in the background; closing it ends the server."""

    def __init__(self, conn: adbutils.AdbConnection) -> None:
        self.conn = conn
        # the server prints nothing after it starts: with the client's socket timeout (adbutils: 600 s) a session
        # kept that long (a worker, an MCP server) would take the silence for its end, stop using its screenshots,
        # and find its own server holding the phone when it started another
        conn.conn.settimeout(None)
        self.output = bytearray()
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True, name="u2-launch").start()

    def _read(self) -> None:
        try:
            while chunk := self.conn.conn.recv(4096):
                self.output.extend(chunk)
        except OSError:
            pass
        self.ended.set()

    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    def close(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass
        self.ended.wait(3)


class TreeServer:
    """uiautomator2's server on one phone: `start` (cold start timed), `read` the active window, `stop`."""

    def __init__(self, link: AdbLink, *, clock: Any = time.perf_counter, sleep: Any = time.sleep) -> None:
        self.link = link
        self.clock, self.sleep = clock, sleep
        self.version = ""
        self.cold_start_s: float | None = None
        self._launch: _Launch | None = None

    @property
    def running(self) -> bool:
        return self._launch is not None and not self._launch.ended.is_set()

    def start(self) -> float:
        """Check and push the jar, launch the server, wait for its pong: the seconds it took."""
        started = self.clock()
        data, self.version = packaged_jar()
        self._put_jar(data)
        try:
            self._launch = _Launch(self.link.device.shell(LAUNCH, stream=True))
        except (AdbError, OSError) as exc:
            raise TreeServerError(Trouble.LAUNCH, f"could not launch u2.jar: {exc}") from exc
        deadline = started + READY_TIMEOUT_S
        while self.clock() < deadline:
            output = self._launch.text()
            if "already registered" in output:
                self.stop()
                raise TreeServerError(Trouble.HELD, "another UiAutomation client holds the phone (already registered)",
                                      output)
            if self._launch.ended.is_set():
                raise TreeServerError(Trouble.LAUNCH, "u2.jar quit at start", output)
            if self._ping():
                self.cold_start_s = self.clock() - started
                logger.info("u2.jar %s answers after %.2f s", self.version, self.cold_start_s)
                return self.cold_start_s
            self.sleep(PING_EVERY_S)
        output = self._launch.text()
        self.stop()
        raise TreeServerError(Trouble.LAUNCH, f"u2.jar did not answer within {READY_TIMEOUT_S:.0f} s", output)

    def _put_jar(self, data: bytes) -> None:
        local = hashlib.md5(data).hexdigest()
        if self._phone_md5() == local:
            return
        try:
            self.link.guard(lambda: self.link.device.sync.push(data, JAR, mode=0o644))
        except DeviceError as exc:
            raise TreeServerError(Trouble.PUSH, f"could not push u2.jar: {exc}") from exc
        if self._phone_md5() != local:
            raise TreeServerError(Trouble.PUSH, "u2.jar arrived with another md5 than the packaged one")

    def _phone_md5(self) -> str:
        out = self.link.shell(["toybox", "md5sum", JAR])
        if "not found" in out and "toybox" in out:     # toybox without md5sum (uiautomator2 then asks `md5`)
            out = self.link.shell(["md5", JAR])
        return out.split()[0] if out.split() else ""

    def stop(self) -> None:
        """End the server (closing its launch stream ends it) so `uiautomator dump` can run again."""
        launch, self._launch = self._launch, None
        if launch is not None:
            launch.close()

    def read(self) -> str:
        """The active window's tree (``dumpWindowHierarchy(false, 50, true)``); empty answers retried."""
        for attempt in range(EMPTY_RETRIES + 1):
            xml = self._call("dumpWindowHierarchy", [False, MAX_DEPTH, True])
            if not isinstance(xml, str):
                raise TreeServerError(Trouble.DIED, "dumpWindowHierarchy answered no text")
            if xml and "<node" in xml:
                return xml
            if attempt < EMPTY_RETRIES:
                logger.info("u2.jar answered an empty hierarchy; again (%d)", attempt + 1)
                self.sleep(EMPTY_PAUSE_S)
        raise TreeServerError(Trouble.EMPTY, f"u2.jar answered an empty hierarchy {EMPTY_RETRIES + 1} times")

    def shot(self) -> bytes | None:
        """The screen as a JPEG (``takeScreenshot(1, 80)``, as uiautomator2's ``screenshot()`` asks): None when
        the server took no picture (its UiAutomation answered none) or answered something that is not one."""
        answer = self._call("takeScreenshot", [1, SHOT_QUALITY])
        if not isinstance(answer, str) or not answer:
            return None
        try:
            data = base64.b64decode(answer)     # android.util.Base64.DEFAULT breaks lines: decoding skips them
        except (binascii.Error, ValueError):
            return None
        return data if data[:2] == b"\xff\xd8" else None

    def _ping(self) -> bool:
        try:
            return self._http("GET", "/ping", None, 3.0) == b"pong"
        except TreeServerError:
            return False

    def _call(self, method: str, params: list[Any]) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        # each call is a stream and a request of its own, and the server answers each on a thread of its own
        # (docs/devices.md "Frames and taps"): a read and a screenshot may be asked at once
        raw = self._http("POST", "/jsonrpc/0", body, READ_TIMEOUT_S)
        try:
            answer = json.loads(raw)
        except ValueError as exc:
            raise TreeServerError(Trouble.DIED, "u2.jar answered no JSON") from exc
        error = answer.get("error") if isinstance(answer, dict) else {"message": "not an object"}
        if error:
            message = f"{error.get('message', '')} {error.get('data', '')}"
            trouble = Trouble.DIED if any(d in message for d in _DEAD) else Trouble.LAUNCH
            raise TreeServerError(trouble, f"u2.jar {method}: {error.get('code')} {error.get('message', '')}"[:300])
        return answer.get("result")

    def _http(self, method: str, path: str, body: bytes | None, timeout: float) -> bytes:
        """One request on a fresh device stream to ``tcp:9008`` (no `adb forward`)."""
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
        try:
            conn.sock = self.link.device.create_connection(adbutils.Network.TCP, PORT)
            conn.sock.settimeout(timeout)
            # http.client sends the headers and the body in two writes: without this, Nagle's algorithm and the
            # peer's delayed ACK hold the body ~40 ms
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.request(method, path, body, {"Content-Type": "application/json", "Accept-Encoding": ""})
            reply = conn.getresponse()
            data = reply.read()
            if reply.status != 200:
                raise TreeServerError(Trouble.DIED, f"u2.jar answered HTTP {reply.status} to {path}")
            return data
        except (AdbError, OSError, http.client.HTTPException) as exc:
            raise TreeServerError(Trouble.DIED, f"u2.jar did not answer {path}: {exc}") from exc
        finally:
            conn.close()
