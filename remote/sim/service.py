"""Device services behind the transport switch: shell (v1 and v2), exec, sync, framebuffer, ...

Fault injection lives here because it is about the link, not the phone:
``reset_every_commands`` closes every Nth shell connection with a RST and no
reply; ``drop_after_commands`` makes the device vanish after its Nth command.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import struct
import threading
from typing import TYPE_CHECKING, Protocol

from remote.sim import commands, realism, tree_server
from remote.sim.sync import serve_sync

if TYPE_CHECKING:
    from remote.sim.device import Phone

log = logging.getLogger(__name__)

V2_STDIN, V2_STDOUT, V2_STDERR, V2_EXIT, V2_CLOSE_STDIN = 0, 1, 2, 3, 4


class Served(Protocol):
    """What a device service needs of its server: the phone and the flag set when the server stops."""

    phone: Phone

    @property
    def stopping(self) -> threading.Event: ...


class ConnectionReset(Exception):
    """Close the client's connection with a RST, without a reply."""


def run_device_service(server: Served, conn: socket.socket, request: str) -> None:
    """Answer one device request on a connection already switched to the device."""
    phone = server.phone
    if request.startswith("shell"):
        head, _, command = request.partition(":")
        options = head.split(",")[1:]
        _shell(server, conn, command, v2="v2" in options)
    elif request.startswith("exec:"):
        _shell(server, conn, request[len("exec:"):], v2=False)
    elif request == "sync:":
        conn.sendall(b"OKAY")
        serve_sync(conn, phone)
    elif request == "framebuffer:":
        _framebuffer(conn, phone)
    elif request.startswith("tcp:") and request[4:].isdigit():
        tree_server.serve_tcp(phone, conn, int(request[4:]))
    elif request.startswith("reverse:"):
        _reverse(conn, request[len("reverse:"):])
    elif request.startswith("root:"):
        conn.sendall(b"OKAY" + b"adbd cannot run as root in production builds\n")
    elif request.startswith("unroot:"):
        conn.sendall(b"OKAY" + b"adbd not running as root\n")
    elif request.startswith("tcpip:"):
        conn.sendall(b"OKAY" + f"restarting in TCP mode port: {request[6:]}\n".encode())
    elif request.startswith("reboot:"):
        conn.sendall(b"OKAY")
    else:
        conn.sendall(b"FAIL" + b"%04x" % len(b"closed") + b"closed")


# ---------------------------------------------------------------- shell / exec


def _count(server: Served, command: str) -> None:
    """Apply the scenario's link faults; record the command. Raises ConnectionReset for a dropped connection."""
    phone, scenario = server.phone, server.phone.scenario
    with phone.lock:
        phone.shell_connections += 1
        every = scenario.reset_every_commands
        if every and phone.shell_connections % every == 0:
            log.info("scenario: resetting shell connection #%d", phone.shell_connections)
            raise ConnectionReset
        phone.commands.append(command)


def _after(server: Served) -> None:
    phone, limit = server.phone, server.phone.scenario.drop_after_commands
    with phone.lock:
        if limit and len(phone.commands) >= limit and not phone.gone:
            log.info("scenario: the phone disappears after %d commands", limit)
            phone.gone = True


def _shell(server: Served, conn: socket.socket, command: str, v2: bool) -> None:
    if not command.strip():
        _interactive(server, conn, v2)
        return
    _count(server, command)
    conn.sendall(b"OKAY")
    stop = threading.Event()
    lock = threading.Lock()
    server_stop = server.stopping

    def write(fd: int, data: bytes) -> None:
        if not data or stop.is_set():
            return
        try:
            for piece in realism.paced(server.phone, data, stop):   # the scenario's link speed (USB, Wi-Fi)
                with lock:
                    if v2:
                        conn.sendall(struct.pack("<BI", fd, len(piece)) + piece)
                    else:
                        conn.sendall(piece)
        except OSError:
            stop.set()  # the client went away: stop what runs (sleep, logcat)

    wake_r, wake_w = os.pipe()
    watcher = threading.Thread(target=_watch, args=(conn, stop, server_stop, wake_r), daemon=True)
    watcher.start()
    try:
        status = commands.run(server.phone, command, write, stop)
    finally:
        _after(server)
        # Wake the watcher and wait for it: a socket closed while another thread still
        # select()s on it is only torn down (FIN sent) when that select returns.
        os.write(wake_w, b"x")
        watcher.join(timeout=2)
        os.close(wake_r)
        os.close(wake_w)
    if v2 and not stop.is_set():
        try:
            conn.sendall(struct.pack("<BIB", V2_EXIT, 1, status))
        except OSError:
            pass
    stop.set()


def _watch(conn: socket.socket, stop: threading.Event, server_stop: threading.Event, wake: int) -> None:
    """Set `stop` when the client closes (so `sleep`/`logcat` end) or the server shuts down."""
    while not stop.is_set():
        if server_stop.is_set():
            stop.set()
            return
        try:
            readable, _, _ = select.select([conn.fileno(), wake], [], [], 0.5)
            if wake in readable:
                return
            # stdin (v1 bytes or v2 packets) is not used by one-shot commands: read and drop it
            data = conn.recv(4096) if readable else None
        except (OSError, ValueError):
            stop.set()
            return
        if data == b"":
            stop.set()
            return


def _interactive(server: Served, conn: socket.socket, v2: bool) -> None:
    """``adb shell`` with no command: read lines, run each, print a prompt; ``exit`` ends it."""
    conn.sendall(b"OKAY")
    prompt = b"sim:/ $ "
    status = 0

    def write(fd: int, data: bytes) -> None:
        conn.sendall(struct.pack("<BI", fd, len(data)) + data if v2 else data)

    write(1, prompt)
    pending = bytearray()
    while not server.stopping.is_set():
        if v2:
            header = conn.recv(5, socket.MSG_WAITALL)
            if len(header) < 5:
                return
            kind, length = struct.unpack("<BI", header)
            payload = conn.recv(length, socket.MSG_WAITALL) if length else b""
            if kind == V2_CLOSE_STDIN:
                break
            if kind != V2_STDIN:
                continue
        else:
            payload = conn.recv(4096)
            if not payload:
                return
        pending.extend(payload)
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            text = line.decode("utf-8", "replace").strip()
            if text in ("exit", "logout"):
                if v2:
                    conn.sendall(struct.pack("<BIB", V2_EXIT, 1, status))
                return
            if text:
                _count(server, text)
                status = commands.run(server.phone, text, write)
                _after(server)
            write(1, prompt)
    if v2:
        conn.sendall(struct.pack("<BIB", V2_EXIT, 1, status))


# ---------------------------------------------------------------- framebuffer / reverse


def _framebuffer(conn: socket.socket, phone: Phone) -> None:
    raw = phone.screencap(png=False)
    w, h = phone.size
    pixels = memoryview(raw)[16:]
    # version 2 header: version, bpp, colorSpace, size, width, height, then RGBA offsets/lengths
    header = struct.pack("<14I", 2, 32, 1, len(pixels), w, h, 0, 8, 16, 8, 8, 8, 24, 8)
    conn.sendall(b"OKAY" + header)
    conn.sendall(pixels)


def _reverse(conn: socket.socket, what: str) -> None:
    if what == "list-forward":
        conn.sendall(b"OKAY" + b"0000")
    elif what == "killforward-all":
        conn.sendall(b"OKAYOKAY")
    else:
        message = b"reverse forwarding is not supported by the simulated phone"
        conn.sendall(b"FAIL" + b"%04x" % len(message) + message)
