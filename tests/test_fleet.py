"""Many phones on one host (issue 18): batch and schedule files, the simulated farm, the local pool (12 tasks
on 3 phones, never two at once on one phone, from the phones' own command logs), a pinned task, a cable pulled
mid-batch, Ctrl-C, schedules on an injected clock, and the commands as a user types them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import adbutils
import pytest

from remote.cli import main
from remote.errors import ConfigError, ExitCode
from remote.fleet.files import expand, load_batch, load_schedule
from remote.fleet.jobs import ANY, Job, JobResult, Phone, RunSettings
from remote.fleet.local import LocalFleet
from remote.fleet.room import Room
from remote.fleet.schedule import Scheduler
from remote.runner import RunOptions
from remote.sim import SimPhone, SimServer, serve_farm

ROOT = Path(__file__).resolve().parents[1]
FAST = {"uiautomator_delay_ms": 0}
APPS = {"打开设置": "com.android.settings", "打开微信": "com.tencent.mm", "打开浏览器": "com.android.chrome"}
# What each task sends its phone: a launch by package, or (WeChat's module) a tap on the launcher icon.
SIGNS = {"打开设置": "com.android.settings", "打开微信": "input tap", "打开浏览器": "com.android.chrome"}


# ---------------------------------------------------------------------------- the phones' command logs
class TimedLog(list):  # type: ignore[type-arg]
    """A phone's command log that also notes when each command arrived (wall clock, like JobResult)."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, command: str) -> None:
        self.times.append(time.time())
        super().append(command)


class TimedPhone(SimPhone):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = TimedLog()


def farm(count: int, **scenario: Any) -> SimServer:
    phones = [TimedPhone({**FAST, **scenario}, serial=f"farm-{i + 1}") for i in range(count)]
    return SimServer(phones=phones).start()


@pytest.fixture
def three_phones() -> Iterator[SimServer]:
    server = farm(3)
    try:
        yield server
    finally:
        server.close()


def phones_of(server: SimServer) -> list[Phone]:
    return [Phone(p.serial, server.host, server.port) for p in server.phones]


def check_one_task_at_a_time(server: SimServer, results: list[JobResult], since: dict[str, int]) -> None:
    """From each phone's own log: every command it got after ``since`` falls inside one job that ran on it,
    those jobs never overlap, and each job's launch reached its phone while it ran."""
    for phone in server.phones:
        log: TimedLog = phone.commands  # type: ignore[assignment]
        mine = sorted((r for r in results if r.phone == phone.serial), key=lambda r: r.started)
        for a, b in zip(mine, mine[1:], strict=False):
            assert a.ended <= b.started, f"{phone.serial}: jobs #{a.job.index} and #{b.job.index} overlap"
        for t, command in list(zip(log.times, log, strict=True))[since.get(phone.serial, 0):]:
            owners = [r for r in mine if r.started <= t <= r.ended]
            assert len(owners) == 1, f"{phone.serial}: {command!r} at {t} belongs to {len(owners)} jobs"
        for r in mine:
            if r.ok:
                during = [c for t, c in zip(log.times, log, strict=True) if r.started <= t <= r.ended]
                assert any(SIGNS[r.job.task] in c for c in during), f"#{r.job.index}: not launched there: {during}"
                assert during[-1] == "dumpsys window"              # its final check asked this phone


def settings(tmp_path: Path) -> RunSettings:
    return RunSettings(options=RunOptions(runs_dir=tmp_path / "runs"))


def twelve_jobs() -> list[Job]:
    tasks = list(APPS)
    return [Job(task=tasks[i % 3], device=ANY, index=i) for i in range(12)]


# ---------------------------------------------------------------------------- files
def write(tmp_path: Path, text: str, name: str = "f.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "line", "words"), [
    ("- task: 打开设置\n  devise: any\n", 2, "unknown key 'devise'"),
    ("- task: 打开设置\n- task: 打开微信\n  repeat: 0\n", 3, "repeat must be"),
    ("- task: 打开设置\n- task: '   '\n", 2, "the task is empty"),
    ("- task: 打开设置\n- 打开微信\n", 2, "not a mapping"),
    ("task: 打开设置\n", 1, "a batch file is a list"),
    ("- task: 打开设置\n  device: two words\n", 2, "device must be"),
    ("- task: [unclosed\n", 2, "invalid YAML"),
])
def test_batch_file_errors_name_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_batch(path)
    assert f"{path}:{line}:" in err.value.message and words in err.value.message


def test_batch_expands_repeat_and_all_in_file_order(tmp_path):
    path = write(tmp_path, "- task: 打开设置\n  repeat: 2\n- task: 打开微信\n  device: all\n- task: 打开浏览器\n"
                           "  device: B\n")
    jobs = expand(load_batch(path), ["A", "B"])
    assert [(j.task, j.device, j.index, j.line) for j in jobs] == [
        ("打开设置", "any", 0, 1), ("打开设置", "any", 1, 1), ("打开微信", "A", 2, 3), ("打开微信", "B", 3, 3),
        ("打开浏览器", "B", 4, 5)]


def test_bad_batch_file_through_the_cli_is_exit_2_with_file_and_line(tmp_path, capsys):
    path = write(tmp_path, "- task: 打开设置\n  repaet: 2\n")
    assert main(["batch", str(path), "--device", "sim"]) == ExitCode.ENVIRONMENT
    err = capsys.readouterr().err
    assert f"{path}:2: unknown key 'repaet'" in err and "Traceback" not in err


def test_schedule_file_checks_cron_with_its_line(tmp_path):
    good = load_schedule(write(tmp_path, '- cron: "0 8 * * *"\n  task: 打开设置\n  device: all\n'))
    assert [(e.cron, e.task, e.device, e.line) for e in good] == [("0 8 * * *", "打开设置", "all", 1)]
    for text, words in [('- cron: "61 8 * * *"\n  task: 打开设置\n', "bad cron expression '61 8 * * *'"),
                        ('- cron: "0 8 * *"\n  task: 打开设置\n', "Wrong number of fields"),
                        ('- timezone: Mars/Base\n  cron: "0 8 * * *"\n  task: 打开设置\n', "unknown time zone 'Mars/Base'")]:
        with pytest.raises(ConfigError) as err:
            load_schedule(write(tmp_path, text))
        assert ":1: " in err.value.message and words in err.value.message


# ---------------------------------------------------------------------------- the simulated farm
def test_a_farm_serves_distinct_phones_on_one_adb_server():
    with serve_farm(3, FAST, resolutions=["720x1600", "1440x3200"]) as server:
        client = adbutils.AdbClient(port=server.port, socket_timeout=5)
        serials = [d.serial for d in client.device_list()]
        assert serials == ["remote-sim-1", "remote-sim-2", "remote-sim-3"]
        sizes = [client.device(s).shell("wm size").strip() for s in serials]
        assert sizes == ["Physical size: 720x1600", "Physical size: 1440x3200", "Physical size: 720x1600"]
        client.device("remote-sim-2").shell(["input", "keyevent", "KEYCODE_HOME"])
        assert [len(p.commands) for p in server.phones] == [1, 2, 1]   # each phone sees its own commands
        server.phones[1].gone = True          # its cable pulled: the others stay
        assert [d.serial for d in client.device_list()] == ["remote-sim-1", "remote-sim-3"]
        with client.make_connection() as conn, pytest.raises(adbutils.AdbError, match="more than one device"):
            conn.send_command("host:transport-any")      # no serial, two phones: adb's own answer
            conn.check_okay()


def test_sim_count_refuses_resolutions_for_one_phone(capsys):
    assert main(["sim", "--resolutions", "720x1600"]) == ExitCode.ENVIRONMENT
    assert "--resolutions is for a farm" in capsys.readouterr().err


# ---------------------------------------------------------------------------- the room (a host's lease table)
def test_room_leases_free_live_phones_and_waits_for_a_pinned_one():
    room = Room([Phone("A"), Phone("B")])
    a = room.lease(None, timeout=1)
    b = room.lease(None, timeout=1)
    assert {a.serial, b.serial} == {"A", "B"}
    assert room.lease(None, timeout=0.05) is None            # both busy
    threading.Timer(0.1, room.release, args=("A",)).start()
    assert room.lease("A", timeout=5).serial == "A"          # pinned: waits for its phone
    assert room.release("B", gone=True) is True              # B drops: out of the pool
    assert room.release("A") is False
    assert room.lease(None, timeout=1).serial == "A"
    room.release("A", gone=True)
    assert room.lease(None, timeout=5) is None               # every phone gone: no wait
    assert room.lease("B", timeout=1).serial == "B"          # a pinned task still gets its phone (and fails)
    assert room.lease("C", timeout=1) is None                # not this host's


# ---------------------------------------------------------------------------- the local pool
@pytest.mark.slow
def test_twelve_tasks_for_any_phone_on_three_phones_one_at_a_time(three_phones, tmp_path):
    results = LocalFleet(phones_of(three_phones), settings(tmp_path)).run(twelve_jobs())
    assert [r.status for r in results] == ["success"] * 12, [r.error for r in results]
    assert {r.phone for r in results} == {"farm-1", "farm-2", "farm-3"}   # the work was shared
    assert all(Path(r.record, "run.json").exists() for r in results)
    check_one_task_at_a_time(three_phones, results, {})


def test_a_pinned_task_runs_on_its_phone(three_phones, tmp_path):
    jobs = [Job("打开微信", device="farm-2", index=0), Job("打开浏览器", device="farm-3", index=1),
            Job("打开设置", device="farm-9", index=2)]
    results = LocalFleet(phones_of(three_phones), settings(tmp_path)).run(jobs)
    assert [(r.phone, r.status) for r in results] == [("farm-2", "success"), ("farm-3", "success"),
                                                      (None, "not_run")]
    assert "farm-9 is not among this batch's phones" in results[2].error
    assert three_phones.phones[1].snapshot()["foreground"]["package"] == "com.tencent.mm"
    assert three_phones.phones[0].commands == []              # nobody touched the first phone
    check_one_task_at_a_time(three_phones, results, {})


@pytest.mark.slow
def test_a_cable_pulled_mid_batch_retries_its_task_on_another_phone(tmp_path):
    server = farm(3)
    server.phones[1].scenario = server.phones[1].scenario.replace(drop_after_commands=3)   # mid-task
    jobs = [Job("打开设置", index=i) for i in range(6)] + [Job("打开微信", device="farm-2", index=6)]
    try:
        results = LocalFleet(phones_of(server), settings(tmp_path)).run(jobs)
    finally:
        server.close()
    retried = [r for r in results if r.earlier]
    assert len(retried) == 1 and retried[0].status == "success" and retried[0].phone != "farm-2"
    first = retried[0].earlier[0]
    assert first["phone"] == "farm-2" and first["failure"] == "device" and Path(first["record"]).exists()
    assert all(r.ok for r in results if not r.job.pinned)
    pinned = results[6]
    assert (pinned.phone, pinned.failure, pinned.exit_code) == ("farm-2", "device", ExitCode.ENVIRONMENT)
    assert Path(pinned.record, "run.json").exists()           # a task pinned to the pulled phone: its record
    # gone after its third command: the ones in flight then (facts are asked side by side) still reached it,
    # nothing after, not even the task pinned to it
    log: TimedLog = server.phones[1].commands  # type: ignore[assignment]
    assert server.phones[1].gone and len(log) >= 3 and max(log.times) < pinned.started


def test_stop_hands_out_no_more_tasks_and_running_ones_write_records(three_phones, tmp_path):
    fleet = LocalFleet(phones_of(three_phones)[:1], settings(tmp_path))
    fleet.on_result = lambda result: fleet.stop()                 # what Ctrl-C does, after the first task
    results = fleet.run([Job("打开设置", index=i) for i in range(4)])
    assert results[0].status == "success"
    assert [r.status for r in results[1:]] == ["not_run"] * 3
    assert all(r.exit_code == ExitCode.ABORTED and "Ctrl-C" in r.error for r in results[1:])


# ---------------------------------------------------------------------------- schedules on an injected clock
class FakeClock:
    def __init__(self, start: datetime) -> None:
        self.t = start
        self.waits: list[float] = []

    def now(self) -> datetime:
        return self.t

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.t += timedelta(seconds=seconds)
        return False


def test_a_cron_schedule_fires_at_its_time_on_an_injected_clock(tmp_path):
    entries = load_schedule(write(tmp_path, '- cron: "0 8 * * *"\n  task: 打开设置\n  device: all\n'
                                            '  timezone: UTC\n'))
    clock = FakeClock(datetime(2026, 11, 23, 7, 59, 30, tzinfo=UTC))
    fired: list[tuple[str, datetime, datetime]] = []
    scheduler = Scheduler(entries, lambda due: fired.extend((e.task, t, clock.now()) for e, t in due),
                          state_path=tmp_path / "state.json", now=clock.now, wait=clock.wait)
    assert scheduler.run(max_fires=2) == 2
    eight = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
    assert fired == [("打开设置", eight, eight), ("打开设置", eight + timedelta(days=1), eight + timedelta(days=1))]
    assert max(clock.waits) <= 60      # naps, so a changed wall clock is noticed


def test_runs_missed_while_stopped_are_reported_not_replayed(tmp_path):
    entries = load_schedule(write(tmp_path, '- cron: "0 8 * * *"\n  task: 打开设置\n  timezone: UTC\n'))
    state = tmp_path / "state.json"
    clock = FakeClock(datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    Scheduler(entries, lambda due: None, state_path=state, now=clock.now, wait=clock.wait).run(max_fires=0)
    clock.t = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)       # stopped: 21st and 22nd at 08:00 passed
    missed, fired = [], []
    scheduler = Scheduler(entries, fired.extend, state_path=state, now=clock.now, wait=clock.wait,
                          on_missed=missed.append)
    scheduler.run(max_fires=1)
    assert [(m.count, m.why) for m in missed] == [(2, "while stopped")]
    assert [t.day for t in missed[0].times] == [21, 22] and all(t.hour == 8 for t in missed[0].times)
    assert [t for _, t in fired] == [datetime(2026, 11, 23, 8, 0, tzinfo=UTC)]   # only the next one


def test_runs_that_pass_while_a_batch_runs_are_reported(tmp_path):
    entries = load_schedule(write(tmp_path, '- cron: "*/5 * * * *"\n  task: 打开设置\n  timezone: UTC\n'))
    clock = FakeClock(datetime(2026, 11, 23, 8, 0, tzinfo=UTC))
    missed = []

    def slow_batch(due: Any) -> None:
        clock.t += timedelta(minutes=12)    # the batch took 12 minutes: 08:05 and 08:10 passed

    Scheduler(entries, slow_batch, now=clock.now, wait=clock.wait, on_missed=missed.append).run(max_fires=2)
    assert [(m.count, m.why, [t.minute for t in m.times]) for m in missed][0] == (2, "while busy", [5, 10])


# ---------------------------------------------------------------------------- the commands
@pytest.fixture
def fast_scenario(tmp_path: Path) -> Path:
    return write(tmp_path, "uiautomator_delay_ms: 0\n", "fast.yaml")


def test_run_on_two_simulated_phones_prints_a_table_and_writes_batch_json(tmp_path, fast_scenario, capsys):
    code = main(["run", "打开设置", "--device", "sim", "--device", "sim", "--scenario", str(fast_scenario),
                 "--runs-dir", str(tmp_path / "runs")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "remote-sim-1" in out.out and "remote-sim-2" in out.out and "2/2 tasks succeeded" in out.out
    assert "[1/1] launch_app com.android.settings ok" in out.err          # live progress per phone
    (batch,) = (tmp_path / "runs").glob("batch-*/batch.json")
    rows = json.loads(batch.read_text(encoding="utf-8"))["rows"]
    assert [(r["task"], r["device"], r["status"]) for r in rows] == [("打开设置", "remote-sim-1", "success"),
                                                                      ("打开设置", "remote-sim-2", "success")]
    assert all(Path(r["record"], "report.html").exists() for r in rows)


@pytest.mark.slow
def test_batch_command_json_and_exit_status(tmp_path, fast_scenario, capsys):
    path = write(tmp_path, "- task: 打开设置\n  repeat: 2\n- task: 打开微信\n  device: remote-sim-2\n"
                           "- task: 打开一个不存在的应用XYZ\n  device: remote-sim-1\n")
    code = main(["batch", str(path), "--device", "sim", "--device", "sim", "--scenario", str(fast_scenario),
                 "--runs-dir", str(tmp_path / "runs"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == ExitCode.FAILED                     # one task failed: the batch says so
    assert [(r["task"], r["status"]) for r in doc["rows"]][:3] == [("打开设置", "success"), ("打开设置", "success"),
                                                                   ("打开微信", "success")]
    assert doc["rows"][2]["phone"] == "remote-sim-2" and doc["rows"][3]["status"] == "failed"
    assert {"task", "device", "status", "record"} <= set(doc["rows"][0])
    assert Path(doc["batch_json"]).exists() and doc["succeeded"] == 3


def test_all_devices_with_device_is_a_usage_error(capsys):
    assert main(["run", "打开设置", "--all-devices", "--device", "A", "--adb-port", "1"]) == ExitCode.ENVIRONMENT
    assert "--all-devices runs on every connected phone" in capsys.readouterr().err


@pytest.mark.slow
def test_ctrl_c_stops_a_batch_and_still_writes_records_and_batch_json(tmp_path):
    """Ctrl-C in the terminal: no more tasks handed out, the running ones stop and write their records."""
    write(tmp_path, "uiautomator_delay_ms: 3000\n", "slow.yaml")          # each UI dump takes 3 s
    write(tmp_path, "- task: 打开微信\n  repeat: 6\n", "b.yaml")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "remote", "batch", "b.yaml", "--device", "sim", "--device", "sim",
                             "--scenario", "slow.yaml"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:                    # wait until both phones are in their first task
        if "[1/2] go_home ok" in line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.ABORTED, err
    (batch,) = (tmp_path / "runs").glob("batch-*/batch.json")
    rows = json.loads(batch.read_text(encoding="utf-8"))["rows"]
    assert len(rows) == 6 and "NOT_RUN" in out
    stopped = [r for r in rows if r["status"] == "aborted"]
    assert stopped and all((tmp_path / r["record"] / "run.json").exists() for r in stopped)
    assert [r["status"] for r in rows if r["status"] not in ("aborted", "success")] == ["not_run"] * (
        6 - len(stopped) - sum(r["status"] == "success" for r in rows))
    assert all("Ctrl-C" in r["error"] for r in rows if r["status"] == "not_run")


def test_a_schedule_firing_submits_through_the_batch_path(tmp_path, fast_scenario, capsys):
    from remote.cli import build_parser
    from remote.commands.schedule import _fire

    path = write(tmp_path, '- cron: "0 8 * * *"\n  task: 打开设置\n  device: all\n')
    args = build_parser().parse_args(["schedule", str(path), "--device", "sim", "--device", "sim",
                                      "--scenario", str(fast_scenario), "--runs-dir", str(tmp_path / "runs")])
    (entry,) = load_schedule(path)
    _fire(args, [(entry, datetime(2026, 11, 23, 8, 0, tzinfo=UTC))])
    (batch,) = (tmp_path / "runs").glob("batch-*/batch.json")
    rows = json.loads(batch.read_text(encoding="utf-8"))["rows"]
    assert [(r["device"], r["status"]) for r in rows] == [("remote-sim-1", "success"), ("remote-sim-2", "success")]
    assert "2/2 tasks succeeded" in capsys.readouterr().out


def test_a_firing_that_finds_no_adb_server_is_skipped_and_the_schedule_goes_on(tmp_path, capsys):
    """A schedule runs for days: an adb server that is down at one firing skips that firing (said, with what to
    do), it does not end the schedule (it had printed the error and exited, killed by the next Ctrl-C)."""
    import socket

    from remote.cli import build_parser
    from remote.commands.schedule import _fire

    with socket.socket() as s:   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = write(tmp_path, '- cron: "* * * * *"\n  task: 打开设置\n  device: phone-0\n')
    args = build_parser().parse_args(["schedule", str(path), "--adb-port", str(port),
                                      "--runs-dir", str(tmp_path / "runs")])
    (entry,) = load_schedule(path)
    _fire(args, [(entry, datetime(2026, 11, 23, 8, 0, tzinfo=UTC))])   # returns: the schedule goes on
    err = capsys.readouterr().err
    assert f"not fired: no adb server answers on 127.0.0.1:{port}" in err and "adb start-server" in err


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_a_firing_ends_that_firing_in_order_and_then_the_schedule(tmp_path, monkeypatch, capsys, sig):
    """Issue 24 item 24 (found on re-running it): the firing caught the interrupt, and the schedule went on
    firing; SIGTERM killed it with no batch.json and a run.json left 'running'."""
    import remote.commands.schedule as schedule_command

    path = write(tmp_path, '- cron: "0 8 * * *"\n  task: 给张三发微信消息说你好\n  timezone: UTC\n')
    slow = write(tmp_path, "uiautomator_delay_ms: 800\n", "slow.yaml")
    clock = FakeClock(datetime(2026, 11, 23, 7, 59, 59, tzinfo=UTC))   # fires at once, then every "day"
    monkeypatch.setattr(schedule_command, "Scheduler",
                        lambda *a, **kw: Scheduler(*a, **kw, now=clock.now, wait=clock.wait))
    threading.Timer(2.5, os.kill, (os.getpid(), sig)).start()          # what `timeout` / Ctrl-C send, mid-firing
    code = main(["schedule", str(path), "--device", "sim", "--scenario", str(slow),
                 "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == ExitCode.ABORTED, err
    assert "stopped (the firing in progress stopped in order" in err
    (batch,) = (tmp_path / "runs").glob("batch-*/batch.json")          # one firing, not one a "day" after it
    (row,) = json.loads(batch.read_text(encoding="utf-8"))["rows"]
    assert row["status"] == "aborted", row
    (record,) = (tmp_path / "runs").glob("*/run.json")
    assert json.loads(record.read_text(encoding="utf-8"))["status"] == "aborted"


@pytest.mark.slow
def test_sim_count_serves_a_farm_that_run_all_devices_drives(tmp_path, fast_scenario, capsys):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = str(probe.getsockname()[1])
    proc = subprocess.Popen([sys.executable, "-m", "remote", "sim", "--count", "3", "--port", free,
                             "--scenario", str(fast_scenario), "--resolutions", "720x1600,1440x3200"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert [line.split()[2:4] for line in lines] == [["remote-sim-1", "720x1600"], ["remote-sim-2", "1440x3200"],
                                                         ["remote-sim-3", "720x1600"]]
        assert lines[0].rstrip().endswith(f"127.0.0.1:{free}")
        code = main(["run", "打开设置", "--all-devices", "--adb-port", free, "--runs-dir", str(tmp_path / "runs")])
        out = capsys.readouterr().out
        assert code == 0 and "3/3 tasks succeeded" in out
        assert all(f"remote-sim-{i}" in out for i in (1, 2, 3))
    finally:
        proc.terminate()
        proc.wait(10)


def test_submit_to_an_address_where_no_cluster_answers_is_exit_2_at_once(capsys):
    with socket.socket() as probe:       # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["submit", "打开设置", "--address", f"127.0.0.1:{port}"]) == ExitCode.ENVIRONMENT
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in capsys.readouterr().err


def test_a_reason_too_long_for_the_table_follows_it_whole():
    import io

    from remote.commands.batch import print_table

    why = ("worker w-2 holds phone far-1 but has not answered for 94 s (stale offer): the task was placed on no "
           "phone; start `remote worker` again on that host")
    rows = [JobResult(Job(task="打开设置", index=0), "far-1", "not_run", int(ExitCode.FAILED), error=why),
            JobResult(Job(task="返回", index=1), "near-1", "success", int(ExitCode.OK))]
    out = io.StringIO()
    print_table(rows, out)
    text = out.getvalue()
    assert f"  #1: {why}" in text and "#2:" not in text          # only the cut reason, and whole
    assert "1/2 tasks succeeded" in text
