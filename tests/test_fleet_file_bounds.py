"""Schedules' bad values and YAML's duplicate keys, through the CLI (issue 24, item 19).

A time zone that is not a name, a state file dated 9999, years of missed runs on 30 entries, and duplicate
keys in batch, schedule, scenario and module files: each is a clear message (with file:line where there is
one) in bounded time, never `internal error`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from remote.cli import main
from remote.errors import ExitCode
from tests.test_fleet import ROOT


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("zone", "words"), [("[1, 2]", "timezone must be a time zone name, not '[1, 2]'"),
                                             ("5", "timezone must be a time zone name, not '5'"),
                                             ("Mars/Base", "unknown time zone 'Mars/Base'"),
                                             ("../../etc/passwd", "unknown time zone")])
def test_a_bad_time_zone_is_a_clear_error_with_its_line(tmp_path, capsys, zone, words):
    path = write(tmp_path, "s.yaml", f'- cron: "0 8 * * *"\n  task: 打开设置\n  timezone: {zone}\n')
    assert main(["schedule", str(path), "--runs-dir", str(tmp_path / "runs")]) == ExitCode.ENVIRONMENT
    err = capsys.readouterr().err
    assert f"{path}:3: {words}" in err and "internal error" not in err


def _start_schedule(path: Path, runs: Path) -> tuple[str, float]:
    """`remote schedule` as a user starts it, until it has told the missed runs and noted in its state file
    that it watches from now on (the seconds that took are returned), then Ctrl-C."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    state = runs / "schedule-state.json"
    before = state.read_text(encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "remote", "schedule", str(path), "--runs-dir", str(runs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    lines = []
    try:
        while not lines or "stops it." not in lines[-1]:
            line = proc.stderr.readline()
            assert line, "".join(lines)        # it ended before it started watching
            lines.append(line)
        while state.read_text(encoding="utf-8") == before and proc.poll() is None and time.monotonic() - started < 120:
            time.sleep(0.05)
        ready = time.monotonic() - started
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()        # (not communicate(): it would skip what readline() has buffered)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, "".join(lines) + rest
    return "".join(lines) + rest, ready


def test_a_state_file_dated_9999_does_not_stop_the_schedule(tmp_path):
    path = write(tmp_path, "s.yaml", '- cron: "0 8 * * *"\n  task: 打开设置\n')
    runs = tmp_path / "runs"
    runs.mkdir()
    state = runs / "schedule-state.json"
    state.write_text(json.dumps({"watched_until": {"0 8 * * * | any | 打开设置": "9999-12-31T23:59:59+00:00",
                                                   "other": "2026-01-01T08:00:00"}}), encoding="utf-8")
    out, _ = _start_schedule(path, runs)
    assert "later than now" in out and "internal error" not in out and "OverflowError" not in out
    watched = json.loads(state.read_text(encoding="utf-8"))["watched_until"]
    assert watched["0 8 * * * | any | 打开设置"] < "9999"      # what it watched this time replaced it


def test_years_of_missed_runs_on_30_entries_are_counted_quickly_and_capped(tmp_path):
    entries = "".join(f'- cron: "* * * * *"\n  task: 打开设置\n  device: phone-{i}\n' for i in range(30))
    path = write(tmp_path, "s.yaml", entries)
    runs = tmp_path / "runs"
    runs.mkdir()
    watched = {f"* * * * * | phone-{i} | 打开设置": "2024-01-01T00:00:00+00:00" for i in range(30)}
    (runs / "schedule-state.json").write_text(json.dumps({"watched_until": watched}), encoding="utf-8")
    out, ready = _start_schedule(path, runs)
    assert out.count("missed more than 1000 run(s) while stopped") == 30
    assert "the first at 2024-01-01 00:01" in out
    assert ready < 30       # before: ~1.2-2 s per entry (36-60 s); now well under a second each, even loaded


DUPLICATES = [
    ("batch", "b.yaml", "- task: 打开设置\n  device: any\n  repeat: 2\n  device: emulator-5554\n", 4, 2, "device"),
    ("schedule", "s.yaml", '- cron: "0 8 * * *"\n  task: 打开设置\n  cron: "0 9 * * *"\n', 3, 1, "cron"),
]


@pytest.mark.parametrize(("command", "name", "text", "line", "first", "key"), DUPLICATES)
def test_duplicate_keys_in_batch_and_schedule_files_are_refused_with_their_line(tmp_path, command, name, text, line,
                                                                                 first, key):
    path = write(tmp_path, name, text)
    done = subprocess.run([sys.executable, "-m", "remote", command, str(path), "--device", "sim", "--runs-dir",
                           str(tmp_path / "runs")], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)   # (a schedule that starts runs until killed)
    assert done.returncode == ExitCode.ENVIRONMENT, done.stderr
    assert f"{path}:{line}: " in done.stderr and f"duplicate key '{key}' (first on line {first})" in done.stderr
    assert not (tmp_path / "runs").exists()          # refused before anything ran


def test_duplicate_keys_in_a_scenario_and_a_module_are_refused_and_merge_keys_still_override(tmp_path, capsys):
    scenario = write(tmp_path, "sc.yaml", "ad_popup: true\nresolution: 720x1600\nad_popup: false\n")
    assert main(["run", "--device", "sim", "--scenario", str(scenario), "--runs-dir", str(tmp_path / "r"),
                 "打开设置"]) == 2
    assert f"{scenario}:3: " in capsys.readouterr().err
    module = tmp_path / "mods" / "notes"
    module.mkdir(parents=True)
    write(module, "config.yaml", "name: notes\npackage: com.example.notes\nkeywords: [笔记]\n")
    write(module, "tasks.yaml", "tasks:\n  - name: open\n    patterns: [打开笔记]\n"
                                "    steps:\n      - {action: launch_app, params: {package: com.example.notes}}\n"
                                "    name: open_again\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REMOTE_MODULES": str(tmp_path / "mods")}
    checked = subprocess.run([sys.executable, "-m", "remote", "modules", "check"], env=env, capture_output=True,
                             text=True, timeout=120)
    shown = checked.stdout + checked.stderr
    assert f"{module / 'tasks.yaml'}:6: " in shown and "duplicate key 'name' (first on line 2)" in shown
    # `<<: *base` then a key of its own is YAML's way to override: not a duplicate.
    merged = write(tmp_path, "m.yaml", "- &base {task: 打开设置, device: any}\n- <<: *base\n  device: sim-2\n")
    from remote.fleet.files import load_batch

    assert [e.device for e in load_batch(merged)] == ["any", "sim-2"]
