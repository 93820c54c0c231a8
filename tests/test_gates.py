"""A step's risk is decided on the step as it will run, at every door (issue 34, items 1-3, 5, 7).

Driven as a user drives the product: ``remote run`` through ``cli.main`` on the simulated phone over the real
ADB protocol, a model through the loopback server and the real openai client, an agent through the MCP SDK's
own client. Each test reads what reached the phone from the phone's own command log: a gate that only
prints a question but still sends the key would fail here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from remote.apps.learned import LearnedStore
from remote.cli import main
from remote.core.plan import sensitivity
from remote.core.plan.steps import StepPlan
from remote.core.records import ActionName
from remote.mcp.access import AccessGate
from remote.mcp.session import Session, SessionOptions
from remote.runner.scope import Scope
from tests.support.run_fixtures import run_sim
from tests.test_mcp_gates import REGISTRY, Person, in_process
from tests.test_mcp_stdio import call, ok, text_of


def records(workdir: Path) -> list[dict[str, Any]]:
    return [json.loads((d / "run.json").read_text(encoding="utf-8")) for d in sorted((workdir / "runs").iterdir())]


def keys_sent(record: dict[str, Any]) -> list[str]:
    return [c.split()[-1] for c in record["device_state"]["commands"] if "input keyevent" in c]


def taps_sent(record: dict[str, Any]) -> list[str]:
    return [c for c in record["device_state"]["commands"] if "input tap" in c]


# ---------------------------------------------------------------- item 1: a model's call key in `remote run`


@pytest.mark.parametrize("key, says", [("CALL", "phone call"), (6, "phone call"), (64, "opens the browser"),
                                       (176, "opens the system settings"), ("KEYCODE_CALL", "phone call"),
                                       (399, "not known to be harmless")])
def test_a_model_plan_pressing_a_call_or_app_key_asks_and_without_a_terminal_nothing_is_pressed(
        with_model, workdir, capsys, key, says):
    with_model.script("plan", {"steps": [{"action": "press_key", "params": {"key": key}}],
                               "success_check": {"app": "com.android.dialer"}})
    assert run_sim("按一下那个键") == 130
    out = capsys.readouterr().out
    assert "sensitive step not confirmed" in out and says in out, out
    (record,) = records(workdir)
    assert keys_sent(record) == [] and record["steps"][0]["step"]["sensitive"] is True
    assert not LearnedStore(Path(os.environ["REMOTE_LEARNED_DIR"])).tasks()   # nothing learned


def test_a_call_key_allowed_once_is_learned_with_its_mark_and_the_replay_asks_again(with_model, workdir, capsys):
    with_model.script("plan", {"steps": [{"action": "press_key", "params": {"key": "CALL"}}],
                               "success_check": {"app": "com.android.dialer"}})
    assert run_sim("按一下拨号键", "--yes") == 0
    first = records(workdir)[-1]
    assert keys_sent(first) == ["5"] and first["status"] == "success"
    store = LearnedStore(Path(os.environ["REMOTE_LEARNED_DIR"]))
    (learned,) = store.tasks().values()
    assert learned.template.steps[0].get("sensitive") is True        # the mark travels with the learned step
    capsys.readouterr()
    calls = len(with_model.requests)
    assert run_sim("按一下拨号键") == 130                               # the replay: no model, and it asks
    out = capsys.readouterr().out
    assert "plan from learned" in out or "learned" in out
    assert "sensitive step not confirmed" in out and "phone call" in out, out
    assert len(with_model.requests) == calls and keys_sent(records(workdir)[-1]) == []


# ---------------------------------------------------------------- item 3: slots, -e values and extracted values


@pytest.fixture
def pay_module(workdir, monkeypatch):
    """A module whose template taps whatever the sentence (or -e) names: the template's own words are harmless."""
    mod = workdir / "mods" / "paytest"
    mod.mkdir(parents=True)
    (mod / "config.yaml").write_text("name: paytest\npackage: com.tencent.mm\nkeywords: [点一下, 戳一下]\n",
                                     encoding="utf-8")
    (mod / "tasks.yaml").write_text(
        "tasks:\n"
        "  - name: tap_named\n    patterns: ['点一下{who}']\n    steps:\n"
        "      - {action: launch_app, params: {package: com.tencent.mm}}\n"
        "      - {action: tap, target_ref: 'text:{who}', description: 'tap {who}'}\n"
        "    success_check: {app: com.tencent.mm}\n"
        "  - name: tap_given\n    patterns: ['戳一下']\n    env: {who: null}\n    steps:\n"
        "      - {action: launch_app, params: {package: com.tencent.mm}}\n"
        "      - {action: tap, target_ref: 'text:{who}'}\n"
        "    success_check: {app: com.tencent.mm}\n"
        "  - name: tap_in_block\n    patterns: ['块里点一下{who}']\n    steps:\n"
        "      - {action: launch_app, params: {package: com.tencent.mm}}\n"
        "      - run: {steps: [{action: tap, target_ref: 'text:{who}'}]}\n"
        "    success_check: {app: com.tencent.mm}\n", encoding="utf-8")
    monkeypatch.setenv("REMOTE_MODULES", str(workdir / "mods"))
    return mod


@pytest.mark.parametrize("sentence, extra", [("点一下轉賬", ()), ("点一下ＰＡＹ", ()), ("戳一下", ("-e", "who=转账")),
                                             ("戳一下", ("-e", "who=删除聊天记录")), ("块里点一下转账", ())])
def test_a_pay_word_from_the_sentence_or_a_value_asks_before_the_tap(pay_module, workdir, capsys, sentence, extra):
    assert run_sim(sentence, *extra) == 130
    out = capsys.readouterr().out
    assert "sensitive step not confirmed" in out, out
    record = records(workdir)[-1]
    tapped = [s for s in record["steps"] if s["step"]["action"] == "tap"]
    assert tapped and tapped[0]["step"]["sensitive"] is True and taps_sent(record) == []


def test_a_harmless_value_in_the_same_template_is_not_asked_about(pay_module, workdir, capsys):
    run_sim("戳一下", "-e", "who=通讯录")
    out = capsys.readouterr().out
    assert "sensitive" not in out, out      # the gate judges the value, not the template: 通讯录 needs no yes


def test_an_extracted_value_is_judged_when_it_fills_the_step():
    """What `extract` read off the screen fills the step through the same binding as a slot (Scope.bind)."""
    written = {"action": "tap", "target_ref": "text:{who}"}
    step = StepPlan(step=2, action=ActionName.TAP, target_ref="text:{who}", template=written, source="template")
    scope = Scope(variables={"who": "立即轉賬"})
    bound = scope.bind(step)
    assert bound.target_ref == "text:立即轉賬" and bound.sensitive and "转账" in bound.sensitive_reason
    assert not Scope(variables={"who": "张三"}).bind(step).sensitive


def test_one_rule_for_every_door():
    typed = StepPlan(step=1, action=ActionName.INPUT_TEXT, target_ref="editable:", params={"text": "请删除这条"})
    assert sensitivity.decide(typed) == ""                 # a message that mentions 删除 deletes nothing
    tap = StepPlan(step=1, action=ActionName.TAP, target_ref="text:发送", source="template")
    assert sensitivity.touched_reason(tap, "确认转账") and not sensitivity.touched_reason(tap, "发送")
    assert sensitivity.decide(StepPlan(step=1, action=ActionName.PRESS_KEY, params={"key": "BACK"})) == ""
    assert "phone call" in sensitivity.decide(StepPlan(step=1, action=ActionName.PRESS_KEY, params={"key": 79}))
    marked = sensitivity.mark(StepPlan(step=1, action=ActionName.TAP, target_ref="text:x", sensitive=True,
                                       sensitive_reason="asked by the agent"))
    assert marked.sensitive and marked.sensitive_reason == "asked by the agent"   # a mark is never cleared


# ---------------------------------------------------------------- item 2: MCP save_task keeps the mark


@pytest.mark.slow
def test_a_call_key_allowed_over_mcp_is_saved_with_its_mark_and_the_replay_asks(adb, sim_phone, tmp_path, workdir,
                                                                                capsys, monkeypatch):
    person = Person()
    person.yes = True
    learned_dir = tmp_path / "learned"
    session = Session(adb, registry=REGISTRY, gate=AccessGate(["*"]), phone=sim_phone,
                      options=SessionOptions(runs_dir=tmp_path / "runs", work_dir=tmp_path / "work",
                                             launch_settle_s=0.2, learned=LearnedStore(learned_dir), learn=True))

    async def scenario() -> None:
        async with in_process(session, person) as client:
            await ok(client, "key", combo="call")
            assert any("phone call" in q for q in person.asked)
            assert sim_phone.snapshot()["foreground"]["package"] == "com.android.dialer"
            saved = await call(client, "save_task", task="帮我按拨号键", check=["text:模拟应用：电话"])
            assert not saved.is_error, text_of(saved)
    anyio.run(scenario)
    (path,) = learned_dir.glob("*.yaml")
    step = yaml.safe_load(path.read_text(encoding="utf-8"))["tasks"][0]["steps"][-1]
    assert step["action"] == "press_key" and step.get("sensitive") is True

    # `remote run` of the same sentence replays it with no model: it asks, and without a terminal nothing is pressed
    monkeypatch.setenv("REMOTE_LEARNED_DIR", str(learned_dir))
    assert run_sim("帮我按拨号键") == 130
    out = capsys.readouterr().out
    assert "learned" in out and "sensitive step not confirmed" in out, out
    assert keys_sent(records(workdir)[-1]) == []


# ---------------------------------------------------------------- item 5: names are names


def test_a_learned_name_that_is_a_path_is_refused_on_read_and_forget_touches_only_its_folder(tmp_path, capsys):
    learned = tmp_path / "learned"
    (learned / "images").mkdir(parents=True)
    outside = tmp_path / "escape_s1.png"
    outside.write_bytes(b"not mine")
    text = ("learned: {module: wechat, task: x, source_run: r}\ntasks:\n  - name: ../escape\n"
            "    patterns: [按一下]\n    steps:\n      - {action: press_key, params: {key: BACK}}\n"
            "    success_check: {app: com.android.launcher3}\n")
    (learned / "escape.yaml").write_text(text, encoding="utf-8")
    store = LearnedStore(learned)
    assert store.tasks() == {} and any("letters, digits and _ only" in str(p) for p in store.problems)
    code = main(["modules", "forget", "../escape", "--learned-dir", str(learned)])
    assert code != 0 and outside.exists() and (learned / "escape.yaml").exists()
    with pytest.raises(Exception, match="letters, digits and _ only"):
        store.save({"name": "../../x", "patterns": ["a"], "steps": []}, {}, {})


# ---------------------------------------------------------------- item 7: a linked image is no image


def test_a_module_image_that_is_a_link_is_a_problem_for_modules_check(workdir, monkeypatch, capsys):
    mod = workdir / "mods" / "linky"
    (mod / "images").mkdir(parents=True)
    (mod / "config.yaml").write_text("name: linky\npackage: com.example.linky\nkeywords: [链接]\n",
                                     encoding="utf-8")
    (mod / "tasks.yaml").write_text(
        "tasks:\n  - name: t\n    patterns: [点链接]\n    steps:\n"
        "      - {action: tap, target_ref: passwd}\n    success_check: {app: com.example.linky}\n",
        encoding="utf-8")
    (mod / "images" / "passwd.png").symlink_to("/etc/passwd")
    monkeypatch.setenv("REMOTE_MODULES", str(workdir / "mods"))
    assert main(["modules", "check"]) != 0
    out = capsys.readouterr()
    said = out.out + out.err
    assert "passwd.png: a link (to /etc/passwd)" in said and "'passwd' has no image" in said, said
