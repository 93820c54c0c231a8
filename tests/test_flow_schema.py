"""The flow step kinds parsed once (pure): typed, bounded, the same from a template's short form and a model's
JSON; what a read text means; values filled in one pass."""

from __future__ import annotations

import pytest

from remote.core.plan.actions import ArgsError
from remote.core.plan.flow import (
    Assert,
    Extract,
    Repeat,
    Retry,
    RunTask,
    ScrollUntil,
    WaitUntil,
    When,
    parse_when,
)
from remote.core.plan.schema import PlanError, parse_plan, parse_step
from remote.core.plan.values import ReadError, convert, env_entry, fill_slots, version_holds
from remote.core.records import ActionName, StepPlan, TaskPlan
from remote.runner.scope import Scope


def one(raw: dict) -> StepPlan:
    problems: list[str] = []
    step = parse_step(raw, 1, source="template", problems=problems, repairs=[])
    assert step is not None and not problems, problems
    return step


def problems_of(raw: dict) -> list[str]:
    problems: list[str] = []
    parse_step(raw, 1, source="template", problems=problems, repairs=[])
    return problems


@pytest.mark.parametrize(("short", "long", "args"), [
    ({"assert_visible": "text:WLAN"}, {"action": "assert_visible", "target_ref": "text:WLAN"}, Assert(True, 1000)),
    ({"assert_not_visible": {"target": "text:加载中", "timeout_ms": 0}},
     {"action": "assert_not_visible", "target_ref": "text:加载中", "params": {"timeout_ms": 0}}, Assert(False, 0)),
    ({"wait_until": {"not_visible": "text:加载中", "timeout_ms": 800}},
     {"action": "wait_until", "params": {"not_visible": "text:加载中", "timeout_ms": 800}}, WaitUntil(False, 800)),
    ({"scroll_until_visible": {"target": "text:关于手机", "direction": "down", "max_swipes": 8}},
     {"action": "scroll_until_visible", "target_ref": "text:关于手机", "params": {"max_swipes": 8}},
     ScrollUntil("down", 8)),
    ({"extract": {"below": "text:张三", "as": "last"}},
     {"action": "extract", "params": {"below": "text:张三", "as": "last"}}, Extract("below", "last")),
    ({"run": "open_page"}, {"action": "run", "params": {"task": "open_page"}}, RunTask("open_page")),
])
def test_a_template_short_form_and_a_models_json_form_parse_to_the_same_typed_step(short, long, args):
    a, b = one(short), one(long)
    assert a.args == b.args == args
    assert a.action is b.action and a.targets == b.targets


def test_blocks_hold_typed_steps_and_a_when_is_typed():
    step = one({"repeat": {"until_visible": ["text:到底了", "text:没有更多"], "max": 5,
                           "steps": [{"action": "swipe", "params": {"direction": "up"}},
                                     {"assert_visible": "text:列表", "when": {"app": "com.tencent.mm"}}]}})
    assert step.args == Repeat(max=5, until_visible=("text:到底了", "text:没有更多"))
    assert [s.action for s in step.steps] == [ActionName.SWIPE, ActionName.ASSERT_VISIBLE]
    assert step.steps[1].when == When((parse_when({"app": "com.tencent.mm"}).conditions[0],))
    assert one({"retry": {"steps": [{"action": "go_home"}]}}).args == Retry(2)
    assert step.to_dict()["steps"][1]["when"] == {"app": "com.tencent.mm"}


@pytest.mark.parametrize(("raw", "says"), [
    ({"repeat": {"while_visible": "text:加载更多", "steps": [{"action": "go_home"}]}}, "unbounded loop"),
    ({"repeat": {"times": 51, "steps": [{"action": "go_home"}]}}, "times 51 is outside 1..50"),
    ({"repeat": {"times": 2}}, "needs steps"),
    ({"wait_until": {"visible": "text:好", "timeout_ms": 3_600_000}}, "timeout_ms 3600000 is outside 0..60000"),
    ({"wait_until": {"timeout_ms": 100}}, "needs one of visible"),
    ({"scroll_until_visible": {"target": "text:x", "max_swipes": 1e9}}, "max_swipes"),
    ({"scroll_until_visible": {"target": "text:x", "direction": "sideways"}}, "direction must be one of"),
    ({"retry": {"times": 0, "steps": [{"action": "go_home"}]}}, "times 0 is outside 1..10"),
    ({"extract": {"from": "text:x", "below": "text:y", "as": "v"}}, "exactly one of"),
    ({"extract": {"from": "text:x", "as": "1bad"}}, "needs as: NAME"),
    ({"extract": {"from": "text:x", "as": "v", "pattern": "(unclosed"}}, "not a regular expression"),
    ({"extract": {"from": "text:x", "as": "v", "type": "date"}}, "type must be one of"),
    ({"run": {"task": "a", "steps": [{"action": "go_home"}]}}, "one of them"),
    ({"action": "go_home", "when": {"visibel": "text:x"}}, "unknown condition 'visibel'"),
    ({"action": "go_home", "when": {"version": "newest"}}, "must look like >=8.0.30"),
])
def test_unbounded_or_unusable_flow_steps_are_refused_when_parsed(raw, says):
    assert any(says in p for p in problems_of(raw)), problems_of(raw)


def test_blocks_nest_at_most_five_deep():
    raw: dict = {"action": "go_home"}
    for _ in range(6):
        raw = {"retry": {"times": 1, "steps": [raw]}}
    assert any("nest at most 5 deep" in p for p in problems_of(raw))


def test_a_model_plan_may_use_the_flow_kinds_and_answer():
    plan = parse_plan({"steps": [{"action": "extract", "params": {"from": "role:toggle:蓝牙", "as": "on",
                                                                    "type": "bool"}},
                                 {"action": "assertVisible", "target_ref": "text:蓝牙"}],
                       "success_criteria": "answered", "answer": "{on}"})
    assert plan.answer == "{on}" and plan.steps[1].action is ActionName.ASSERT_VISIBLE
    with pytest.raises(PlanError, match="unbounded loop"):
        parse_plan({"steps": [{"action": "repeat", "params": {"until_visible": "text:x"},
                               "steps": [{"action": "go_home"}]}], "success_criteria": "x"})


@pytest.mark.parametrize(("texts", "kind", "pattern", "value"), [
    (["明天见"], "string", None, "明天见"),
    (["已使用 37% - 还剩 162 GB"], "number", r"(\d+)%", 37),
    (["1,234.5 元"], "number", None, 1234.5),
    (["已关闭"], "bool", None, False),
    (["开启"], "bool", None, True),
    (["SimNet"], "bool", "SimNet", True),
    (["张三", "李四", " "], "list", None, ["张三", "李四"]),
    (["a1 b22 c333"], "list", r"\d+", ["1", "22", "333"]),
])
def test_what_a_read_text_means(texts, kind, pattern, value):
    got = convert(texts, kind, pattern)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("texts", "kind", "pattern", "says"), [
    (["明天见"], "number", None, "no number in '明天见'"),
    (["SimNet"], "bool", None, "cannot tell yes or no from 'SimNet'"),
    (["版本 13"], "string", r"v(\d+)", "does not match '版本 13'"),
    ([], "string", None, "nothing to read"),
])
def test_a_text_that_does_not_give_the_type_says_what_was_read(texts, kind, pattern, says):
    with pytest.raises(ReadError, match=says):
        convert(texts, kind, pattern)


@pytest.mark.parametrize(("actual", "spec", "holds"), [
    ("8.0.47", ">=8.0.30", True), ("8.0.1", ">=8.0.30", False), ("8.0.30", ">8.0.30", False),
    ("8.0.30", "=8.0.30", True), ("13", "<14", True), ("v8.0.32 (2580)", "!=8.0.32", False), ("unknown", ">=1", None),
])
def test_versions_compare_by_their_numbers(actual, spec, holds):
    assert version_holds(actual, spec) is holds


def test_values_go_in_once_and_the_sentence_wins_over_minus_e():
    plan = TaskPlan(steps=[one({"action": "input_text", "params": {"text": "{greeting}, {contact}"}})],
                    slots={"contact": "{greeting}"}, env={"greeting": None}, module="m")
    scope = Scope.for_plan(plan, env={"greeting": "早安", "contact": "李四"})
    bound = scope.bind(plan.steps[0])
    assert bound.args.text == "早安, {greeting}"          # the sentence's "{greeting}" stays as typed
    with pytest.raises(Exception, match=r"needs \{greeting\}.*-e greeting=VALUE"):
        Scope.for_plan(plan, env={})
    assert fill_slots("{a}{b}", {"a": "{b}", "b": "x"}) == "{b}x"


def test_an_answer_keeps_its_type_and_minus_e_values_are_checked():
    scope = Scope(variables={"on": True, "n": 13})
    assert scope.answer("{on}") is True and scope.answer("{n}") == 13 and scope.answer("版本 {n}") == "版本 13"
    with pytest.raises(Exception, match=r"needs \{gone\}"):
        scope.answer("{gone}")
    assert env_entry("contact", "张三") == ("contact", "张三")
    for key, value in (("bad key", "x"), ("k", ["list"]), ("k", "x" * 10_001)):
        with pytest.raises(ValueError):
            env_entry(key, value)


def test_a_step_with_unusable_flow_args_cannot_be_built():
    with pytest.raises(ArgsError):
        StepPlan(1, ActionName.WAIT_UNTIL, params={"visible": "text:x", "timeout_ms": "NaN"}, target_ref="text:x")


def _same(a: StepPlan, b: StepPlan) -> None:
    assert (a.action, a.targets, a.args, a.when, a.description) == (b.action, b.targets, b.args, b.when, b.description)
    assert len(a.steps) == len(b.steps)
    for x, y in zip(a.steps, b.steps, strict=True):
        _same(x, y)


def test_every_step_written_back_as_a_template_parses_to_itself_and_passes_modules_check(tmp_path):
    """What a compiler of runs (learned templates) emits with to_template() is a valid tasks.yaml step."""
    from remote.apps import ModuleRegistry
    from remote.apps.schema import Checker, check_step_keys

    registry = ModuleRegistry()
    steps = [one(dict(raw)) for m in registry.modules.values() for t in m.templates for raw in t.steps]
    steps.append(one({"repeat": {"while_visible": "text:加载更多", "max": 4, "steps": [
        {"extract": {"region": [0, 0, 500, 100], "as": "t", "type": "list", "pattern": r"\d+"}},
        {"action": "tap", "target_ref": ["text:更多", "desc:更多"], "when": {"not_checked": "role:toggle:x"},
         "wait_after": 900, "fallback": {"action": "press_key", "params": {"key": "BACK"}}}]}}))
    assert len(steps) > 60 and any(s.steps for s in steps)
    checker = Checker(tmp_path / "tasks.yaml")
    for step in steps:
        written = step.to_template()
        _same(one(written), step)
        check_step_keys(checker, written, "step", 1)
    assert checker.problems == []


def test_a_models_sensitive_step_inside_a_block_still_asks():
    from remote.apps import ModuleRegistry
    from remote.runner.planning import Planning

    plan = parse_plan({"steps": [{"action": "retry", "params": {"times": 2}, "steps": [
        {"action": "tap", "target_ref": "text:确认支付"}, {"action": "call", "params": {"number": "10086"}}]}],
        "success_criteria": "x"})
    marked = Planning.marked(plan, ModuleRegistry().modules["wechat"])
    assert [s.sensitive for s in marked.steps[0].steps] == [True, True]
