"""Records that survive a full disk and a kill, one process per phone, private temp folders (issue 24,
items 2, 3, 6 and 16).

2. A full disk: the outcome on the phone is printed and is the exit status; records are whole or absent.
3. SIGTERM is handled as Ctrl-C (record written, status aborted, exit 130), for ``run`` and ``batch``; after
   ``kill -9`` run.json is there, status running, with the steps that had ended.
6. A phone driven by one process is refused to a second one, which is told who holds it (exit 2).
16. Fixed names under the temp folder are not followed through symlinks, nor read from another user.

Every test starts ``python -m remote`` as its own process (as a shell, systemd or a script does), against
the simulated phone over the real ADB protocol, in this test's own temp folder (``cli_env``).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from remote.apps import ModuleRegistry
from remote.core.device.phone_lock import PhoneLock, lock_path
from remote.errors import DeviceBusy
from remote.mcp import teach
from remote.mcp.session import Session, SessionOptions
from tests.support.cli_fixtures import remote_cli, remote_proc, wait_for
from tests.support.model_fixtures import SECRET_KEY

FAST_SIM = {"uiautomator_delay_ms": 0}
ADB_IME = "com.android.adbkeyboard/.AdbIME"


def on(server) -> list[str]:
    """The options that point a command at a simulated phone served on its own port (a 'real' serial)."""
    return ["--device", server.serial, "--adb-port", str(server.port)]


def with_file_size_limit(limit: int, *args: str) -> list[str]:
    """``python -m remote ARGS`` in a process whose files cannot grow past ``limit`` bytes: the kernel refuses
    the write (EFBIG) as a full disk does (ENOSPC), wherever it happens (run.json, report.html, batch.json)."""
    boot = ("import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]),) * 2); "
            "os.execv(sys.executable, [sys.executable, '-m', 'remote', *sys.argv[2:]])")
    return [sys.executable, "-c", boot, str(limit), *args]


def run_limited(limit: int, *args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(with_file_size_limit(limit, *args), env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=180)


def plan(*steps: dict, check: dict | None = None) -> dict:
    return {"steps": list(steps), "success_check": check or {}}


@pytest.fixture
def model_env(cli_env, model_server) -> dict[str, str]:
    return {**cli_env, "CUSTOM_LLM_BASE_URL": model_server.url, "CUSTOM_LLM_API_KEY": SECRET_KEY,
            "CUSTOM_LLM_MODEL": "test-vl"}


@pytest.fixture
def fast_yaml(tmp_path) -> Path:
    path = tmp_path / "fast.yaml"
    path.write_text(yaml.safe_dump(FAST_SIM), encoding="utf-8")
    return path


def only_record(runs: Path) -> Path:
    folders = [p for p in runs.iterdir() if not p.name.startswith("batch-")]
    assert len(folders) == 1, folders
    return folders[0]


def steps_recorded(runs: Path) -> int:
    """The steps the record holds so far: 0 until the run's folder and its run.json exist (a loaded machine
    shows the folder a while before the first run.json is written into it)."""
    folders = [p for p in runs.iterdir() if not p.name.startswith("batch-")] if runs.is_dir() else []
    record = folders[0] / "run.json" if folders else None
    return len(json.loads(record.read_text("utf-8"))["steps"]) if record and record.is_file() else 0


# 2 -------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_2_a_full_disk_loses_the_record_not_the_outcome(sim_server, tmp_path, cli_env):
    done = run_limited(3000, "run", *on(sim_server), "--json", "--runs-dir", "runs", "给张三发微信消息说你好",
                       env=cli_env, cwd=tmp_path)
    assert sim_server.phone.snapshot()["chats"] == {"张三": ["你好"]}          # the message was sent ...
    assert done.returncode == 0, done.stderr[-2000:]                           # ... and that is the exit status
    info = json.loads(done.stdout)
    assert info["status"] == "success" and info["record_error"], info
    assert "warning: the run record could not be written" in done.stderr
    record = tmp_path / info["record"]
    assert not [p.name for p in record.iterdir() if p.name.endswith(".tmp")]   # no half-written leftovers
    for name in ("run.json", "report.html"):   # each file is whole or absent, never cut mid-file
        if (record / name).exists():
            assert (record / name).stat().st_size < 3000
    data = json.loads((record / "run.json").read_text(encoding="utf-8"))   # the last whole one: the run's start
    assert data["status"] == "running" and data["task"] == "给张三发微信消息说你好"


def test_2_a_full_disk_still_prints_the_batch_table_and_its_outcome(sim_server, tmp_path, cli_env):
    (tmp_path / "tasks.yaml").write_text("- task: 打开设置\n", encoding="utf-8")
    done = run_limited(200, "batch", "tasks.yaml", *on(sim_server), "--json", "--runs-dir", "runs",
                       env=cli_env, cwd=tmp_path)
    assert sim_server.phone.snapshot()["foreground"]["package"] == "com.android.settings"
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["succeeded"] == 1 and doc["rows"][0]["status"] == "success" and doc["batch_json"] is None
    assert "warning: batch.json could not be written" in done.stderr
    assert not list((tmp_path / "runs").rglob("batch.json"))
    # the task's own run record was refused too: its row and a warning say so
    assert doc["rows"][0]["record_error"] and "the run record of task 1 could not be written" in done.stderr


# 3 -------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_3_sigterm_stops_a_run_as_ctrl_c_does_and_the_record_says_so(model_server, model_env, tmp_path, fast_yaml):
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                                     {"action": "wait", "params": {"ms": 60000}}, check={"app": "x.y"}))
    proc = remote_proc("run", "--device", "sim", "--scenario", "fast.yaml", "--json", "等一会儿", env=model_env,
                       cwd=tmp_path)
    wait_for(lambda: model_server.requests, 90, "the plan request")
    wait_for(lambda: (tmp_path / "runs").is_dir() and len(json.loads(
        (only_record(tmp_path / "runs") / "run.json").read_text("utf-8"))["steps"]) >= 1, 30, "step 1 to end")
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)                                 # what timeout, systemd, docker stop send
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.monotonic() - sent < 10                              # a bound on a hang, not a speed figure
    info = json.loads(out)
    assert info["status"] == "aborted" and "SIGTERM" in info["error"]
    record = only_record(tmp_path / "runs")
    data = json.loads((record / "run.json").read_text(encoding="utf-8"))
    assert data["status"] == "aborted" and data["failure"] == "interrupted" and len(data["steps"]) == 1
    assert (record / "report.html").is_file()


@pytest.mark.slow
def test_3_sigterm_stops_a_batch_and_batch_json_is_written(model_server, model_env, tmp_path, fast_yaml):
    model_server.script("plan", plan({"action": "wait", "params": {"ms": 60000}}, check={"app": "x.y"}))
    (tmp_path / "tasks.yaml").write_text("- task: 等一会儿\n", encoding="utf-8")
    proc = remote_proc("batch", "tasks.yaml", "--device", "sim", "--scenario", "fast.yaml", "--json", env=model_env,
                       cwd=tmp_path)
    wait_for(lambda: model_server.requests, 90, "the plan request")
    time.sleep(1.0)                                                  # inside the 60 s wait
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["rows"][0]["status"] == "aborted" and (tmp_path / doc["batch_json"]).is_file()
    assert doc["rows"][0]["error"] == "stopped by SIGTERM"                 # not "Ctrl-C": it was not pressed
    row_record = tmp_path / doc["rows"][0]["record"] / "run.json"
    data = json.loads(row_record.read_text(encoding="utf-8"))
    assert data["status"] == "aborted" and data["error"] == "stopped by SIGTERM"


@pytest.mark.slow
def test_3_kill_9_leaves_a_truthful_record_that_report_and_replay_read(model_server, model_env, tmp_path, fast_yaml):
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                                     {"action": "tap", "target_ref": "text:显示"},
                                     {"action": "wait", "params": {"ms": 60000}}, check={"app": "x.y"}))
    proc = remote_proc("run", "--device", "sim", "--scenario", "fast.yaml", "改一下显示", env=model_env, cwd=tmp_path)
    wait_for(lambda: steps_recorded(tmp_path / "runs") >= 2, 90, "step 2 to end")
    proc.kill()                                                      # SIGKILL: nothing of ours runs after it
    proc.communicate(timeout=30)
    record = only_record(tmp_path / "runs")
    data = json.loads((record / "run.json").read_text(encoding="utf-8"))
    assert data["status"] == "running" and [s["status"] for s in data["steps"]] == ["success", "success"]
    assert data["steps_planned"] == 3 and data["plan"]["source"] == "model"
    shown = remote_cli("report", str(record), env=model_env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    html = (record / "report.html").read_text(encoding="utf-8")
    assert "Unfinished" in html and "kill -9" in html
    replayed = remote_cli("replay", str(record), "--json", env=model_env, cwd=tmp_path)
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["unfinished"] is True
    assert "this record is unfinished" in replayed.stderr


# 6 -------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_6_a_second_process_on_a_driven_phone_is_refused_with_the_holder_named(sim_server, model_server, model_env,
                                                                              tmp_path):
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                                     {"action": "wait", "params": {"ms": 60000}}, check={"app": "x.y"}))
    holder = remote_proc("run", *on(sim_server), "等一会儿", env=model_env, cwd=tmp_path)
    try:
        wait_for(lambda: any("com.android.settings" in c for c in sim_server.phone.snapshot()["commands"]), 90,
                 "the first run to drive the phone")
        # Counted once the holder is in its 60 s wait (no command for 3 s): on a busy machine its launch step's own
        # late commands (the dump after the launch) came after an earlier count and looked like the others'.
        counts: list[int] = []

        def settled() -> int | None:
            counts.append(len(sim_server.phone.snapshot()["commands"]))
            return counts[-1] if len(counts) > 30 and counts[-1] == counts[-31] else None

        sent = wait_for(settled, 90, "the first run to reach its wait (no command for 3 s)")
        second = remote_cli("run", *on(sim_server), "打开微信", env=model_env, cwd=tmp_path)
        assert second.returncode == 2, second.stderr
        assert f"phone {sim_server.serial} is in use by process {holder.pid} (remote run --device" in second.stderr
        (tmp_path / "tasks.yaml").write_text("- task: 打开微信\n", encoding="utf-8")
        batch = remote_cli("batch", "tasks.yaml", *on(sim_server), env=model_env, cwd=tmp_path)
        assert batch.returncode == 2 and f"in use by process {holder.pid}" in batch.stderr
        agent = remote_cli("mcp", *on(sim_server), env=model_env, cwd=tmp_path, stdin=subprocess.DEVNULL)
        assert agent.returncode == 2 and f"in use by process {holder.pid}" in agent.stderr
        assert len(sim_server.phone.snapshot()["commands"]) == sent        # none of them sent the phone a thing
    finally:
        holder.send_signal(signal.SIGINT)
        holder.communicate(timeout=30)
    assert holder.returncode == 130
    after = remote_cli("run", *on(sim_server), "打开微信", env=model_env, cwd=tmp_path)   # the phone is free again
    assert after.returncode == 0, after.stderr
    assert sim_server.phone.snapshot()["foreground"]["package"] == "com.tencent.mm"


def test_6_the_lock_file_names_its_holder_is_taken_over_when_stale_and_goes_with_its_holder(tmp_path):
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    stale = lock_path("R58M123", "127.0.0.1:5037", folder)
    stale.write_text('{"pid": 1, "command": "remote run (killed with -9)"}', encoding="utf-8")   # nobody holds it
    first = PhoneLock.acquire("R58M123", server="127.0.0.1:5037", command="remote run 打开设置", folder=folder)
    with pytest.raises(DeviceBusy) as busy:   # another open file description of this process counts as another
        PhoneLock.acquire("R58M123", server="127.0.0.1:5037", command="remote batch t.yaml", folder=folder)
    assert f"in use by process {os.getpid()} (remote run 打开设置)" in busy.value.message
    PhoneLock.acquire("R58M123", server="127.0.0.1:5038", command="x", folder=folder).release()   # another server
    first.release()
    assert not stale.exists()
    PhoneLock.acquire("R58M123", server="127.0.0.1:5037", command="remote run", folder=folder).release()


# 16 ------------------------------------------------------------------------------------------------------
def plant(link: Path, victim: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)


@pytest.mark.slow
def test_16_the_ime_state_file_follows_no_planted_symlink(sim_server, tmp_path, cli_env):
    tmp = Path(cli_env["TMPDIR"])
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    name = f"{sim_server.serial}.json"
    plant(tmp / "remote-ime" / name, victim)                         # the old fixed name in the shared temp folder
    private = tmp / f"remote-{os.geteuid()}" / "ime"
    private.mkdir(parents=True, mode=0o700)
    plant(private / name, victim)                                    # even inside our own folder: replaced, not followed
    done = remote_cli("run", *on(sim_server), "给张三发微信消息说你好", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sim_server.phone.snapshot()["chats"] == {"张三": ["你好"]}    # typing (and its IME switch) happened
    assert victim.read_text(encoding="utf-8") == "precious"
    assert (tmp / f"remote-{os.geteuid()}").stat().st_mode & 0o777 == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to play another local user (chown)")
def test_16_another_user_cannot_choose_the_keyboard_restored(sim_server, tmp_path, cli_env):
    tmp = Path(cli_env["TMPDIR"])
    sim_server.phone.ime = ADB_IME                                   # an earlier run crashed with ADBKeyboard on
    theirs = tmp / "remote-ime"
    theirs.mkdir()
    (theirs / f"{sim_server.serial}.json").write_text(json.dumps({"previous_ime": "com.evil/.Ime"}), "utf-8")
    for path in (theirs, theirs / f"{sim_server.serial}.json"):
        os.chown(path, 4242, 4242)                                   # planted by user 4242
    done = remote_cli("run", *on(sim_server), "打开设置", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not [c for c in sim_server.phone.snapshot()["commands"] if "com.evil" in c]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to play another local user (chown)")
def test_16_a_private_folder_made_by_another_user_is_refused(sim_server, tmp_path, cli_env):
    theirs = Path(cli_env["TMPDIR"]) / f"remote-{os.geteuid()}"
    theirs.mkdir(mode=0o777)
    os.chown(theirs, 4242, 4242)
    done = remote_cli("run", *on(sim_server), "打开设置", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2 and "belongs to user id 4242" in done.stderr
    assert not [c for c in sim_server.phone.snapshot()["commands"] if c.startswith(("am start", "monkey"))]


def test_16_teach_pictures_follow_no_planted_symlink(adb, tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    key = hashlib.sha256("点设置\0".encode()).hexdigest()[:12]
    assert key == teach.lesson_key("点设置", None)
    plant(tmp / "remote-mcp" / f"teach-{key}.jpg", victim)            # the old fixed name
    session = Session(adb, registry=ModuleRegistry(), options=SessionOptions(runs_dir=None))
    lesson = teach.prepare(session, "点设置")
    assert victim.read_text(encoding="utf-8") == "precious"
    assert lesson.path.is_file() and not lesson.path.is_symlink() and lesson.path.read_bytes() == lesson.jpeg
    assert lesson.path.parent.stat().st_mode & 0o777 == 0o700 and lesson.path.stat().st_mode & 0o777 == 0o600
