"""uiautomator2's resident tree server (``u2.jar``) as the simulated phone runs it.

What the real server does, from its public sources (openatx/uiautomator2 3.7.1 ``core.py``,
``__init__.py``; openatx/android-uiautomator-server-jar @ d0449b9 ``AutomatorHttpServer.java``,
``AccessibilityNodeInfoDumper.java``; docs/devices.md "The resident tree server"):

* The client checks the jar with ``toybox md5sum /data/local/tmp/u2.jar`` (``md5`` where toybox has no
  md5sum), pushes it when it differs, and launches
  ``CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008`` as a long-lived shell
  stream. The server lives as long as that stream (uiautomator2#1084): closing it, or the adb server going
  away, ends it. Its first line is ``[server] INFO: [UiAutomator2Server] Starting Server``; with another
  UiAutomation client on the phone it prints ``IllegalStateException: UiAutomationService ... already
  registered!`` and quits.
* Every HTTP request comes on a fresh device stream to ``tcp:9008`` (adbutils ``create_connection``):
  ``GET /ping`` -> ``pong``; ``POST /jsonrpc/0`` (JSON-RPC 2.0, positional ``params``). Errors are HTTP 200
  with ``error: {code: -32001, message: <Java exception>, data: <stack>}``.
* ``takeScreenshot(scale, quality)``: the screen as a base64 JPEG (`_screenshot`).
* ``dumpWindowHierarchy(compressed, max_depth[, root_in_active])``: the XML declaration, CRLF, an indented
  hierarchy with ``visible-to-user`` (and ``drawing-order``, ``hint``, ``display-id`` by API level); one root
  node per window unless ``root_in_active``. No wait for idle.

While it runs, ``uiautomator dump`` is refused (uiautomator2#298): `serving` tells `remote.sim.android`.
The scenario keys (``tree_server_*``, ``automation_holder_refusals``) are checked in `check`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import logging
import socket
import struct
import threading
import time
import xml.etree.ElementTree as ET
import zipfile
from typing import Any, TypeAlias

from PIL import Image

from remote.errors import ConfigError
from remote.sim import real_screen

Phone: TypeAlias = Any   # remote.sim.device.Phone (which builds the state here): passed in, not imported
Ctx: TypeAlias = Any     # remote.sim.shell.Ctx

log = logging.getLogger(__name__)
JAR = "/data/local/tmp/u2.jar"
MAIN = "com.wetest.uia2.Main"
STARTING = "[server] INFO: [UiAutomator2Server] Starting Server\n"
REGISTERED = ("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
              "IAccessibilityServiceClient$Stub$Proxy@5deffd5already registered!\n"
              "\tat android.app.UiAutomationConnection.registerUiTestAutomationServiceLocked"
              "(UiAutomationConnection.java:456)\n")
CRASH = ("java.lang.RuntimeException: Unable to start UiAutomation: hooked by the ROM\n"
         "\tat com.wetest.uia2.Main.main(Main.java:71)\n")
NOT_CONNECTED = "java.lang.IllegalStateException: UiAutomation not connected!"
EMPTY = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy rotation=\"0\" />"
# u2's node attributes after ``selected`` (AccessibilityNodeInfoDumper.dumpNodeRec), with their API levels
_AFTER = (("visible-to-user", 0), ("bounds", 0), ("drawing-order", 24), ("hint", 26), ("display-id", 30))


class TreeServerState:
    """One phone's server: whether it runs (and on which port), its launches and reads, the holder's refusals."""

    def __init__(self, scenario: Any) -> None:
        self.port: int | None = None
        self.ended = threading.Event()         # set when the running server quits on its own (it "dies")
        self.launches = 0
        self.reads = 0                         # dumpWindowHierarchy calls answered
        self.reads_this_launch = 0
        self.empty_left = scenario.tree_server_empty_reads
        self.holder_refusals = 0
        self.dumps_refused = 0                 # `uiautomator dump` runs while the server held UiAutomation
        self.served: tuple[int, str] | None = None   # (phone version, xml) of the last fresh tree
        self.stale_left = 0
        self.shots: dict[tuple[int, int], tuple[bytes, str]] = {}   # the last screenshot's JPEG, per screen state
        self.one_call = threading.Lock()       # held through a call when the scenario has it answer one at a time

    def snapshot(self) -> dict[str, Any]:
        return {"running": self.port is not None, "launches": self.launches, "reads": self.reads,
                "dumps_refused": self.dumps_refused}


def check(scenario: Any) -> None:
    """The scenario's tree-server keys: whole numbers (or lists of them) >= 0, ``tree_server_crashes`` a bool."""
    for key in ("tree_server_start_ms", "tree_server_read_ms", "tree_server_shot_ms", "tree_server_empty_reads",
                "tree_server_stale_reads"):
        _whole(key, getattr(scenario, key))
    if scenario.tree_server_one_call not in (0, 1):
        raise ConfigError(f"tree_server_one_call must be 0 or 1, not {scenario.tree_server_one_call!r}")
    dies = scenario.tree_server_dies_after
    if isinstance(dies, str | int) or not all(_whole("tree_server_dies_after", n, 1) for n in dies):
        raise ConfigError(f"tree_server_dies_after must be a list of read counts >= 1, not {dies!r}")
    object.__setattr__(scenario, "tree_server_dies_after", tuple(dies))
    if scenario.automation_holder_refusals is not None:
        _whole("automation_holder_refusals", scenario.automation_holder_refusals)
    if not isinstance(scenario.tree_server_crashes, bool):
        raise ConfigError(f"tree_server_crashes must be true or false, not {scenario.tree_server_crashes!r}")


def _whole(key: str, value: Any, least: int = 0) -> bool:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ConfigError(f"{key} must be a whole number >= {least}, not {value!r}")
    return True


def holder_present(phone: Phone) -> bool:
    """Does the scenario's other UiAutomation client still hold the phone (it may let go after some refusals)?"""
    scenario, state = phone.scenario, phone.tree_server
    limit = scenario.automation_holder_refusals
    return bool(scenario.automation_holder) and (limit is None or state.holder_refusals < limit)


def refuse_for_holder(phone: Phone) -> bool:
    """A new UiAutomation client (a dump, a server) meets the holder: True when refused (counted)."""
    with phone.lock:
        if holder_present(phone):
            phone.tree_server.holder_refusals += 1
            return True
    return False


def serving(phone: Phone) -> bool:
    return phone.tree_server.port is not None


# ---------------------------------------------------------------- shell commands


def md5sum(ctx: Ctx, argv: list[str]) -> int:
    """toybox ``md5sum FILE...``: ``<hash>  <path>`` per file."""
    status = 0
    for path in argv[1:]:
        try:
            data = ctx.phone.fs.read(path)
        except OSError:
            ctx.err(f"md5sum: {path}: No such file or directory\n")
            status = 1
            continue
        ctx.out(f"{hashlib.md5(data).hexdigest()}  {path}\n")
    return status


def toybox(ctx: Ctx, argv: list[str]) -> int:
    if len(argv) > 1 and argv[1] == "md5sum":
        return md5sum(ctx, argv[1:])
    ctx.err(f"toybox: Unknown command {argv[1] if len(argv) > 1 else ''}\n")
    return 1


def app_process(ctx: Ctx, argv: list[str]) -> int:
    """``app_process / com.wetest.uia2.Main -p PORT`` with ``CLASSPATH`` on the jar: the server, until its stream
    closes, the link goes, or it dies (``tree_server_dies_after``)."""
    phone, scenario = ctx.phone, ctx.phone.scenario
    if MAIN not in argv or not _has_dex(phone, ctx.env.get("CLASSPATH", "")):
        ctx.err(f"Error: Could not find class '{MAIN}'\n")
        return 1
    port = int(argv[argv.index("-p") + 1]) if "-p" in argv[:-1] else 9008
    ctx.sleep(scenario.tree_server_start_ms / 1000)    # the JVM starts and UiAutomation connects
    ctx.out(STARTING)
    state = phone.tree_server
    if scenario.tree_server_crashes:
        ctx.err(CRASH)
        return 1
    with phone.lock:
        refused = state.port is not None or holder_present(phone)
        if refused and state.port is None:
            state.holder_refusals += 1
        if not refused:
            state.port, state.reads_this_launch = port, 0
            state.launches += 1
            state.ended.clear()
    if refused:
        ctx.err(REGISTERED)
        return 1
    try:
        while not ctx.stop.is_set() and not state.ended.wait(0.05):
            pass
    finally:
        with phone.lock:
            state.port = None
    return 137 if state.ended.is_set() else 0


def _has_dex(phone: Phone, classpath: str) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(phone.fs.read(classpath))) as jar:
            return "classes.dex" in jar.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


# ---------------------------------------------------------------- the device stream tcp:PORT


def serve_tcp(phone: Phone, conn: socket.socket, port: int) -> None:
    """A device-side ``tcp:PORT`` stream: refused unless the server listens there; then one HTTP exchange."""
    if phone.tree_server.port != port:
        conn.sendall(b"FAIL" + b"%04x" % len(b"closed") + b"closed")   # adbd closes a stream it cannot connect
        return
    conn.sendall(b"OKAY")
    request = _read_http(conn)
    if request is None:
        return
    method, path, body = request
    if path == "/ping" and method == "GET":
        _reply(phone, conn, 200, b"pong", "text/plain")
    elif path == "/jsonrpc/0" and method == "POST":
        # NanoHTTPD answers each request on a thread of its own (this stream's); `tree_server_one_call` has the
        # calls wait for one another instead (the dear end of an uncertain cost: remote.sim.realism.RANGES)
        with phone.tree_server.one_call if phone.scenario.tree_server_one_call else contextlib.nullcontext():
            answer = _jsonrpc(phone, body)
        if answer is not None:
            _reply(phone, conn, 200, json.dumps(answer).encode(), "application/json")
    else:
        _reply(phone, conn, 404, b"Not Found!!!", "text/plain")


def _read_http(conn: socket.socket) -> tuple[str, str, bytes] | None:
    data = bytearray()
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk or len(data) > 1 << 20:
            return None
        data.extend(chunk)
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path = (lines[0].split(" ") + ["", ""])[:2]
    length = next((int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:")), 0)
    while len(body) < min(length, 1 << 20):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return method, path, body


def _reply(phone: Phone, conn: socket.socket, status: int, body: bytes, kind: str) -> None:
    reason = {200: "OK", 404: "Not Found"}[status]
    data = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n" \
        "Connection: close\r\n\r\n".encode() + body
    speed = phone.scenario.link_mb_s     # the link carries the reply as it carries shell output
    if speed:
        time.sleep(len(data) / (speed * 1_000_000))
    conn.sendall(data)


def _jsonrpc(phone: Phone, body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC answer; None when the server dies on this call (the stream closes without a reply)."""
    try:
        call = json.loads(body)
        method, params, ident = call["method"], call.get("params") or [], call.get("id")
    except (ValueError, KeyError, TypeError):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "JSON parse error"}}
    if method == "takeScreenshot":
        return {"jsonrpc": "2.0", "id": ident, "result": _screenshot(phone, params)}
    if method != "dumpWindowHierarchy":
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "method not found"}}
    if not isinstance(params, list) or not 2 <= len(params) <= 3:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": "method parameters invalid"}}
    state = phone.tree_server
    time.sleep(phone.scenario.tree_server_read_ms / 1000)   # the walk of the active window's nodes
    with phone.lock:
        state.reads_this_launch += 1
        dies = phone.scenario.tree_server_dies_after
        limit = dies[state.launches - 1] if 0 < state.launches <= len(dies) else None
        if limit is not None and state.reads_this_launch > limit:
            state.ended.set()                  # the UiAutomation connection is gone: the server quits after this
            return {"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32001, "message": NOT_CONNECTED,
                "data": NOT_CONNECTED + "\n\tat android.app.UiAutomation.throwIfNotConnectedLocked"}}
        state.reads += 1
        return {"jsonrpc": "2.0", "id": ident, "result": _tree(phone, bool(params[0]), bool(params[2:3] == [True]))}


def _screenshot(phone: Phone, params: Any) -> str | None:
    """``takeScreenshot(scale, quality)``: UiAutomation's picture of the screen as it is now (the same pixels
    ``screencap`` gives: black while asleep or under a secure layer, turned with the display), a JPEG at
    ``quality`` (``scale`` is not used by jar 0.4.x), in base64 with a line break every 76 characters
    (android.util.Base64.DEFAULT). openatx/android-uiautomator-server-jar ``AutomatorServiceImpl.takeScreenshot``."""
    quality = params[1] if isinstance(params, list) and len(params) >= 2 and isinstance(params[1], int) else 100
    started = time.perf_counter()
    raw = real_screen.frame(phone, False)
    key = (id(raw), quality)
    cache: dict[tuple[int, int], tuple[bytes, str]] = phone.tree_server.shots
    kept = cache.get(key)
    if kept is None or kept[0] is not raw:
        width, height = struct.unpack_from("<II", raw, 0)
        image = Image.frombuffer("RGBA", (width, height), raw[16:], "raw", "RGBA", 0, 1).convert("RGB")
        out = io.BytesIO()
        image.save(out, format="JPEG", quality=max(1, min(100, quality)))
        kept = (raw, base64.encodebytes(out.getvalue()).decode("ascii"))
        cache.clear()       # the server answers each request on a thread of its own: this shot's answer is its own
        cache[key] = kept
    # The capture and the encoding on the phone cost the charged time in all: what drawing and encoding the
    # picture here took already stands for part of it (a new screen costs this process ~0.1 s to draw).
    time.sleep(max(0.0, phone.scenario.tree_server_shot_ms / 1000 - (time.perf_counter() - started)))
    return kept[1]


def _tree(phone: Phone, compressed: bool, active_only: bool) -> str:
    """The XML the server answers now: empty while ``empty_left``, the previous tree while ``stale_left``."""
    state = phone.tree_server
    if state.empty_left:
        state.empty_left -= 1
        return EMPTY
    version = phone.version
    if state.served is not None and state.served[0] != version:
        state.stale_left = phone.scenario.tree_server_stale_reads   # the screen changed: a cached tree first
        state.served = (version, state.served[1])
    if state.stale_left and state.served is not None:
        state.stale_left -= 1
        cached: str = state.served[1]
        return cached
    xml = u2_xml(real_screen.dump_xml(phone, compressed), int(phone.sdk), phone.size, active_only)
    state.served = (version, xml)
    return xml


def u2_xml(dump: str, sdk: int, size: tuple[int, int], active_only: bool) -> str:
    """``uiautomator dump``'s one-line XML as u2's server writes it: CRLF, indented, its extra attributes,
    and (``active_only`` false) the status bar's window as a second root."""
    root = ET.fromstring(dump[dump.find("<hierarchy"):])
    for node in root.iter("node"):
        attrs = dict(node.attrib)
        node.attrib.clear()
        for key, value in attrs.items():
            if key != "bounds":
                node.set(key, value)
        for key, level in _AFTER:
            if sdk >= level:
                node.set(key, attrs["bounds"] if key == "bounds" else {"visible-to-user": "true", "drawing-order": "0",
                                                                        "hint": "", "display-id": "0"}[key])
    if not active_only:
        bar = ET.SubElement(root, "node", {k: v for k, v in root[0].attrib.items()} if len(root) else {})
        bar.set("package", "com.android.systemui")
        bar.set("class", "android.widget.FrameLayout")
        bar.set("bounds", f"[0,0][{size[0]},{round(size[1] * 0.03)}]")
    ET.indent(root, space="  ")
    text = ET.tostring(root, encoding="unicode").replace("\n", "\r\n")
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n" + text
