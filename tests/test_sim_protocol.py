"""The simulated phone's adb server, driven by the real adbutils client and by raw sockets."""

from __future__ import annotations

import socket
import struct

import adbutils
import pytest
from adbutils.errors import AdbError

from remote.sim import serve
from remote.sim.adb_server import FEATURES


def _raw(port: int, *requests: str) -> bytes:
    """Send requests on one connection and read everything until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        for req in requests:
            s.sendall(b"%04x" % len(req.encode()) + req.encode())
        data = bytearray()
        while chunk := s.recv(65536):
            data += chunk
        return bytes(data)


def test_host_version_devices_and_features(sim_server, adb_client):
    assert adb_client.server_version() == 41
    assert [d.serial for d in adb_client.device_list()] == [sim_server.serial]
    (info,) = adb_client.list(extended=True)
    assert info.state == "device" and info.tags["model"] == "SimPhone" and info.tags["transport_id"] == "1"
    assert adb_client.device(sim_server.serial).get_features() == FEATURES
    assert "sendrecv_v2" not in FEATURES  # not implemented, so never advertised


def test_raw_host_requests(sim_server):
    assert _raw(sim_server.port, "host:version") == b"OKAY00040029"
    assert _raw(sim_server.port, "host:devices") == b"OKAY" + b"%04x" % (len(sim_server.serial) + 8) + \
        sim_server.serial.encode() + b"\tdevice\n"
    assert _raw(sim_server.port, f"host-serial:{sim_server.serial}:get-state") == b"OKAY0006device"
    assert _raw(sim_server.port, "host:nonsense").startswith(b"FAIL")


def test_transport_switch_variants(sim_server):
    serial = sim_server.serial
    out = _raw(sim_server.port, f"host:tport:serial:{serial}", "shell:echo hi")
    assert out == b"OKAY" + struct.pack("<Q", 1) + b"OKAY" + b"hi\n"
    assert _raw(sim_server.port, f"host:transport:{serial}", "exec:echo hi") == b"OKAYOKAYhi\n"
    assert _raw(sim_server.port, "host:transport-id:1", "shell:echo x") == b"OKAYOKAYx\n"
    assert _raw(sim_server.port, "host:transport-any", "shell:echo y") == b"OKAYOKAYy\n"
    assert _raw(sim_server.port, "host:transport:nope") == b"FAIL" + b"%04x" % len("device 'nope' not found") + \
        b"device 'nope' not found"


def test_unknown_serial_fails_on_first_use(adb_client):
    with pytest.raises(AdbError, match="device 'nope' not found"):
        adb_client.device("nope").shell("true")


def test_shell_v1_and_v2_exit_codes(sim_server, adb_client):
    d = adb_client.device(sim_server.serial)
    assert d.shell2("exit 3", v2=True).returncode == 3
    v2 = d.shell2("echo out; echo err >&2; false", v2=True)
    assert (v2.returncode, v2.stdout, v2.stderr) == (1, "out\n", "err\n")
    v1 = d.shell2("ls /nope")
    assert v1.returncode == 1 and "No such file or directory" in v1.output
    assert d.shell2("true && echo yes || echo no").output == "yes\n"


def test_shell_v2_packets_on_the_wire(sim_server):
    out = _raw(sim_server.port, f"host:transport:{sim_server.serial}", "shell,v2,TERM=xterm,raw:echo hi; exit 7")
    assert out == b"OKAYOKAY" + b"\x01" + struct.pack("<I", 3) + b"hi\n" + b"\x03" + struct.pack("<I", 1) + b"\x07"


def test_exec_screencap_png_matches_shell(sim_server):
    png = _raw(sim_server.port, f"host:transport:{sim_server.serial}", "exec:screencap -p")[8:]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    via_shell = _raw(sim_server.port, f"host:transport:{sim_server.serial}", "shell:screencap -p")[8:]
    assert png == via_shell


def test_raw_screencap_header(sim_server):
    raw = _raw(sim_server.port, f"host:transport:{sim_server.serial}", "exec:screencap")[8:]
    w, h, fmt, colorspace = struct.unpack("<IIII", raw[:16])
    assert (w, h, fmt, colorspace) == (1080, 2400, 1, 1)
    assert len(raw) == 16 + w * h * 4


def test_sync_push_stat_list_pull(sim_server, adb_client, tmp_path):
    d = adb_client.device(sim_server.serial)
    d.sync.push(b"hello sim", "/sdcard/Download/a.txt")
    info = d.sync.stat("/sdcard/Download/a.txt")
    assert info.size == 9 and info.mode & 0o170000 == 0o100000
    assert d.sync.stat("/sdcard/missing").mode == 0
    assert "a.txt" in [f.path for f in d.sync.list("/sdcard/Download")]
    assert d.sync.read_text("/sdcard/Download/a.txt") == "hello sim"
    d.sync.pull("/sdcard/Download/a.txt", tmp_path / "a.txt")
    assert (tmp_path / "a.txt").read_bytes() == b"hello sim"
    assert d.shell("cat /storage/emulated/0/Download/a.txt") == "hello sim"


def test_sync_recv_of_missing_file_fails(sim_server):
    path = b"/sdcard/none"
    with socket.create_connection(("127.0.0.1", sim_server.port), timeout=5) as s:
        req = f"host:transport:{sim_server.serial}".encode()
        s.sendall(b"%04x" % len(req) + req + b"0005sync:" + b"RECV" + struct.pack("<I", len(path)) + path)
        data = b""
        while len(data) < 12:
            data += s.recv(100)
        assert data[:8] == b"OKAYOKAY" and data[8:12] == b"FAIL"


def test_framebuffer_header(sim_server, adb_client):
    image = adb_client.device(sim_server.serial).framebuffer()
    assert image.size == (1080, 2400)


def test_devices_vanish_after_drop():
    with serve(drop_after_commands=2, uiautomator_delay_ms=0) as server:
        client = adbutils.AdbClient(port=server.port, socket_timeout=5)
        d = client.device(server.serial)
        assert d.shell("echo 1") == "1"
        assert d.shell("echo 2") == "2"
        assert client.device_list() == []
        with pytest.raises(AdbError, match=f"device '{server.serial}' not found"):
            d.shell("echo 3")
        assert server.phone.snapshot()["commands"] == ["echo 1", "echo 2"]


def test_reset_every_n_closes_without_reply():
    with serve(reset_every_commands=2, uiautomator_delay_ms=0) as server:
        d = adbutils.AdbClient(port=server.port, socket_timeout=5).device(server.serial)
        assert d.shell("echo a") == "a"
        with pytest.raises((AdbError, ConnectionResetError)):
            d.shell("echo b")
        assert d.shell("echo c") == "c"  # a reconnect recovers


def test_server_close_ends_a_streaming_command():
    server = serve(uiautomator_delay_ms=0)
    d = adbutils.AdbClient(port=server.port, socket_timeout=5).device(server.serial)
    conn = d.shell("logcat", stream=True)
    assert conn.conn.recv(100).startswith(b"--------- beginning of main")
    server.close()
    conn.conn.settimeout(5)
    assert conn.conn.recv(100) == b""  # closed, not hung
    conn.close()
