"""The command line as a user meets it: help, version, devices, screenshot, modules, report, and `run`
in a real subprocess on the built-in simulated phone (--json summary, exit status)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

import remote
from remote.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_help_and_version(capsys):
    assert main([]) == 0
    assert "run" in capsys.readouterr().out
    assert main(["--version"]) == 0 and remote.__version__ in capsys.readouterr().out


def test_the_process_entry_runs_main_then_freezes_its_objects_out_of_the_exit_collection(monkeypatch):
    """`remote` and `python -m remote` go through `entry`: main's exit code, and every object frozen (the
    interpreter's exit then does not walk them all again); `main` alone freezes nothing."""
    import gc
    import tomllib

    from remote import cli

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["remote"] == "remote.cli:entry"
    assert "entry()" in (ROOT / "remote/__main__.py").read_text(encoding="utf-8")
    gc.unfreeze()
    assert main(["--version"]) == 0 and gc.get_freeze_count() == 0
    monkeypatch.setattr(cli, "main", lambda: 3)
    try:
        assert cli.entry() == 3 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()   # this test process goes on collecting as before


def test_remote_run_opens_the_phone_before_the_runner_or_the_image_libraries_are_imported():
    """What `remote run` imports before the phone is opened and its tree server started (docs/devices.md "From
    the command to its exit"): the phone's link, not the runner (0.3 s) nor OpenCV and numpy (0.25 s), which load
    beside the server's cold start."""
    probe = ("import sys, remote.commands.run, remote.commands._device; "
             "print(sorted(m for m in ('numpy', 'cv2', 'remote.runner.factory', 'remote.runner.task_runner', "
             "'rapidocr_onnxruntime') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_public_names_are_pinned():
    from remote.core.device import adb_controller
    from remote.core.locate import hybrid_locator
    from remote.runner import task_runner

    assert remote.__all__ == ["__version__"]
    assert {"ADBController", "keycode"} <= set(dir(adb_controller))
    assert {"HybridLocator", "LocateStrategy"} <= set(hybrid_locator.__all__)
    assert {"TaskRunner", "RunOptions"} <= set(dir(task_runner))


def test_run_says_a_refused_configuration_before_the_phone_sees_a_command(sim_server, monkeypatch, capsys):
    """`remote run` opens the phone and starts its tree server early (beside its own imports): a configuration
    it refuses is still said first, with nothing sent to the phone."""
    monkeypatch.setenv("CUSTOM_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CUSTOM_LLM_API_KEY", "sk-测试ключ123456")
    before = len(sim_server.phone.commands)
    code = main(["run", "--adb-port", str(sim_server.port), "--device", sim_server.serial, "--tree", "auto",
                 "打开微信"])
    assert code == 2 and "not ASCII" in capsys.readouterr().err
    assert sim_server.phone.commands[before:] == [] and not sim_server.phone.tree_server.reads


def test_devices_lists_the_simulated_phone(sim_server, capsys):
    assert main(["devices", "--adb-port", str(sim_server.port)]) == 0
    out = capsys.readouterr().out
    assert "remote-sim" in out and "1080x2400" in out and "installed, not enabled" in out and "device" in out


def test_devices_without_a_server_is_an_environment_error(capsys):
    assert main(["devices", "--adb-port", "1"]) == 2
    assert "no adb server answers" in capsys.readouterr().err


def test_screenshot_command(sim_server, tmp_path, capsys):
    out = tmp_path / "s.png"
    assert main(["screenshot", "-o", str(out), "--adb-port", str(sim_server.port), "--device", sim_server.serial]) == 0
    assert Image.open(out).size == (1080, 2400)


def test_modules_list_and_check(capsys):
    assert main(["modules"]) == 0
    out = capsys.readouterr().out
    assert "send_message" in out and "给{contact}发微信消息说{message}" in out
    assert main(["modules", "check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"ok": True, "problems": [], "warnings": [], "notes": []}


def test_unknown_device_is_exit_2_with_a_hint(sim_server, capsys):
    assert main(["screenshot", "-o", "x.png", "--adb-port", str(sim_server.port), "--device", "nope"]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.slow
def test_run_on_the_built_in_simulated_phone_in_a_subprocess(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "CUSTOM_LLM", "OPENAI", "DASHSCOPE"))}
    proc = subprocess.run([sys.executable, "-m", "remote", "run", "--device", "sim", "--json", "--runs-dir",
                           str(tmp_path / "runs"), "给张三发微信消息说你好"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "success" and summary["model_calls"] == 0 and summary["steps"] == 7
    data = json.loads((Path(summary["record"]) / "run.json").read_text(encoding="utf-8"))
    assert data["device_state"]["chats"] == {"张三": ["你好"]}
    # the report can be rewritten from the record alone
    assert main(["report", summary["record"]]) == 0


def test_run_that_cannot_be_planned_exits_2(tmp_path, capsys, monkeypatch):
    for var in ("LLM_PROVIDER", "CUSTOM_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--device", "sim", "--runs-dir", str(tmp_path / "r"), "帮我订机票"]) == 2
    assert "LLM_PROVIDER" in capsys.readouterr().out


def test_a_pulled_cable_mid_run_exits_2(tmp_path, capsys, monkeypatch):
    scenario = tmp_path / "drop.yaml"
    scenario.write_text("drop_after_commands: 8\nuiautomator_delay_ms: 0\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--device", "sim", "--scenario", str(scenario), "--runs-dir", str(tmp_path / "r"),
                 "给张三发消息说你好"]) == 2
    out = capsys.readouterr().out
    assert "FAILED" in out and "lost the connection" in out and "record:" in out
