"""The house (issue 14): plans parsed once and executed as parsed, one-way layers, no cycles, a short tap path."""

from __future__ import annotations

import traceback
from pathlib import Path

import grimp
import pytest

from remote.cli import main
from remote.core.records import StepStatus, TaskStatus
from tests.support.model_fixtures import SECRET_KEY

ROOT = Path(__file__).resolve().parent.parent


def plan(*steps: dict, check: dict) -> dict:
    return {"steps": list(steps), "success_check": check}


def test_a_swipe_with_start_and_end_points_executes(make_runner, sim_phone, model_server, llm_config):
    model_server.script("plan", plan({"action": "go_home"},
                                     {"action": "swipe", "params": {"start": [900, 1200], "end": "100,1200"}},
                                     check={"app": "com.android.launcher3"}))
    result = make_runner(llm_config).run("把桌面翻到下一页")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert "cmd input swipe 900 1200 100 1200 300" in sim_phone.snapshot()["commands"]   # `cmd input`: Android 11+
    assert sim_phone.snapshot()["launcher_page"] == 2


def test_a_launch_app_with_a_target_executes(make_runner, sim_phone, model_server, llm_config):
    model_server.script("plan", plan({"action": "launch_app", "target_ref": "微信"},
                                     check={"app": "com.tencent.mm"}))
    result = make_runner(llm_config).run("进入那个聊天软件")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["foreground"]["package"] == "com.tencent.mm"


def test_a_step_with_alternatives_says_which_one_matched(make_runner, sim_phone, model_server, llm_config):
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                                     {"action": "tap", "target_ref": ["desc:放大镜", "id:no_such_id", "desc:搜索"]},
                                     check={"app": "com.tencent.mm"}))
    result = make_runner(llm_config).run("去搜索页")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    tap = result.step_results[1]
    assert tap.locate_result.matched_ref == "desc:搜索" and "found by the alternative desc:搜索" in tap.notes
    assert sim_phone.snapshot()["foreground"]["screen"] == "search"


def test_plan_command_hands_the_planner_the_modules_images(model_server, tmp_path, monkeypatch, capsys):
    from PIL import Image

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUSTOM_LLM_BASE_URL", model_server.url)
    monkeypatch.setenv("CUSTOM_LLM_API_KEY", SECRET_KEY)
    monkeypatch.setenv("CUSTOM_LLM_MODEL", "test-vl")
    Image.new("RGB", (1080, 2400), "white").save(tmp_path / "s.png")
    model_server.script("plan", plan({"action": "tap", "target_ref": "send_button"}, check={"text": "你好"}))
    assert main(["plan", "s.png", "发出去", "--module", "wechat"]) == 0
    prompt = model_server.requests_for("plan")[0].text
    assert all(name in prompt for name in ("send_button", "wechat_search", "wechat"))


def test_no_import_cycle_between_any_two_modules():
    graph = grimp.build_graph("remote")      # lazy imports inside functions included
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if graph.chain_exists(importer=imported, imported=module):
                cycles.append((module, imported))
    assert cycles == []


def test_the_layer_contracts_hold():
    import subprocess
    import sys

    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "broken" in done.stdout and " 0 broken" in done.stdout


def test_one_tap_from_the_command_line_passes_few_files_each_once(tmp_path, monkeypatch):
    """The call stack at the `input tap` of the headline task: at most 8 product files, none entered twice."""
    from remote.core.device.transport import AdbLink

    stacks: list[list[str]] = []
    original = AdbLink.shell

    def spy(self, args, timeout=None):  # noqa: ANN001, ANN202 - the link's own signature
        if isinstance(args, list) and "tap" in args[:3] and "input" in args[:2]:   # `cmd input tap` from Android 11
            stacks.append([f.filename for f in traceback.extract_stack()])
        return original(self, args, timeout)

    monkeypatch.setattr(AdbLink, "shell", spy)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fast.yaml").write_text("uiautomator_delay_ms: 0\n", encoding="utf-8")
    assert main(["run", "--device", "sim", "--scenario", "fast.yaml", "给张三发微信消息说你好"]) == 0
    assert stacks
    product = str(ROOT / "remote")
    for stack in stacks:
        # the spied method is AdbLink.shell itself: transport.py is the last file of the path
        files = [f for f in stack if f.startswith(product)] + [str(ROOT / "remote/core/device/transport.py")]
        visits = [f for i, f in enumerate(files) if i == 0 or files[i - 1] != f]
        assert len(set(visits)) == len(visits), visits        # no file entered twice
        assert len(visits) <= 8, visits
    first = [Path(f).relative_to(ROOT).as_posix() for f in dict.fromkeys(f for f in stacks[0] if f.startswith(product))]
    assert first == ["remote/cli.py", "remote/commands/run.py", "remote/commands/_run_task.py",
                     "remote/runner/task_runner.py",
                     "remote/runner/step_runner.py", "remote/runner/targeted.py",
                     "remote/core/device/adb_controller.py"], first


@pytest.mark.parametrize("bad", [{"ms": "NaN"}, {"ms": -1}, {"ms": 10**12}])
def test_steps_cannot_be_built_with_unusable_arguments(bad):
    from remote.core.plan.actions import ArgsError
    from remote.core.records import ActionName, StepPlan

    with pytest.raises(ArgsError):
        StepPlan(1, ActionName.WAIT, params=bad)
    assert StepPlan(1, ActionName.WAIT, params={"ms": 500}).args.ms == 500


def test_dry_run_step_status_is_an_enum_value_in_the_record(make_runner):
    result = make_runner(dry_run=True).run("给张三发微信消息说你好")
    assert {sr.status for sr in result.step_results} == {StepStatus.SUCCESS, StepStatus.NOT_CHECKED}


def test_no_function_of_the_product_is_above_complexity_20():
    """radon's rank D or worse (cyclomatic complexity above 20) nowhere in remote/: each job has its own named
    piece (docs/architecture.md). The README's test command prints the same list (`radon cc -s -n D remote`)."""
    from radon.complexity import cc_visit

    worst = []
    for path in sorted((ROOT / "remote").rglob("*.py")):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if block.complexity > 20:
                worst.append(f"{path.relative_to(ROOT)}:{block.lineno} {block.name} ({block.complexity})")
    assert worst == []
    assert any(b.complexity > 20 for b in cc_visit("def f(x):\n" + "".join(
        f"    if x == {i}:\n        return {i}\n" for i in range(21)))), "the measure itself must see a complex one"
