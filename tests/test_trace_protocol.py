"""The trace phone over the wire, on the real recordings: the real adbutils client, ADBController and the stock
`adb` binary (when installed) see the recorded screens. Skips with a message where the data folder (`tests.support.data`) is absent."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import adbutils
import numpy as np
import pytest
from PIL import Image

from remote.core.device.adb_controller import ADBController
from remote.sim import serve
from remote.sim.trace import TracePhone
from tests.support.data import looked
from tests.support.trace_fixtures import TRACES, need_traces, recordings

REAL_DEV = TRACES.parent / "real-dev" / "Kqramazov_fdroid_utg" / "output" / "weibo_bfs_greedy" / "states"
WEIBO = TRACES / "weibo_bfs_greedy"
MAIN = "a7dec982549603c2c9a5fa7765e76ea2"        # Weibo's main screen (Following tab), where its paths begin
LOGIN = "aa93932eb34505ff1b1516b3e94a0c2b"       # the SMS-code login page


@pytest.fixture
def weibo_server():
    need_traces()
    with serve(trace=str(WEIBO), trace_start=MAIN, uiautomator_delay_ms=0) as server:
        yield server


def recorded_screen(phone: TracePhone) -> np.ndarray:
    """What the recording's screenshot of the current state looks like in the app area (decoded here)."""
    info = phone.recording.states[phone.snapshot()["trace_state"]]
    with Image.open(info.screen_path) as im:
        return np.asarray(im.convert("RGB"))[:1920, :1080]


@pytest.mark.parametrize("folder", recordings() or [pytest.param(
    None, marks=pytest.mark.skip(reason=f"DroidBot recordings not found at {looked('traces')}"))],
    ids=lambda p: p.name if p else "none")
def test_each_recording_loads_with_the_starts_paths_json_names(folder):
    paths = json.loads((folder / "paths.json").read_text(encoding="utf-8"))
    phone = TracePhone(trace=str(folder))
    assert phone.recording.launcher_state == paths["launcher_state"]
    assert phone.recording.first_app_state == paths["run_first_app_state"]
    assert phone.size == (1080, 1920)
    assert phone.snapshot()["trace_state"] == paths["launcher_state"]     # the default start


def test_adbutils_sees_the_recorded_screen_size_and_app(weibo_server):
    device = adbutils.AdbClient(port=weibo_server.port, socket_timeout=5).device(weibo_server.serial)
    assert device.shell("wm size").strip() == "Physical size: 1080x1920"
    assert device.getprop("ro.product.model") == "Kona for arm64" and device.getprop("ro.build.version.sdk") == "29"
    assert "com.sina.weibo/.VisitorMainTabActivity" in device.shell("dumpsys window")
    png = device.shell(["screencap", "-p"], encoding=None)
    served = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert served.shape == (1920, 1080, 3) and np.array_equal(served, recorded_screen(weibo_server.phone))


def test_input_over_adb_moves_between_recorded_screens(weibo_server):
    device = adbutils.AdbClient(port=weibo_server.port, socket_timeout=5).device(weibo_server.serial)
    device.shell("input tap 95 136")                     # "Login", top left
    assert weibo_server.phone.snapshot()["trace_state"] == LOGIN
    device.shell("input keyevent 4")                     # BACK: its most frequent recorded outcome there
    backs = weibo_server.phone.recording.outcomes(LOGIN, "key", "BACK")
    device.shell("input tap 540 1900")                   # the nav bar's home button
    snap = weibo_server.phone.snapshot()
    assert len(backs) > 1 and snap["visited"][2] == max(backs, key=backs.__getitem__)
    assert snap["visited"][3] == "5f6d51b4d0e4a8b9f79caa670d861f15"       # the launcher
    device.shell("monkey -p com.sina.weibo -c android.intent.category.LAUNCHER 1")   # resumes where it was
    assert weibo_server.phone.snapshot()["trace_state"] == snap["visited"][2] and snap["unrecorded_inputs"] == 0


def test_adb_controller_reads_the_trace_phone_like_a_phone(weibo_server, tmp_path):
    with ADBController(weibo_server.serial, port=weibo_server.port, socket_timeout=5,
                       state_dir=str(tmp_path / "ime")) as adb:
        assert adb.window_size() == (1080, 1920)
        assert np.array_equal(np.asarray(adb.screenshot()), recorded_screen(weibo_server.phone))  # raw screencap
        texts = {n.get("text") for n in ET.fromstring(adb.dump_hierarchy()).iter("node")}
        assert {"Login", "Following", "Hot"} <= texts
        assert adb.current_app() == {"package": "com.sina.weibo", "activity": ".VisitorMainTabActivity"}


def test_dumps_equal_an_independent_conversion_of_the_same_trees():
    """real-dev holds 107 of these Weibo screens converted to dumps by another tool (invisible views dropped,
    boxes clipped): the trace phone's dump lists the same nodes with the same attributes and boxes."""
    if not REAL_DEV.is_dir():
        pytest.skip(f"converted Weibo dumps not found at {looked('real-dev')}")
    need_traces()
    phone = TracePhone(trace=str(WEIBO), uiautomator_delay_ms=0)

    def key(n: ET.Element) -> tuple:
        return tuple(n.get(a) for a in ("class", "text", "content-desc", "resource-id", "bounds", "clickable"))

    compared = 0
    for path in sorted(REAL_DEV.glob("state_*.uia.xml")):
        state = phone.recording.tags.get(path.name[len("state_"):-len(".uia.xml")])
        if state is None or phone.recording.states[state].json_path.name != path.name.replace(".uia.xml", ".json"):
            continue
        phone.machine.enter(state)
        mine = sorted(key(n) for n in ET.fromstring(phone.dump_xml()).iter("node"))
        assert mine == sorted(key(n) for n in ET.parse(path).getroot().iter("node")), path.name
        compared += 1
    assert compared >= 100


@pytest.mark.skipif(shutil.which("adb") is None, reason="the stock adb client is not installed (apt-get install adb)")
def test_the_stock_adb_client_works_against_the_trace_phone(weibo_server):
    def adb(*args: str) -> bytes:
        return subprocess.run(["adb", "-P", str(weibo_server.port), "-s", weibo_server.serial, *args],
                              capture_output=True, timeout=30, check=True).stdout

    assert adb("shell", "wm", "size").strip() == b"Physical size: 1080x1920"
    assert adb("exec-out", "screencap", "-p") == weibo_server.phone.screencap(png=True)
    adb("shell", "input", "tap", "95", "136")
    assert weibo_server.phone.snapshot()["trace_state"] == LOGIN
    dump = adb("exec-out", "uiautomator", "dump", "/dev/tty").decode("utf-8")
    assert "SMS verification code" in dump and dump.rstrip().endswith("UI hierchary dumped to: /dev/tty")

