"""A tiny scripted adb server for unit tests of ADBController.

It speaks just enough of the host protocol for adbutils (version, devices-l,
transport switch, ``shell:``/``exec:`` services) and hands every device command
to a Python handler, so tests can assert the exact command strings and script
replies and faults. The simulated phone (remote.sim) is the full-fidelity peer;
this one exists to make error paths easy to provoke.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Callable

# A handler gets the service string ("shell:input tap 1 2") and returns bytes to send,
# or one of the fault markers below.
RESET = object()      # close the connection without replying
FAIL_GONE = object()  # answer FAIL "device 'x' not found"
Handler = Callable[[str], object]


class FakeAdbServer:
    def __init__(self, handler: Handler, serial: str = "fake-1", devices: list[str] | None = None) -> None:
        self.handler = handler
        self.serial = serial
        self.devices = [serial] if devices is None else devices
        self.commands: list[str] = []
        self.gone = False
        outer = self

        class _Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._serve(self.request)

        class _Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self.port = self._server.server_address[1]
        # shutdown() waits for serve_forever to look again: every 0.5 s by default, 1 s of a test of two servers
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> FakeAdbServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @staticmethod
    def _read_request(sock: socket.socket) -> str | None:
        head = _recv_exact(sock, 4)
        if head is None:
            return None
        body = _recv_exact(sock, int(head, 16))
        return None if body is None else body.decode("utf-8")

    def _serve(self, sock: socket.socket) -> None:
        try:
            while True:
                req = self._read_request(sock)
                if req is None:
                    return
                if req == "host:version":
                    return _send_block(sock, "0029")
                if req in ("host:devices", "host:devices-l"):
                    serials = [] if self.gone else self.devices
                    lines = "".join(f"{s}\tdevice\n" if req == "host:devices" else
                                    f"{s}       device product:fake model:Fake_Phone device:fake transport_id:{i + 1}\n"
                                    for i, s in enumerate(serials))
                    return _send_block(sock, lines)
                if req.startswith(("host:transport", "host:tport")):
                    if self.gone:
                        return _send_fail(sock, f"device '{self.serial}' not found")
                    sock.sendall(b"OKAY" + ((1).to_bytes(8, "little") if req.startswith("host:tport") else b""))
                    continue
                if req.startswith(("shell:", "exec:")):
                    self.commands.append(req)
                    reply = self.handler(req)
                    if reply is RESET:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                        return
                    if reply is FAIL_GONE:
                        return _send_fail(sock, f"device '{self.serial}' not found")
                    sock.sendall(b"OKAY" + (reply if isinstance(reply, bytes) else str(reply).encode("utf-8")))
                    return
                return _send_fail(sock, f"unknown request {req}")
        except OSError:
            return
        finally:
            try:
                sock.close()
            except OSError:
                pass


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _send_block(sock: socket.socket, text: str) -> None:
    raw = text.encode("utf-8")
    sock.sendall(b"OKAY" + f"{len(raw):04x}".encode() + raw)


def _send_fail(sock: socket.socket, text: str) -> None:
    raw = text.encode("utf-8")
    sock.sendall(b"FAIL" + f"{len(raw):04x}".encode() + raw)
