"""What a run says is what happened (issue 24, items 1, 4, 5 and 7).

1. ``open settings`` opens Settings, not ``https://settings`` in Chrome called a success; Chrome's ``open_url``
   is a success only when the address bar shows the page's host.
4. ``run --dry-run --json`` says that nothing ran.
5. The text a run typed into a field is never taken for a target (OCR tapped 不存在的人 in the search box).
7. After replans the counters and the Ctrl-C summary count the steps the run really has.

Driven as a user drives the product: ``remote run`` (``cli.main`` in-process, or a subprocess where a
signal is needed), the simulated phone over the real ADB protocol, the loopback model server through the
real openai client. Each test judges the phone's state as well as the words.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
import yaml

from remote.ai.verifier import Verifier
from remote.apps import ModuleRegistry
from remote.cli import main
from remote.core.locate.hybrid_locator import HybridLocator
from remote.runner.clock import Clock
from remote.runner.final_check import FinalChecker
from remote.runner.protocols import NoPerson
from remote.runner.tools import Apps, Capture, StepTools
from tests.support.cli_fixtures import Tail, remote_proc, wait_for
from tests.support.model_fixtures import SECRET_KEY

FAST_SIM = {"uiautomator_delay_ms": 0}


@pytest.fixture
def here(tmp_path, monkeypatch):
    """The user's current folder: no model configured, a fast simulated phone's scenario file."""
    monkeypatch.chdir(tmp_path)
    for var in ("LLM_PROVIDER", "CUSTOM_LLM_BASE_URL", "CUSTOM_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "fast.yaml").write_text(yaml.safe_dump(FAST_SIM), encoding="utf-8")
    return tmp_path


def run_json(*args: str, capsys) -> tuple[int, dict, dict]:
    """``remote run --device sim ... --json``: exit status, the printed summary, and the run's run.json."""
    code = main(["run", "--device", "sim", "--scenario", "fast.yaml", "--runs-dir", "runs", "--json", *args])
    info = json.loads(capsys.readouterr().out)
    record = json.loads((Path(info["record"]) / "run.json").read_text(encoding="utf-8"))
    return code, info, record


# 1 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("task", "package"), [("open settings", "com.android.settings"),
                                               ("open 设置", "com.android.settings"),
                                               ("open calculator", "com.android.calculator2"),
                                               ("open camera", "com.android.camera2")])
def test_1_open_an_app_by_its_name_opens_the_app_not_a_url(here, capsys, task, package):
    code, info, record = run_json(task, capsys=capsys)
    assert code == 0 and info["status"] == "success" and info["module"] == "system", info
    assert record["device_state"]["foreground"]["package"] == package
    assert record["device_state"]["browser_url"] is None            # nothing was sent to Chrome
    assert record["plan"]["steps"][0]["action"] == "launch_app"


def test_1_a_url_opens_in_chrome_and_the_check_reads_the_address_bar(here, capsys):
    code, info, record = run_json("打开网页 example.com", capsys=capsys)
    assert code == 0 and info["module"] == "chrome" and record["device_state"]["browser_url"] == "https://example.com"
    bar = [i for i in info["final_check"]["items"] if i["what"].startswith("the address bar")]
    assert bar and bar[0]["passed"] is True and "example.com" in bar[0]["evidence"], info["final_check"]


def test_1_chrome_in_front_on_another_page_is_not_the_url_opened(adb, sim_phone):
    """The template's own final check, on the phone's screen: Chrome in front is not enough."""
    registry = ModuleRegistry()
    chrome = registry.get("chrome")
    wanted = registry.handler(chrome).plan("打开网页 example.com")
    assert wanted is not None
    adb.open_url("https://www.qq.com")                                # Chrome shows another page
    time.sleep(0.5)                                                   # the simulated page load (300 ms)
    assert sim_phone.snapshot()["foreground"]["package"] == "com.android.chrome"
    tools = StepTools(device=adb, locator=HybridLocator(adb), checks=Verifier(None), clock=Clock(30),
                      person=NoPerson(), capture=Capture(adb), apps=Apps(adb))
    checker = FinalChecker(tools)
    screen = Capture(adb).screen(tree=True)
    verdict = checker.check(wanted.success_check, screen)
    assert verdict.passed is False and "www.qq.com" in verdict.summary, verdict.summary
    here_now = registry.handler(chrome).plan("打开网页 www.qq.com")
    assert here_now is not None and checker.check(here_now.success_check, screen).passed is True


# 4 -------------------------------------------------------------------------------------------------------
def test_4_a_dry_run_says_in_its_json_that_nothing_ran(here, capsys):
    code, info, record = run_json("给张三发微信消息说你好", "--dry-run", capsys=capsys)
    assert code == 0 and info["status"] == "planned" and info["dry_run"] is True and info["exit_code"] == 0
    assert record["status"] == "planned" and record["dry_run"] is True
    commands = record["device_state"]["commands"]
    assert not [c for c in commands if c.startswith(("input", "am start", "monkey"))]   # truly nothing ran
    report = (Path(info["record"]) / "report.html").read_text(encoding="utf-8")
    assert "nothing was done on the phone" in report


def test_4_a_real_run_says_it_was_not_a_dry_run(here, capsys):
    code, info, _record = run_json("打开设置", capsys=capsys)
    assert code == 0 and info["status"] == "success" and info["dry_run"] is False


# 5 -------------------------------------------------------------------------------------------------------
def test_5_the_name_typed_into_the_search_box_is_never_tapped(here, capsys):
    code, info, record = run_json("给不存在的人发消息说你好", capsys=capsys)
    assert code == 1 and info["failure"] == "failure_screen" and "没有找到联系人 不存在的人" in info["error"]
    commands = record["device_state"]["commands"]
    typed = max(i for i, c in enumerate(commands) if "ADB_INPUT_B64" in c or c.startswith("input text"))
    assert not [c for c in commands[typed:] if c.startswith("input tap")], commands[typed:]   # no tap after typing
    step5 = record["steps"][4]
    assert step5["status"] == "failed" and step5["retry_count"] == 0 and step5["tap_point"] is None
    assert "only the text typed there" in step5["error_message"]
    assert record["device_state"]["chats"] == {}


def test_5_a_contact_whose_name_was_typed_is_still_found_in_the_results(here, capsys):
    code, info, record = run_json("给张三发消息说你好", capsys=capsys)
    assert code == 0 and record["device_state"]["chats"] == {"张三": ["你好"]}
    assert record["steps"][4]["tier"] == "tree"                       # the result row, not the search box


# 7 -------------------------------------------------------------------------------------------------------
def plan(*steps: dict, check: dict | None = None) -> dict:
    return {"steps": list(steps), "success_check": check or {}}


@pytest.mark.slow
def test_7_after_a_replan_counters_and_the_ctrl_c_summary_count_the_real_steps(model_server, tmp_path, cli_env):
    # Five steps; step 2 is not on the screen, the model replans two steps, and Ctrl-C comes in the last one.
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                                     {"action": "tap", "target_ref": "text:没有这一项"},
                                     {"action": "wait", "params": {"ms": 100}},
                                     {"action": "wait", "params": {"ms": 100}},
                                     {"action": "wait", "params": {"ms": 100}}, check={"app": "x.y"}),
                        plan({"action": "wait", "params": {"ms": 100}}, {"action": "wait", "params": {"ms": 60000}},
                             check={"app": "x.y"}))
    model_server.script("locate", {"found": False, "reason": "没有这一项"})
    (tmp_path / "fast.yaml").write_text(yaml.safe_dump(FAST_SIM), encoding="utf-8")
    env = {**cli_env, "CUSTOM_LLM_BASE_URL": model_server.url, "CUSTOM_LLM_API_KEY": SECRET_KEY,
           "CUSTOM_LLM_MODEL": "test-vl"}
    proc = remote_proc("run", "--device", "sim", "--scenario", "fast.yaml", "--max-model-calls", "5", "找个不存在的设置",
                       env=env, cwd=tmp_path)
    err_tail = Tail(proc.stderr)
    wait_for(lambda: len(model_server.requests_for("plan")) >= 2, 90, "the replan")
    err_tail.wait("[4/", 30)                                          # step 4 (the 60 s wait) has started
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out = proc.stdout.read()
    proc.wait(timeout=30)
    err = err_tail.rest()
    assert proc.returncode == 130, err
    assert "replanned after step 2 failed: 2 new step(s), 4 in all" in err
    counters = [line.split("]")[0].strip() + "]" for line in err.splitlines() if line.strip().startswith("[")]
    assert counters == ["[1/5]", "[2/5]", "[3/4]", "[4/4]"], err
    assert "2/4 steps ok, 1 failed, 1 not done" in out, out       # launch and a wait ok; the 60 s wait not done
    record = json.loads(next((tmp_path / "runs").iterdir()).joinpath("run.json").read_text(encoding="utf-8"))
    assert record["status"] == "aborted" and record["steps_planned"] == 4 and len(record["steps"]) == 3
