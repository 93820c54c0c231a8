"""The simulated phone serves uiautomator2's resident server (u2.jar) as the real one is served (issue 35).

The proof that the simulation speaks the protocol: uiautomator2's own client (``uiautomator2.connect``,
``dump_hierarchy``), unchanged, over the real adbutils against the simulated phone's adb server.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import xml.etree.ElementTree as ET

import adbutils
import pytest

from remote.errors import ConfigError
from remote.sim import SimPhone, tree_server
from remote.sim.scenario import Scenario

u2 = pytest.importorskip("uiautomator2")   # a dependency of remote (pyproject): present wherever remote is installed

JAR = (importlib.resources.files("uiautomator2") / "assets" / "u2.jar").read_bytes()


def connect(adb_client: adbutils.AdbClient, serial: str):  # noqa: ANN201 - uiautomator2 has no type hints
    return u2.connect(adb_client.device(serial))


def test_uiautomator2s_own_client_pushes_the_jar_launches_the_server_and_dumps(adb_client, sim_server, sim_phone):
    device = connect(adb_client, sim_server.serial)
    xml = device.dump_hierarchy()
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy rotation=\"0\">")
    root = ET.fromstring(xml[xml.find("<hierarchy"):])
    first = root[0]
    keys = list(first.attrib)
    assert keys[keys.index("selected") + 1:] == ["visible-to-user", "bounds", "drawing-order", "hint", "display-id"]
    assert root[-1].get("package") == "com.android.systemui"        # every window's root, unless root_in_active
    assert "\r\n  <node" in xml                                      # indented, CRLF
    assert hashlib.md5(sim_phone.fs.read(tree_server.JAR)).hexdigest() == hashlib.md5(JAR).hexdigest()
    launches = [c for c in sim_phone.commands if "app_process" in c]
    assert launches == ["CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008"]
    assert sim_phone.tree_server.snapshot() == {"running": True, "launches": 1, "reads": 1, "dumps_refused": 0}
    active = device.dump_hierarchy(root_in_active=True)
    assert ET.fromstring(active[active.find("<hierarchy"):])[-1].get("package") != "com.android.systemui"
    device.stop_uiautomator()
    assert not sim_phone.tree_server.snapshot()["running"]           # the server lives as long as its stream


def test_uiautomator2s_own_screenshot_is_the_screen_as_a_jpeg(adb_client, sim_server, sim_phone):
    """``d.screenshot()`` asks ``takeScreenshot(1, 80)`` and decodes the base64 JPEG the jar answers (with the line
    breaks of android.util.Base64.DEFAULT): the same pixels ``screencap`` gives, within JPEG's loss."""
    import numpy as np

    device = connect(adb_client, sim_server.serial)
    shot = np.asarray(device.screenshot().convert("RGB"), dtype=np.int16)
    raw = adb_client.device(sim_server.serial).shell("screencap", encoding=None)
    width, height = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:8], "little")
    screen = np.frombuffer(raw[16:16 + width * height * 4], np.uint8).reshape(height, width, 4)[:, :, :3]
    assert shot.shape == screen.shape == (sim_phone.size[1], sim_phone.size[0], 3)
    assert np.abs(shot - screen).mean() < 3.0                       # quality 80: close, not equal
    answer = device.jsonrpc.takeScreenshot(1, 80)
    assert "\n" in answer and all(len(line) <= 76 for line in answer.splitlines())


def test_the_jar_is_pushed_only_when_its_md5_differs(adb_client, sim_server, sim_phone):
    sim_phone.fs.write(tree_server.JAR, b"an old jar")
    connect(adb_client, sim_server.serial).stop_uiautomator()
    assert sim_phone.fs.read(tree_server.JAR) == JAR
    sim_phone.fs.write(tree_server.JAR, JAR, append=False)
    entry = sim_phone.fs.get(tree_server.JAR)
    connect(adb_client, sim_server.serial).stop_uiautomator()
    assert sim_phone.fs.get(tree_server.JAR) is entry                 # same md5: not written again


def test_the_launch_needs_the_jar_on_the_phone(adb_client, sim_server):
    out = adb_client.device(sim_server.serial).shell("CLASSPATH=/data/local/tmp/u2.jar app_process / "
                                                     "com.wetest.uia2.Main -p 9008")
    assert "Could not find class 'com.wetest.uia2.Main'" in out


@pytest.mark.sim(automation_holder="appium")
def test_a_holder_makes_the_launch_say_already_registered(adb_client, sim_server):
    with pytest.raises(u2.exceptions.AccessibilityServiceAlreadyRegisteredError):
        connect(adb_client, sim_server.serial)


def test_a_device_port_without_the_server_refuses_the_stream(adb_client, sim_server):
    with pytest.raises(adbutils.AdbError):
        adb_client.device(sim_server.serial).create_connection(adbutils.Network.TCP, 9008)


def test_uiautomator_dump_is_refused_while_the_server_runs(adb_client, sim_server, sim_phone):
    device = connect(adb_client, sim_server.serial)
    out = adb_client.device(sim_server.serial).shell("uiautomator dump /dev/tty")
    assert "already registered" in out and "<hierarchy" not in out
    assert sim_phone.tree_server.dumps_refused == 1
    device.stop_uiautomator()
    assert "<hierarchy" in adb_client.device(sim_server.serial).shell("uiautomator dump /dev/tty")


@pytest.mark.sim(tree_server_empty_reads=1)
def test_an_empty_hierarchy_now_and_then_is_retried_by_uiautomator2(adb_client, sim_server, sim_phone):
    xml = connect(adb_client, sim_server.serial).dump_hierarchy()
    assert "<node" in xml and sim_phone.tree_server.reads == 2       # the empty answer, then the tree


@pytest.mark.sim(tree_server_dies_after=[1])
def test_a_server_that_loses_uiautomation_answers_32001_and_uiautomator2_relaunches_it(adb_client, sim_server,
                                                                                      sim_phone):
    device = connect(adb_client, sim_server.serial)
    device.dump_hierarchy()
    assert "<node" in device.dump_hierarchy()                        # -32001, relaunched, read again
    assert sim_phone.tree_server.launches == 2


def test_json_rpc_errors_come_as_http_200_with_their_code(adb_client, sim_server):
    device = connect(adb_client, sim_server.serial)
    sock = adb_client.device(sim_server.serial).create_connection(adbutils.Network.TCP, 9008)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "dumpWindowHierarchy", "params": {"compressed": False}})
    sock.sendall(f"POST /jsonrpc/0 HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode())
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    head, _, data = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and json.loads(data)["error"]["code"] == -32602
    device.stop_uiautomator()


def test_a_stale_tree_is_answered_after_a_screen_change_when_the_scenario_says_so():
    phone = SimPhone(Scenario(tree_server_stale_reads=1))
    state = phone.tree_server
    state.port, state.launches = 9008, 1
    call = json.dumps({"method": "dumpWindowHierarchy", "params": [False, 50, True], "id": 1}).encode()
    before = tree_server._jsonrpc(phone, call)["result"]
    phone.launch("com.tencent.mm")
    assert tree_server._jsonrpc(phone, call)["result"] == before       # the cached tree, once
    assert tree_server._jsonrpc(phone, call)["result"] != before


@pytest.mark.parametrize(("key", "value"), [("tree_server_read_ms", -1), ("tree_server_dies_after", 3),
                                            ("tree_server_crashes", "yes"), ("automation_holder_refusals", 1.5)])
def test_bad_tree_server_keys_are_refused(key, value):
    with pytest.raises(ConfigError, match=key):
        Scenario(**{key: value})


@pytest.mark.slow
def test_uiautomator2s_client_works_against_the_remote_sim_command(tmp_path):
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "remote", "sim", "--port", str(free)],
                            env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline()        # it serves once it says where
        client = adbutils.AdbClient(host="127.0.0.1", port=free, socket_timeout=10)
        device = u2.connect(client.device_list()[0])
        xml = device.dump_hierarchy(root_in_active=True)
        assert 'package="com.android.launcher3"' in xml and xml.count("\r\n") > 10
        device.stop_uiautomator()
    finally:
        proc.terminate()
        proc.wait(10)
