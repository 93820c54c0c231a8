"""An adb server on loopback that speaks the host ("smart socket") protocol for one phone or several.

A phone is a `remote.sim.device.Phone`: the simulated `SimPhone` or a `TracePhone`.

Each request is ``%04x`` length + UTF-8 payload; replies are ``OKAY`` (+ data) or
``FAIL`` + ``%04x`` + message. ``host:transport*`` / ``host:tport:*`` switch the
same connection to the device, whose services are ``shell:``, ``shell,v2,…:``
(packets ``[id u8][len u32 LE][data]``: 1 stdout, 2 stderr, 3 exit),
``exec:``, ``sync:``, ``framebuffer:``, ``reverse:…``. Every path answers or closes.

    with SimServer(SimPhone()) as server:
        adbutils.AdbClient(port=server.port).device(server.serial).shell("wm size")

Several phones on one server (``remote sim --count 3``): ``SimServer(phones=[...])``; each has
transport id 1, 2, 3 ..., and a phone whose cable is pulled leaves the device list alone.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading

from remote.sim import roms
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


class _Route:
    """One phone of a server with several, as the device services see it (`remote.sim.service.Served`)."""

    def __init__(self, phone: Phone, stopping: threading.Event) -> None:
        self.phone = phone
        self.stopping = stopping


class SimServer:
    """Serve `phone` (or `phones`, distinct serials) on ``host:port`` (port 0 = a free one) from a thread."""

    def __init__(self, phone: Phone | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 phones: list[Phone] | None = None) -> None:
        self.phones: list[Phone] = list(phones) if phones else [phone or SimPhone()]
        if len({p.serial for p in self.phones}) != len(self.phones):
            raise ValueError("the phones of one server need distinct serials")
        self.phone: Phone = self.phones[0]
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

    @property
    def stopping(self) -> threading.Event:
        """Set when the server stops: long-running commands (sleep, logcat) end then."""
        return self._stop

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
            phone = self._host(conn, request)
            if phone is not None:
                self._device(conn, phone, _read_request(conn))
        except ConnectionReset:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (SyncClosed, OSError, ValueError) as exc:
            log.debug("connection ended: %s", exc)
        finally:
            with self._conns_lock:
                self._conns.discard(conn)
            conn.close()

    # ------------------------------------------------------------------ host services

    def _present(self) -> list[tuple[int, Phone]]:
        return [(TRANSPORT_ID + i, p) for i, p in enumerate(self.phones) if not p.gone]

    def _devices(self, long: bool) -> str:
        if long:
            return "".join(_long_line(p, tid) for tid, p in self._present())
        return "".join(f"{p.serial}\t{_state_text(p)}\n" for _, p in self._present())

    def _listed(self, long: bool) -> str:
        """A device-list request: it counts as one read for each phone (`device_state_polls`)."""
        for _, phone in self._present():
            with phone.lock:
                phone.device_list_reads += 1
        return self._devices(long)

    def _select(self, conn: socket.socket, selector: str) -> Phone | None:
        """The present phone named by `selector`; FAIL like adb (acquire_one_transport's messages) when none."""
        present = self._present()
        if selector.startswith("serial:"):
            found = [p for _, p in present if p.serial == selector[7:]]
            if not found:
                _fail(conn, f"device '{selector[7:]}' not found")
        elif selector.startswith("id:"):
            found = [p for tid, p in present if str(tid) == selector[3:]]
            if not found:
                _fail(conn, f"no device with transport id '{selector[3:]}'")
        else:
            found = [p for _, p in present]
            if not found:
                _fail(conn, "no devices/emulators found")
            elif len(found) > 1:
                _fail(conn, "more than one device/emulator")
                return None
        return found[0] if found else None

    def _host(self, conn: socket.socket, request: str) -> Phone | None:
        """Answer a host request; the phone the connection now talks to, if it was switched to one."""
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
            _okay(conn, self._listed(name == "devices-l"))
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
            elif any(p.serial == addr for _, p in self._present()):
                _okay(conn, f"already connected to {addr}")   # a Wi-Fi phone this server serves
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
        return None

    def _transport(self, conn: socket.socket, name: str) -> Phone | None:
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
        phone = self._select(conn, selector)
        if phone is None or not _ready(conn, phone):
            return None
        tid = TRANSPORT_ID + self.phones.index(phone)
        conn.sendall(b"OKAY" + (struct.pack("<Q", tid) if tport else b""))
        return phone

    def _device_query(self, conn: socket.socket, selector: str, name: str) -> None:
        phone = self._select(conn, selector)
        if phone is None:
            return
        if name == "get-state":
            _okay(conn, _state_text(phone))
            return
        if not _ready(conn, phone):
            return
        if name == "features":
            _okay(conn, FEATURES)
        elif name == "get-state":
            _okay(conn, "device")
        elif name == "get-serialno":
            _okay(conn, phone.serial)
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

    def _device(self, conn: socket.socket, phone: Phone, request: str) -> None:
        log.debug("device request %r for %s", request, phone.serial)
        run_device_service(_Route(phone, self._stop), conn, request)


def _state_text(phone: Phone) -> str:
    """The phone's state as the device list prints it (``no permissions (…); see […]`` in full)."""
    state = phone.device_state()
    return roms.NO_PERMISSIONS_LINE if state == "no permissions" else state


def _ready(conn: socket.socket, phone: Phone) -> bool:
    """A phone not in the ``device`` state refuses transports with adb's own message (docs/adb.md#real-phones-behaviours-r1-r11, R7)."""
    state = phone.device_state()
    if state != "device":
        _fail(conn, roms.TRANSPORT_REFUSALS[state])
        return False
    return True


def _long_line(phone: Phone, tid: int) -> str:
    """One line of ``adb devices -l``, from the phone's own properties."""
    if phone.device_state() != "device":   # a phone not ready lists no product, model or device
        return f"{phone.serial}            {_state_text(phone)} usb:1-1 transport_id:{tid}\n"
    props = phone.properties()
    model = props["ro.product.model"].replace(" ", "_")  # as adb prints it
    return (f"{phone.serial}            device product:{props['ro.product.name']} model:{model} "
            f"device:{props['ro.product.device']} transport_id:{tid}\n")


def _split_serial(rest: str) -> tuple[str, str, str]:
    """``127.0.0.1:5555:features`` -> ("127.0.0.1:5555", ":", "features"): serials may hold one ':'."""
    for service in ("features", "get-state", "get-serialno", "get-devpath", "transport", "list-forward",
                    "killforward", "forward:", "wait-for-", "reconnect"):
        idx = rest.find(":" + service)
        if idx > 0:
            return rest[:idx], ":", rest[idx + 1:]
    serial, _, service = rest.partition(":")
    return serial, ":", service
