"""An adb server on loopback that speaks the host ("smart socket") protocol for one phone.

The phone is a `remote.sim.device.Phone`: the simulated `SimPhone` or a `TracePhone`.

Each request is ``%04x`` length + UTF-8 payload; replies are ``OKAY`` (+ data) or
``FAIL`` + ``%04x`` + message. ``host:transport*`` / ``host:tport:*`` switch the
same connection to the device, whose services are ``shell:``, ``shell,v2,…:``
(packets ``[id u8][len u32 LE][data]``: 1 stdout, 2 stderr, 3 exit),
``exec:``, ``sync:``, ``framebuffer:``, ``reverse:…``. Every path answers or closes.

    with SimServer(SimPhone()) as server:
        adbutils.AdbClient(port=server.port).device(server.serial).shell("wm size")
"""

from __future__ import annotations

import logging
import socket
import struct
import threading

from remote.sim.device import Phone
from remote.sim.phone import SimPhone
from remote.sim.service import ConnectionReset, run_device_service
from remote.sim.sync import SyncClosed, read_exact

log = logging.getLogger(__name__)

# Only what is implemented: shell_v2 packets, STA2/LST2/LIS2, mkdir on push. Not sendrecv_v2 (RCV2/SND2).
FEATURES = "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb_exec"
HOST_FEATURES = FEATURES + ",push_sync,track_app,remount_shell"
TRANSPORT_ID = 1
IDLE_TIMEOUT = 120.0


def _block(text: str) -> bytes:
    data = text.encode("utf-8")
    return b"%04x" % len(data) + data


def _okay(sock: socket.socket, text: str | None = None) -> None:
    sock.sendall(b"OKAY" + (_block(text) if text is not None else b""))


def _fail(sock: socket.socket, message: str) -> None:
    sock.sendall(b"FAIL" + _block(message))


def _read_request(sock: socket.socket) -> str:
    size = int(read_exact(sock, 4).decode("ascii"), 16)
    return read_exact(sock, size).decode("utf-8", "replace")


class SimServer:
    """Serve `phone` on ``host:port`` (port 0 = a free one) from a background thread."""

    def __init__(self, phone: Phone | None = None, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.phone: Phone = phone or SimPhone()
        self.host = host
        self._requested_port = port
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self.port = port

    @property
    def serial(self) -> str:
        return self.phone.serial

    def start(self) -> SimServer:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self._requested_port))
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept_loop, name=f"sim-adb-{self.port}", daemon=True)
        self._thread.start()
        log.info("simulated phone %s on %s:%s", self.serial, self.host, self.port)
        return self

    def close(self) -> None:
        self._stop.set()
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept() at once on Linux
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._listener is not None:
            self._listener.close()
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def __enter__(self) -> SimServer:
        return self if self._listener is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def serve_forever(self) -> None:
        """Block until `close()` (or Ctrl-C in the caller)."""
        if self._listener is None:
            self.start()
        while not self._stop.wait(0.5):
            pass

    # ------------------------------------------------------------------ connections

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(IDLE_TIMEOUT)
            with self._conns_lock:
                self._conns.add(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True, name="sim-adb-conn").start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            request = _read_request(conn)
            log.debug("host request %r", request)
            if self._host(conn, request):
                self._device(conn, _read_request(conn))
        except ConnectionReset:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (SyncClosed, OSError, ValueError) as exc:
            log.debug("connection ended: %s", exc)
        finally:
            with self._conns_lock:
                self._conns.discard(conn)
            conn.close()

    # ------------------------------------------------------------------ host services

    def _devices(self, long: bool) -> str:
        if self.phone.gone:
            return ""
        if long:
            props = self.phone.properties()
            model = props["ro.product.model"].replace(" ", "_")  # as adb prints it
            return (f"{self.serial}            device product:{props['ro.product.name']} model:{model} "
                    f"device:{props['ro.product.device']} transport_id:{TRANSPORT_ID}\n")
        return f"{self.serial}\tdevice\n"

    def _select(self, conn: socket.socket, selector: str) -> bool:
        """Is the device named by `selector` ours and present? FAIL like adb when not."""
        if self.phone.gone:  # the messages of adb's acquire_one_transport()
            if selector.startswith("serial:"):
                _fail(conn, f"device '{selector[7:]}' not found")
            elif selector.startswith("id:"):
                _fail(conn, f"no device with transport id '{selector[3:]}'")
            else:
                _fail(conn, "no devices/emulators found")
            return False
        if selector.startswith("serial:") and selector[7:] != self.serial:
            _fail(conn, f"device '{selector[7:]}' not found")
            return False
        if selector.startswith("id:") and selector[3:] != str(TRANSPORT_ID):
            _fail(conn, f"no device with transport id '{selector[3:]}'")
            return False
        return True

    def _host(self, conn: socket.socket, request: str) -> bool:
        """Answer a host request; True when the connection now talks to the device."""
        selector, service = "any:", request
        if request.startswith("host-serial:"):
            rest = request[len("host-serial:"):]
            # the serial may itself contain ':' (ip:port); the service is the last known suffix
            serial, _, service = rest.rpartition(":") if rest.count(":") == 1 else _split_serial(rest)
            selector, service = f"serial:{serial}", "host:" + service
        elif request.startswith("host-transport-id:"):
            tid, _, service = request[len("host-transport-id:"):].partition(":")
            selector, service = f"id:{tid}", "host:" + service
        elif request.startswith(("host-usb:", "host-local:")):
            service = "host:" + request.split(":", 1)[1]
        name = service[len("host:"):] if service.startswith("host:") else service

        if name == "version":
            _okay(conn, f"{41:04x}")
        elif name in ("devices", "devices-l"):
            _okay(conn, self._devices(name == "devices-l"))
        elif name in ("track-devices", "track-devices-l"):
            self._track(conn, name.endswith("-l"))
        elif name == "host-features":
            _okay(conn, HOST_FEATURES)
        elif name == "kill":
            _okay(conn)
        elif name.startswith(("connect:", "disconnect:", "pair:")):
            verb, _, addr = name.partition(":")
            if verb == "disconnect":
                _fail(conn, f"no such device '{addr}'")
            else:
                _okay(conn, f"failed to connect to '{addr}': Connection refused")
        elif name in ("list-forward", "reconnect-offline"):
            _okay(conn, "")
        elif name.startswith(("transport", "tport:")):
            return self._transport(conn, name)
        elif name in ("features", "get-state", "get-serialno", "get-devpath") or name.startswith(
                ("wait-for-", "forward:", "killforward", "reconnect")):
            self._device_query(conn, selector, name)
        else:
            _fail(conn, f"unknown host service '{name}'")
        return False

    def _transport(self, conn: socket.socket, name: str) -> bool:
        tport = name.startswith("tport:")
        arg = name[len("tport:"):] if tport else name[len("transport"):].lstrip("-:")
        if arg.startswith("serial:"):
            selector = arg
        elif arg.startswith(("transport-id:", "id:")):
            selector = "id:" + arg.split(":", 1)[1]
        elif arg in ("", "any", "usb", "local"):
            selector = "any:"
        else:
            selector = "serial:" + arg  # host:transport:<serial>
        if not self._select(conn, selector):
            return False
        conn.sendall(b"OKAY" + (struct.pack("<Q", TRANSPORT_ID) if tport else b""))
        return True

    def _device_query(self, conn: socket.socket, selector: str, name: str) -> None:
        if not self._select(conn, selector):
            return
        if name == "features":
            _okay(conn, FEATURES)
        elif name == "get-state":
            _okay(conn, "device")
        elif name == "get-serialno":
            _okay(conn, self.serial)
        elif name == "get-devpath":
            _okay(conn, "usb:1-1")
        elif name.startswith("wait-for-"):
            conn.sendall(b"OKAYOKAY")
        elif name.startswith("killforward"):
            if name == "killforward-all":
                conn.sendall(b"OKAYOKAY")
            else:
                _fail(conn, f"listener '{name.split(':', 1)[-1]}' not found")
        elif name.startswith("forward:"):
            _fail(conn, "cannot bind listener: forwarding is not supported by the simulated phone")
        else:
            _okay(conn, "done")

    def _track(self, conn: socket.socket, long: bool) -> None:
        conn.sendall(b"OKAY")
        last = None
        while not self._stop.is_set():
            now = self._devices(long)
            if now != last:
                conn.sendall(_block(now))
                last = now
            self._stop.wait(0.25)

    # ------------------------------------------------------------------ device services

    def _device(self, conn: socket.socket, request: str) -> None:
        log.debug("device request %r", request)
        run_device_service(self, conn, request)


def _split_serial(rest: str) -> tuple[str, str, str]:
    """``127.0.0.1:5555:features`` -> ("127.0.0.1:5555", ":", "features"): serials may hold one ':'."""
    for service in ("features", "get-state", "get-serialno", "get-devpath", "transport", "list-forward",
                    "killforward", "forward:", "wait-for-", "reconnect"):
        idx = rest.find(":" + service)
        if idx > 0:
            return rest[:idx], ":", rest[idx + 1:]
    serial, _, service = rest.partition(":")
    return serial, ":", service
