"""Every run tells the truth and stays inside its limits: one test per finding of the honest-outcomes issue.

Driven as a user drives the product: ``remote ...`` through ``cli.main`` (in-process) or a subprocess,
the simulated phone over the real ADB protocol, the loopback model server through the real openai client.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from PIL import Image

from remote.cli import main
from remote.core.coords import validate_bbox
from remote.core.plan.schema import PlanError, parse_plan
from remote.core.record.recorder import RunRecorder
from tests.support.model_fixtures import SECRET_KEY
from tests.support.run_fixtures import FAST_SIM, run_sim

ROOT = Path(__file__).resolve().parent.parent
def last_record(workdir: Path) -> dict:
    runs = sorted((workdir / "runs").iterdir())
    return json.loads((runs[-1] / "run.json").read_text(encoding="utf-8"))


def plan(*steps: dict, check: dict | None = None) -> dict:
    return {"steps": list(steps), "success_check": check or {}}


# 1 -------------------------------------------------------------------------------------------------------
def test_1_a_model_plan_that_gives_up_after_a_failed_step_is_failed(with_model, workdir, capsys):
    with_model.script("plan", plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                                   {"action": "tap", "target_ref": "text:深色模式"},
                                   check={"text": "深色模式已打开"}),
                      {"steps": [{"action": "finish", "params": {"success": False}, "description": "无法完成"}]})
    with_model.script("locate", {"found": False, "reason": "没有这一项"})
    assert run_sim("把深色模式调出来") == 1
    out = capsys.readouterr().out
    assert out.startswith("\nFAILED") and "the plan gives up: 无法完成" in out
    data = last_record(workdir)
    assert data["status"] == "failed" and data["failure"] == "gave_up"


def test_1_a_model_plan_is_success_only_when_its_final_check_passes(with_model, workdir, capsys):
    with_model.script("plan", plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                                   check={"text": "深色模式已打开"}))
    assert run_sim("把深色模式调出来", "--json") == 1
    info = json.loads(capsys.readouterr().out)
    assert info["status"] == "failed" and info["failure"] == "final_check" and info["steps_ok"] == 1
    assert info["final_check"]["passed"] is False and "深色模式已打开" in info["final_check"]["summary"]


# 2 -------------------------------------------------------------------------------------------------------
def test_2_a_contact_that_does_not_exist_is_said_as_such_and_nothing_is_tapped_on_a_guess(workdir, capsys):
    assert run_sim("给不存在的人发微信消息说你好") == 1
    out = capsys.readouterr().out
    assert "没有找到联系人 不存在的人" in out and "no visible change" not in out
    data = last_record(workdir)
    assert data["failure"] == "failure_screen"
    state = data["device_state"]
    assert state["chats"] == {} and state["foreground"]["screen"] != "chat:不存在的人"


# 3 -------------------------------------------------------------------------------------------------------
def test_3_an_app_the_phone_does_not_have_is_said_at_once(workdir, capsys):
    assert run_sim("打开淘宝") == 1
    out = capsys.readouterr().out
    assert "no app 淘宝 (com.taobao.taobao) on this phone" in out
    commands = last_record(workdir)["device_state"]["commands"]
    assert not [c for c in commands if c.removeprefix("cmd ").startswith(("input swipe", "input tap"))]   # no launcher search


# 4 -------------------------------------------------------------------------------------------------------
def test_4_dry_run_of_the_readme_example_is_valid_and_honest(workdir, capsys):
    assert run_sim("给张三发微信消息说你好", "--dry-run") == 0
    captured = capsys.readouterr()
    assert "DRY RUN (plan valid)" in captured.out and "not checked (needs the screen after step 1)" in captured.err
    commands = last_record(workdir)["device_state"]["commands"]
    assert not [c for c in commands if c.removeprefix("cmd ").startswith(("input", "am start", "monkey"))]


# 5 -------------------------------------------------------------------------------------------------------
def test_5_summary_counts_failed_steps_and_exit_codes_follow_the_table(workdir, capsys, monkeypatch):
    assert run_sim("给不存在的人发微信消息说你好", "--json") == 1
    info = json.loads(capsys.readouterr().out)
    assert info["steps_failed"] == 1 and info["steps_ok"] == info["steps"] - 1 and info["exit_code"] == 1
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert main(["devices", "--adb-port", str(free)]) == 2          # no adb server: the environment
    assert "no adb server answers" in capsys.readouterr().err


def test_5_a_step_that_needs_a_model_without_one_is_an_environment_failure(workdir, tmp_path, capsys):
    mods = tmp_path / "mods" / "dyn"
    mods.mkdir(parents=True)
    (mods / "config.yaml").write_text("name: dyn\nkeywords: [放大镜]\n", encoding="utf-8")
    (mods / "tasks.yaml").write_text(
        "tasks:\n  - name: t\n    patterns: [点放大镜]\n    steps:\n"
        "      - {action: launch_app, params: {package: com.tencent.mm}}\n"
        "      - {action: tap, target_ref: 'dynamic:右上角的放大镜'}\n"
        "    success_check: {app: com.tencent.mm}\n", encoding="utf-8")
    from remote.apps import APPS_DIR, ModuleRegistry
    from tests.support.runner_fixtures import runner_for

    registry = ModuleRegistry([tmp_path / "mods", APPS_DIR])
    from remote.core.device.adb_controller import ADBController
    from remote.sim import serve

    with serve(FAST_SIM) as server:
        adb = ADBController(server.serial, port=server.port).connect()
        result = runner_for(adb, tmp_path, registry=registry).run("点放大镜")
        adb.close()
    assert result.exit_code == 2 and result.failure.value == "config" and "vision model" in result.error_message


# 6 -------------------------------------------------------------------------------------------------------
def test_6_a_box_reaching_off_the_screen_is_invalid_as_the_seed_says():
    assert validate_bbox((-50, 200, 300, 250), (1080, 2400)) == {"valid": False, "error": "坐标超出屏幕范围"}


# 7 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("step, word", [
    ({"action": "call", "params": {"number": "+19005550199"}}, "phone call"),
    ({"action": "open_url", "params": {"url": "alipays://platformapi/startapp?appId=20000056"}}, "alipays: link"),
    ({"action": "tap", "target_ref": "xy:540,1200", "description": "下一步"}, "raw coordinates"),
    ({"action": "tap", "target_ref": "text:轉賬", "description": "确认"}, "转账"),
])
def test_7_what_a_model_step_does_needs_a_yes_and_without_a_terminal_the_answer_is_no(with_model, workdir, capsys,
                                                                                       step, word):
    with_model.script("plan", plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}}, step,
                                   check={"app": "com.tencent.mm"}))
    assert run_sim("帮我处理一下这个") == 130
    out = capsys.readouterr().out
    assert "sensitive step not confirmed" in out and word in out
    commands = last_record(workdir)["device_state"]["commands"]
    assert not [c for c in commands if "CALL" in c or "alipays" in c or c.removeprefix("cmd ").startswith("input tap 540 1200")]


# 8 -------------------------------------------------------------------------------------------------------
def test_8_absurd_repeats_and_waits_are_refused_before_anything_runs(with_model, workdir, capsys):
    bad = plan({"action": "press_key", "params": {"key": "BACK", "times": 100000000}},
               {"action": "wait", "params": {"ms": 1e12}}, check={"app": "com.android.launcher3"})
    with_model.script("plan", bad, bad)     # the corrective re-ask gets the same answer
    assert run_sim("按很多次返回") == 1
    out = capsys.readouterr().out
    assert "times 100000000 is outside 1..50" in out or "unusable" in out
    commands = last_record(workdir)["device_state"]["commands"]
    assert not [c for c in commands if c.removeprefix("cmd ").startswith("input keyevent")]


def test_8_the_time_budget_holds_inside_a_step(with_model, workdir, capsys):
    with_model.script("plan", plan({"action": "wait", "params": {"ms": 60000}}, check={"app": "x.y"}))
    started = time.monotonic()
    assert run_sim("等一会儿", "--max-seconds", "2") == 1
    assert time.monotonic() - started < 20      # a bound on a hang, not a speed figure
    assert "time cap reached (2 s)" in capsys.readouterr().out


@pytest.mark.slow
def test_8_ctrl_c_stops_a_run_within_a_second_and_writes_the_record(model_server, tmp_path):
    model_server.script("plan", plan({"action": "wait", "params": {"ms": 60000}}, check={"app": "x.y"}))
    (tmp_path / "fast.yaml").write_text(yaml.safe_dump(FAST_SIM), encoding="utf-8")
    env = {**os.environ, "CUSTOM_LLM_BASE_URL": model_server.url, "CUSTOM_LLM_API_KEY": SECRET_KEY,
           "CUSTOM_LLM_MODEL": "test-vl", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "remote", "run", "--device", "sim", "--scenario", "fast.yaml",
                             "--json", "等一会儿"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not model_server.requests and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)                              # inside the 60 s wait
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    stopped = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert stopped < 5, stopped                 # honoured at once (the process start-up is not in it)
    assert json.loads(out)["status"] == "aborted"
    record = next((tmp_path / "runs").iterdir()) / "run.json"
    assert json.loads(record.read_text(encoding="utf-8"))["status"] == "aborted"


# 9 -------------------------------------------------------------------------------------------------------
class DrippingServer:
    """An HTTP server that answers one byte a second, forever (the issue's hostile model server)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            while not self.stop.is_set():
                conn.sendall(b" ")
                time.sleep(1.0)
        except OSError:
            pass
        finally:
            conn.close()


def test_9_a_model_server_that_drips_cannot_hold_the_run(workdir, monkeypatch, capsys):
    server = DrippingServer()
    monkeypatch.setenv("CUSTOM_LLM_BASE_URL", f"http://127.0.0.1:{server.port}/v1")
    monkeypatch.setenv("CUSTOM_LLM_API_KEY", SECRET_KEY)
    monkeypatch.setenv("CUSTOM_LLM_MODEL", "test-vl")
    monkeypatch.setenv("LLM_TIMEOUT", "2")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    started = time.monotonic()
    try:
        assert run_sim("做一件没有模板的事") == 1
    finally:
        server.stop.set()
    assert time.monotonic() - started < 30      # a bound on a hang: 2 s per attempt, not 254 s and counting
    assert "no reply within 2 s" in capsys.readouterr().out


# 10 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("step, problem", [
    ({"action": "wait", "params": {"ms": "NaN"}}, "ms must be a finite number"),
    ({"action": "wait", "params": {"ms": -5000}}, "ms -5000 is outside"),
    ({"action": "press_key", "params": {"key": "BACK", "times": "many"}}, "times must be a finite number"),
    ({"action": "swipe", "params": {"direction": "up", "distance": "far"}}, "distance must be a finite number"),
])
def test_10_bad_numbers_are_plan_errors_never_tracebacks(step, problem):
    with pytest.raises(PlanError, match=problem):
        parse_plan(plan(step, check={"app": "x.y"}))


def test_10_a_bad_plan_leaves_a_finished_record(with_model, workdir):
    bad = plan({"action": "wait", "params": {"ms": "NaN"}}, check={"app": "x.y"})
    with_model.script("plan", bad, bad)
    assert run_sim("等一会儿") == 1
    data = last_record(workdir)
    assert data["status"] == "failed" and data["error_type"] == "ModelError"


# 11 ------------------------------------------------------------------------------------------------------
def test_11_routing_has_a_ceiling_and_spaces_cost_nothing(workdir, capsys):
    assert run_sim("给" + " " * 3000 + "x") == 2
    assert "at most 500" in capsys.readouterr().err
    from remote.apps import ModuleRegistry

    registry = ModuleRegistry()
    started = time.monotonic()
    module, _ = registry.route("给" + " " * 480 + "张三发消息说" + " " * 5 + "x")
    assert module.name == "wechat" and time.monotonic() - started < 10   # a bound on a hang


# 12 ------------------------------------------------------------------------------------------------------
def _tall_png(path: Path, width: int, height: int) -> None:
    """A valid PNG header that claims ``width`` x ``height`` (what a 458-byte bomb looks like to a decoder)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = zlib.compress(b"\x00" * (width * 3 + 1), 9)   # one row is enough to be a readable header
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


@pytest.mark.parametrize("size", [(65000, 2), (20000, 20000)])
def test_12_huge_images_are_refused_before_decoding(workdir, capsys, size):
    _tall_png(workdir / "big.png", *size)
    Image.new("RGB", (100, 100), "white").save(workdir / "small.png")
    assert main(["locate", "big.png", "text:x"]) == 2
    assert main(["match", "small.png", "big.png"]) == 2
    assert main(["flow", "big.png", "打开微信"]) == 2
    assert "larger than this tool reads" in capsys.readouterr().err


# 13 ------------------------------------------------------------------------------------------------------
def _alias_bomb() -> str:
    """Ten levels of nine aliases each: 10**9 nodes once expanded, from ten short lines."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
              f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(9)]
    return "\n".join(lines) + "\n"


def test_13_a_yaml_alias_bomb_is_refused_quickly_with_a_short_message(tmp_path):
    from remote.apps import ModuleRegistry

    folder = tmp_path / "bomb"
    folder.mkdir()
    (folder / "config.yaml").write_text(_alias_bomb() + "name: bomb\n", encoding="utf-8")
    registry = ModuleRegistry([tmp_path])
    problems = [str(p) for p in registry.problems]
    assert "bomb" in registry.broken and any("alias bomb" in p for p in problems)
    assert all(len(p) < 400 for p in problems)


def test_13_a_scenario_file_with_an_alias_bomb_is_refused_by_the_simulated_phone(tmp_path, capsys):
    scenario = tmp_path / "bomb.yaml"
    scenario.write_text(_alias_bomb() + "contacts: *j\n", encoding="utf-8")
    assert main(["run", "--device", "sim", "--scenario", str(scenario), "打开设置"]) != 0
    err = capsys.readouterr().err
    assert "alias bomb" in err and "bomb.yaml" in err


# 14 ------------------------------------------------------------------------------------------------------
def test_14_capture_ref_names_and_boxes_stay_inside_the_module(workdir, capsys):
    assert main(["capture-ref", "../../../../../x", "--module", "wechat", "--bbox", "0,0,10,10",
                 "--device", "sim", "--scenario", "fast.yaml"]) == 2
    assert "plain name" in capsys.readouterr().err
    assert main(["capture-ref", "probe", "--module", "wechat", "--bbox=-10,-10,99999,99999",
                 "--device", "sim", "--scenario", "fast.yaml"]) == 2
    assert "reaches outside" in capsys.readouterr().err
    assert main(["capture-ref", "probe", "--module", "wechat", "--bbox", "100,100,50,50",
                 "--device", "sim", "--scenario", "fast.yaml"]) == 2
    assert "x2 must be greater than x1" in capsys.readouterr().err


# 15 ------------------------------------------------------------------------------------------------------
def test_15_a_report_embeds_no_file_from_outside_its_run_folder(tmp_path, capsys):
    outside = tmp_path / "secret.png"
    Image.new("RGB", (50, 50), (255, 0, 0)).save(outside)
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    steps = [{"step": {"step": 1, "action": "tap"}, "status": "success",
              "artifacts": {"before": str(outside), "after": "../../secret.png"}}]
    (run / "run.json").write_text(json.dumps({"task": "t", "status": "success", "steps": steps}), encoding="utf-8")
    assert main(["report", str(run)]) == 0
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "data:image/jpeg;base64" not in html


# 16 ------------------------------------------------------------------------------------------------------
def test_16_a_model_reply_that_echoes_the_key_is_masked_in_what_verify_prints(with_model, workdir, capsys):
    Image.new("RGB", (300, 300), "white").save(workdir / "s.png")
    with_model.script("verify", {"verified": False, "confidence": 0.5, "current_state": f"key {SECRET_KEY} seen"})
    assert main(["verify", "s.png", "屏幕上有一只猫", "--json"]) == 1
    out = capsys.readouterr().out
    assert SECRET_KEY not in out and "key " in out


# 17 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["50%sure 100% ok", "a%sb", "%s", "x%", "%%s", "tail %s", "a b  c"])
def test_17_plain_input_text_pieces_type_exactly_what_was_asked(text):
    from remote.core.device.ime import input_text_pieces

    pieces = input_text_pieces(text)
    # `input text` replaces every %s with a space in each argument (InputShellCommand): the pieces survive it
    assert "".join(p.replace("%s", " ") for p in pieces) == text


def test_17_a_non_ascii_api_key_is_a_configuration_error(workdir, monkeypatch, capsys):
    monkeypatch.setenv("CUSTOM_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CUSTOM_LLM_API_KEY", "sk-测试ключ123456")
    assert run_sim("做一件没有模板的事") == 2
    assert "not ASCII" in capsys.readouterr().err


# 18 ------------------------------------------------------------------------------------------------------
def test_18_nothing_on_the_adb_port_starts_no_adb_server(workdir, monkeypatch, capsys):
    marker = workdir / "adb-started"
    fake_adb = workdir / "adb"
    fake_adb.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    fake_adb.chmod(0o755)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert main(["run", "打开微信", "--adb-port", str(free), "--runs-dir", "runs"]) == 2
    assert f"no adb server answers on 127.0.0.1:{free}" in capsys.readouterr().err
    assert not marker.exists()


def test_18_two_runs_in_the_same_second_get_two_folders(tmp_path):
    now = time.time()
    first = RunRecorder(tmp_path, "同一个任务", now=now)
    second = RunRecorder(tmp_path, "同一个任务", now=now)
    assert first.dir != second.dir and first.dir.is_dir() and second.dir.is_dir()


def test_18_port_arguments_are_validated(capsys):
    assert main(["sim", "--port", "99999"]) == 2
    assert "outside 1..65535" in capsys.readouterr().err
