"""The product's resident tree server (issue 35): ``--tree auto`` reads trees from uiautomator2's u2.jar and
falls back to ``uiautomator dump`` for each conflict, through the CLI and the real adbutils client against the
simulated phone. Each test judges the phone's own counts (launches, reads, dumps refused), not only the record.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from remote.cli import main
from remote.core.device.adb_controller import ADBController
from remote.core.device.fast_tree import TreeMode, describe
from remote.errors import DumpFailed
from tests.test_report import loads_nothing

HEADLINE = "给张三发微信消息说你好"


def run_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str, *flags: str,
            task: str = HEADLINE) -> tuple[int, dict, dict]:
    """``remote run --device sim --tree auto --json TASK``: (exit status, the summary, the run record)."""
    path = tmp_path / "scenario.yaml"
    path.write_text("uiautomator_delay_ms: 0\n" + scenario, encoding="utf-8")
    started = time.monotonic()
    code = main(["run", "--device", "sim", "--scenario", str(path), "--runs-dir", str(tmp_path / "runs"), "--json",
                 *(flags or ("--tree", "auto")), task])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert time.monotonic() - started < 120, "a bounded time to the outcome"
    record = json.loads((Path(summary["record"]) / "run.json").read_text(encoding="utf-8"))
    return code, summary, record


def done(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str) -> tuple[dict, dict, dict]:
    """The headline through the CLI, which must succeed with the message delivered: (the run's tree report,
    the phone's tree-server counts, the record)."""
    code, summary, record = run_cli(tmp_path, capsys, scenario)
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["chats"] == {"张三": ["你好"]}
    return record["device"]["dumps"]["tree"], served(record), record


def dumps(record: dict) -> list[str]:
    return [c for c in record["device_state"]["commands"] if "uiautomator dump" in c]


def served(record: dict) -> dict:
    return record["device_state"]["tree_server"]


@pytest.mark.slow
def test_auto_reads_every_tree_from_the_server_and_reports_its_cold_start(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "")
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["chats"] == {"张三": ["你好"]}
    tree = record["device"]["dumps"]["tree"]
    assert tree["state"] == "serving" and tree["version"] == "0.4.1" and tree["cold_start_s"] > 0
    assert summary["tree"]["cold_start_s"] == tree["cold_start_s"]
    assert dumps(record) == [] and served(record)["launches"] == 1
    assert served(record)["reads"] == tree["reads"] >= len(record["steps"])   # a fresh tree behind every step
    assert record["final_check"]["method"] == "tree"
    frames = summary["frames"]                                       # the summary says where frames came from
    # --frames needed (the default): a frame only of each screen a tap was aimed on (its verdict may compare the
    # pixels before and after it, should the two trees agree); typing, the taps the next step types after on their
    # second look, and the finished screen are judged on trees alone, and their frames are never taken
    taps = [s for s in record["steps"] if s["step"]["action"] == "tap"]
    assert frames["taken"] == record["device"]["link"]["grabs"] == record["device"]["captures"]["frames"] \
        == len(taps) == 3
    assert frames["when_read"] is True
    pictured = {s["step"]["step"] for s in record["steps"] if "before" in s["artifacts"]}
    assert pictured == {s["step"]["step"] for s in taps}               # the record keeps what the run looked at
    kept = [s["artifacts"] for s in record["steps"]]
    assert all(f"{k}_xml" in a for a in kept for k in ("before", "after") if k in a)   # a picture with its tree
    assert sum("after_xml" in a and "after" not in a for a in kept) >= 3   # a screen judged on its tree: the tree
    page = loads_nothing((Path(summary["record"]) / "report.html").read_text(encoding="utf-8"))   # fetches nothing
    assert "no frame was taken, nothing read its pixels" in page.visible    # a screen judged on its tree alone
    link = record["device"]["link"]
    assert frames["from_tree_server"] == link["shots"]
    assert link["shot_s"] > 0 and link["server_shots"] in (True, False)   # the server's shot timed, the choice made


@pytest.mark.slow
def test_frames_every_takes_a_frame_of_every_screen_a_step_was_judged_on(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "", "--tree", "auto", "--frames", "every")
    assert code == 0 and record["device_state"]["chats"] == {"张三": ["你好"]}
    # the launch's app screen and each screen after a later step (the finished screen, read again, showed the last
    # step's tree to the letter and kept that step's frame)
    assert summary["frames"]["taken"] == record["device"]["captures"]["frames"] == len(record["steps"]) - 1
    assert summary["frames"]["when_read"] is False
    kept = [s["artifacts"] for s in record["steps"]]
    assert all(k in a for a in kept for k in ("before", "after") if f"{k}_xml" in a)   # every screen's picture


@pytest.mark.slow
@pytest.mark.parametrize("foreseen", [True, False], ids=["foreseen", "taken-before-the-tap"])
def test_a_tap_that_changes_nothing_is_judged_on_the_frame_taken_before_it(tmp_path, capsys, monkeypatch, foreseen):
    """--frames needed: a tap's verdict compares the pictures before and after it when the two trees agree (a
    canvas, a WebView), so the frame of the screen it was aimed on is taken before it touches: a tap that changed
    nothing (the chat's own title) is said as such, on the pixels, and tried again, never judged without them.
    Foreseen: the step before took that frame beside its last read (the next step is a tap); not foreseen (the
    screen read as a tree alone), the tap takes it before it touches."""
    if not foreseen:
        monkeypatch.setattr("remote.runner.task_runner.needs_pixels_before", lambda step: False)
    module = tmp_path / "modules" / "probe"
    module.mkdir(parents=True)
    (module / "config.yaml").write_text("name: probe\npackage: com.tencent.mm\nkeywords: [探针]\n", encoding="utf-8")
    (module / "tasks.yaml").write_text(
        "tasks:\n  - name: title\n    description: 打开张三的聊天, 再点它的标题\n    patterns: [探针点标题]\n"
        "    steps:\n      - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}\n"
        "      - {action: tap, target_ref: \"text:张三\"}\n      - {action: tap, target_ref: \"text:张三\", retry: 1}\n",
        encoding="utf-8")
    monkeypatch.setenv("REMOTE_MODULES", str(tmp_path / "modules"))
    code, summary, record = run_cli(tmp_path, capsys, "", task="探针点标题")
    assert code == 1 and summary["failure"] == "no_change" and summary["frames"]["when_read"] is True
    title = record["steps"][-1]
    assert title["retry_count"] == 1 and "no visible change after 2 tries" in title["error_message"]
    assert title["verify_result"]["method"] == "pixel" and title["verify_result"]["outcome"] == "no_change"
    assert {"before", "after"} <= set(title["artifacts"])          # both pictures it was judged on, recorded
    assert dumps(record) == []


@pytest.mark.slow
def test_another_holder_means_the_dump_the_holder_named_and_the_task_done(tmp_path, capsys):
    # Appium holds UiAutomation for the launch and the first dump, then lets go (a session that was ending)
    tree, phone, record = done(tmp_path, capsys, "automation_holder: appium\nautomation_holder_refusals: 2\n")
    assert tree["state"] == "off" and tree["trouble"] == "held"
    assert "Appium's UiAutomator2 server" in tree["holder"] and "Appium" in tree["fallback"]
    assert phone["launches"] == 0 and len(dumps(record)) >= 2


@pytest.mark.slow
def test_a_server_killed_mid_run_is_relaunched_once_and_the_task_done(tmp_path, capsys):
    tree, phone, record = done(tmp_path, capsys, "tree_server_dies_after: [2]\n")
    assert tree["relaunches"] == 1 and tree["state"] == "serving"
    assert phone["launches"] == 2 and dumps(record) == []


@pytest.mark.slow
def test_a_server_that_dies_again_leaves_the_dump_for_the_rest_of_the_run_never_both(tmp_path, capsys):
    tree, phone, record = done(tmp_path, capsys, "tree_server_dies_after: [2, 1]\n")
    assert tree["relaunches"] == 1 and tree["state"] == "off" and tree["trouble"] == "died"
    assert phone["launches"] == 2 and len(dumps(record)) >= 1
    assert phone["dumps_refused"] == 0 and not phone["running"]   # stopped before any dump


@pytest.mark.slow
def test_empty_hierarchies_are_read_again(tmp_path, capsys):
    tree, phone, record = done(tmp_path, capsys, "tree_server_empty_reads: 2\n")
    assert phone["reads"] == tree["reads"] + 2 and dumps(record) == []


@pytest.mark.slow
def test_a_stale_tree_after_an_action_is_not_trusted(tmp_path, capsys):
    tree, phone, _ = done(tmp_path, capsys, "tree_server_stale_reads: 1\n")
    assert tree["stale_rereads"] >= 1 and phone["reads"] == tree["reads"]


def test_tree_dump_never_starts_the_server(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "", "--tree", "dump", task="打开蓝牙")
    assert code == 0 and served(record)["launches"] == 0 and dumps(record)
    assert describe(summary["tree"]) == "UI trees: uiautomator dump (--tree dump)"


@pytest.mark.sim(tree_server_crashes=True)
def test_tree_server_alone_fails_clearly_when_the_server_cannot_start(sim_server, sim_phone):
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.SERVER).connect()
    for _ in range(2):       # the second read does not turn to the dump either
        with pytest.raises(DumpFailed, match="quit at start"):
            adb.dump_hierarchy()
    assert sim_phone.tree_server.dumps_refused == 0 and not [c for c in sim_phone.commands if "uiautomator" in c]


@pytest.mark.sim(tree_server_crashes=True)
def test_a_server_the_rom_crashes_leaves_the_dump(sim_server, sim_phone):
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    assert "<hierarchy" in adb.dump_hierarchy() and adb.dump_hierarchy()
    assert adb.tree.report.trouble == "launch" and "uiautomator dump" in adb.tree.report.fallback
    assert sum("app_process" in c for c in sim_phone.commands) == 1      # not launched again in this run


def test_one_server_per_phone_and_process_is_kept_across_sessions(sim_server, sim_phone):
    first = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    first.dump_hierarchy()
    first.close()
    second = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    second.dump_hierarchy()
    assert second.tree.report.cold_start_s == 0.0 and "already running" in describe(second.tree.report)
    assert sim_phone.tree_server.launches == 1 and sim_phone.tree_server.reads == 2


def frames_of(adb: ADBController, count: int) -> list:
    return [adb.frame() for _ in range(count)]


@pytest.mark.parametrize(("shot_ms", "mb_s", "png_ms", "serves"), [(0, 10.0, 2000, True), (1500, 20.0, 0, False)])
def test_the_servers_screenshots_serve_only_when_they_cost_less_than_screencap(sim_server, sim_phone, shot_ms, mb_s,
                                                                               png_ms, serves):
    """Frames from the server's takeScreenshot when one costs less than the screencap wire measured before it
    (first: a raw frame ~1 s, a PNG 2 s; then: a PNG encoded at once); a server shot slower than that is taken
    once, then screencap."""
    object.__setattr__(sim_phone.scenario, "link_mb_s", mb_s)
    object.__setattr__(sim_phone.scenario, "png_ms", png_ms)
    object.__setattr__(sim_phone.scenario, "tree_server_shot_ms", shot_ms)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    first = adb.frame()                                   # before the server serves: screencap, and its cost
    adb.dump_hierarchy()                                  # the server now serves
    later = frames_of(adb, 3)
    report = adb.link_report()
    screencaps = [c for c in sim_phone.commands if c.startswith("screencap")]
    assert report.server_shots is serves and report.shot_s is not None
    assert report.shots == (3 if serves else 1) and len(screencaps) == (2 if serves else 4)   # probe + first
    assert all(f.shape == first.shape for f in later)
    assert abs(later[-1].astype(int) - first.astype(int)).mean() < 3.0   # the same screen, within JPEG's loss


def test_when_the_server_serves_the_first_frame_screencap_is_only_timed(sim_server, sim_phone):
    """A session whose server answers before its first frame reads only a raw frame's first megabyte to know
    what screencap would cost (20 MB/s: ~0.5 s a frame), then takes every frame from the server."""
    object.__setattr__(sim_phone.scenario, "link_mb_s", 20.0)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    adb.dump_hierarchy()
    frames_of(adb, 3)
    report = adb.link_report()
    assert report.server_shots is True and report.shots == 3 and report.raw_s is not None and report.raw_s > 0.4
    assert len([c for c in sim_phone.commands if c.startswith("screencap")]) == 1


def test_a_secure_layer_is_black_in_the_servers_screenshot_too(sim_server, sim_phone):
    from remote.errors import SecureScreen

    object.__setattr__(sim_phone.scenario, "link_mb_s", 20.0)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    adb.frame()
    adb.dump_hierarchy()
    object.__setattr__(sim_phone.scenario, "secure_layer", True)
    with pytest.raises(SecureScreen):
        adb.frame()
    assert adb.link_report().shots >= 1


def test_without_the_server_frames_come_from_screencap(sim_server, sim_phone):
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.DUMP).connect()
    frames_of(adb, 3)
    assert adb.link_report().shots == 0 and adb.link_report().server_shots is None
    assert sim_phone.tree_server.launches == 0


def test_with_the_server_a_steps_tree_is_read_after_its_wait_never_during_it(sim_server, sim_phone):
    """The server reads at once (no wait for idle, unlike the dump): a tree read while the step waits would be of
    the screen before the action's effect. So the step's tree is read after the wait (reads during it only look
    for the effect, and with no screen looked at before the action there is nothing to look for: none), and an
    app's launch is not prefetched."""
    from remote.runner.capture import Capture

    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    adb.dump_hierarchy()                                          # the server serves
    capture = Capture(adb)
    capture.prefetch()
    assert sim_phone.tree_server.reads == 1                       # nothing read beside a launch's wait
    adb.tap(540, 1200)
    reads_when_waiting: list[int] = []
    screen = capture.after_action(0.2, lambda s: reads_when_waiting.append(sim_phone.tree_server.reads))
    assert reads_when_waiting == [1] and sim_phone.tree_server.reads >= 2 and screen.xml is not None
    assert not screen.tree_reused


def test_the_servers_launch_stream_waits_on_its_silence_without_end(sim_server, sim_phone):
    """The server prints nothing once started: its launch stream has no read timeout (adbutils' 600 s would take a
    long session's silence for the server's end, and a later start in the same process for another holder)."""
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    adb.dump_hierarchy()
    server = adb.tree.server
    assert server is not None and server.running
    assert server._launch is not None and server._launch.conn.conn.gettimeout() is None


def test_a_tree_read_before_the_last_action_is_not_reused(sim_server, sim_phone):
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    adb.dump_hierarchy()
    assert adb.recent_dump(5.0) is not None
    adb.tap(540, 1200)
    assert adb.recent_dump(5.0) is None


def doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str) -> tuple[int, dict[str, dict]]:
    path = tmp_path / "phone.yaml"
    path.write_text("uiautomator_delay_ms: 0\n" + scenario, encoding="utf-8")
    code = main(["doctor", "--device", "sim", "--tree", "auto", "--scenario", str(path), "--json"])
    return code, {c["check"]: c for c in json.loads(capsys.readouterr().out)["checks"]}


def test_doctor_says_the_fast_tree_started_its_version_and_a_warm_read(tmp_path, capsys):
    code, lines = doctor(tmp_path, capsys, "")
    assert code == 0 and lines["fast tree"]["ok"] and lines["UI dump"]["ok"]
    assert lines["fast tree"]["measured"].startswith("u2.jar 0.4.1 (cold start ") and "warm read" in \
        lines["fast tree"]["measured"]


@pytest.mark.parametrize(("scenario", "source"), [
    # a USB link: the server's JPEG beats a raw frame's capture and 10 MB on the wire (docs/devices.md)
    ("link_mb_s: 38\nscreencap_ms: 100\ntree_server_shot_ms: 24\n", "as a JPEG from the tree server"),
    ("", "as RAW"),   # over loopback the raw frame is the cheaper
])
def test_doctor_names_where_its_timed_screenshot_came_from(tmp_path, capsys, scenario, source):
    code, lines = doctor(tmp_path, capsys, scenario)
    line = lines["screenshot"]
    assert code == 0 and line["ok"] and f"for 1080x2400 {source} (link " in line["measured"], line["measured"]


@pytest.mark.parametrize(("scenario", "ok", "says"), [
    ("automation_holder: appium\n", False, "Appium's UiAutomator2 server"),
    ("tree_server_crashes: true\n", True, "--tree dump"),
])
def test_doctor_says_why_the_fast_tree_did_not_start_and_what_to_do(tmp_path, capsys, scenario, ok, says):
    code, lines = doctor(tmp_path, capsys, scenario)
    line = lines["fast tree"]
    assert line["ok"] is ok and line["measured"].startswith("not started: ") and line["steps"]
    assert says in line["measured"] + " ".join(line["steps"])


def test_the_config_key_takes_the_three_modes_and_refuses_others():
    from remote.config import Settings
    from remote.errors import ConfigError

    assert Settings.from_env({"REMOTE_TREE": "Server"}).tree == "server"
    assert Settings.from_env({}).tree == "auto"
    with pytest.raises(ConfigError, match="REMOTE_TREE"):
        Settings.from_env({"REMOTE_TREE": "fast"})


@pytest.mark.sim(automation_holder="appium")
def test_tree_server_alone_names_the_holder_and_never_dumps(sim_server, sim_phone):
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.SERVER).connect()
    with pytest.raises(DumpFailed, match="Appium's UiAutomator2 server"):
        adb.dump_hierarchy()
    assert not [c for c in sim_phone.commands if "uiautomator dump" in c]


def test_replay_remakes_the_tree_servers_focus_verdicts(tmp_path, capsys):
    """A run on the default path (the tree server) judges the tap before typing by the field its tree shows
    focused; `remote replay` makes that verdict again from the recorded trees, and says so when they disagree."""
    code, summary, record = run_cli(tmp_path, capsys, "")
    assert code == 0
    focus = [s for s in record["steps"] if (s.get("verify_result") or {}).get("method") == "focus-tree"]
    assert focus and focus[0]["verify_result"]["outcome"] == "succeeded"
    folder = Path(summary["record"])
    assert main(["replay", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "0 changed" in out and f"same    step {focus[0]['step']['step']:>2} verify" in out
    # the tree after the tap, with nothing focused: the recorded verdict cannot be made again
    after_xml = folder / focus[0]["artifacts"]["after_xml"]
    after_xml.write_text(after_xml.read_text(encoding="utf-8").replace('focused="true"', 'focused="false"'),
                         encoding="utf-8")
    assert main(["replay", str(folder)]) == 1
    assert "no focused field in the recorded trees" in capsys.readouterr().out
