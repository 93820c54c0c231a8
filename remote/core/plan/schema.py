"""A model's plan JSON -> a validated :class:`TaskPlan` (pure; no I/O, no model).

The format (the planner's prompt asks for it, ``remote/ai/prompts/``)::

    {"analysis": {"current_screen": "...", "target_state": "...", "estimated_steps": 3},
     "steps": [{"step": 1, "action": "tap", "target_ref": "text:微信", "target_type": "text",
                "description": "...", "params": {}, "verify_ref": null, "success_condition": "...",
                "fallback": null, "timeout": 3000, "retry": 2, "wait_before": 0, "wait_after": 300}],
     "success_check": {"text": "你好"}, "success_criteria": "...", "potential_issues": ["..."]}

Repaired where safe (each repair is listed in ``plan.analysis["repairs"]``):
action synonyms (``click`` -> ``tap``, ``type`` -> ``input_text``, ``back`` ->
``press_key`` BACK), numbers given as strings, a top-level ``text``/``direction``
moved into ``params``, ``x``/``y`` params into ``xy:``, ``retry`` above 5 lowered
to 5, missing or unknown ``target_type`` inferred from the ``target_ref``, steps
renumbered. Rejected (:class:`PlanError` listing every problem): no steps,
unknown actions, a tap without a target, ``input_text`` without text, a swipe
without direction or points, any number that is not finite or out of its bounds
(waits <= 60 s, key repeats <= 50, gestures <= 10 s: :mod:`remote.core.plan.actions`),
bad ``xy:`` targets, a model's plan without a final check. ``target_ref`` may be
a list: alternatives tried in order.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from remote.core.plan.action_names import normalize_action
from remote.core.plan.actions import ArgsError, Finish, Swipe, Wait, finite_number
from remote.core.plan.checks import SuccessCheck, parse_success_check
from remote.core.plan.flow import (
    BLOCK_KINDS,
    MAX_BLOCK_STEPS,
    MAX_DEPTH,
    PARAM_KEYS,
    When,
    is_flow,
    parse_any,
    parse_when,
    short_form,
    target_of,
)
from remote.core.records import ActionName, StepPlan, TargetType, TaskPlan
from remote.errors import InvalidPlan

MAX_STEPS = 50
MAX_ANCHORS = 4
MAX_RETRY = 5
MAX_WAIT_MS = 60_000
MAX_TIMEOUT_MS = 120_000
TARGET_PREFIXES = ("text:", "id:", "desc:", "dynamic:", "xy:", "fixed:", "editable:", "role:")
DIRECTIONS = ("up", "down", "left", "right")

_TARGETED = {ActionName.TAP, ActionName.LONG_PRESS}
_XY = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")


class PlanError(InvalidPlan):
    """A plan that cannot be used; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid plan: " + "; ".join(problems))
        self.problems = problems


def _number(value: Any, name: str, where: str, problems: list[str], repairs: list[str]) -> int | None:
    number = finite_number(value)
    if number is not None and isinstance(value, str):
        repairs.append(f"{where}: {name} {value[:40]!r} read as a number")
    if number is None:
        problems.append(f"{where}: {name} must be a finite number, not {str(value)[:40]!r}")
        return None
    return int(number)


def infer_target_type(target_ref: str | None) -> TargetType | None:
    if not target_ref:
        return None
    if target_ref.startswith("dynamic:"):
        return TargetType.DYNAMIC
    if target_ref.startswith(("text:", "desc:")):
        return TargetType.TEXT
    if target_ref.startswith(("id:", "xy:", "fixed:")):
        return TargetType.UI
    return TargetType.ICON


def check_target_ref(ref: str, screen_size: tuple[int, int] | None = None) -> str | None:
    """A problem with a ``target_ref`` (see the design's grammar), or None."""
    if ref.startswith("xy:"):
        match = _XY.match(ref[3:])
        if not match:
            return f"xy target {ref!r} must be 'xy:X,Y'"
        x, y = float(match.group(1)), float(match.group(2))
        limit_x, limit_y = screen_size if screen_size else (10_000, 10_000)
        if x < 0 or y < 0 or x >= max(limit_x, 1001) or y >= max(limit_y, 1001):
            return f"xy target {ref!r} is outside the screen"
        return None
    for prefix in TARGET_PREFIXES:
        if ref.startswith(prefix) and not ref[len(prefix):].strip() and prefix != "editable:":
            return f"target {ref!r} names nothing after {prefix!r}"
    return None


def _params(raw: dict[str, Any], action: str, where: str, repairs: list[str]) -> dict[str, Any]:
    params = raw.get("params")
    params = dict(params) if isinstance(params, dict) else {}
    for key in ("text", "direction", "key", "keycode", "package", "url", "number", "duration", "ms", "times",
                "start", "end", "message", "success", *PARAM_KEYS.get(action, ())):
        if key in raw and key not in params:
            params[key] = raw[key]
            repairs.append(f"{where}: top-level {key!r} moved into params")
    return params


def _targets(raw: dict[str, Any], where: str, problems: list[str]) -> list[str]:
    value = raw.get("target_ref") or raw.get("target") or None
    items = value if isinstance(value, list) else [value] if value is not None else []
    out = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            problems.append(f"{where}: target_ref must be a string or a list of strings, not {str(item)[:40]!r}")
            continue
        out.append(item.strip())
    return out


def _anchors(raw: dict[str, Any], where: str, problems: list[str]) -> tuple[str, ...]:
    """``anchors: [text:通讯录, text:发现]``: what the screen must show before the step acts (a learned step's
    guard); at most a few, each a target_ref the free tiers find."""
    value = raw.get("anchors")
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    if len(items) > MAX_ANCHORS or not all(isinstance(i, str) and i.strip() for i in items):
        problems.append(f"{where}: anchors must be a list of at most {MAX_ANCHORS} target_refs")
        return ()
    for item in items:
        problem = check_target_ref(item.strip())
        if problem or item.strip().startswith(("dynamic:", "xy:")):
            problems.append(f"{where}: anchor {item[:40]!r}: {problem or 'an anchor must be found without a model'}")
    return tuple(i.strip() for i in items)


def _xy_from_params(action: ActionName, params: dict[str, Any], targets: list[str], where: str,
                    problems: list[str], repairs: list[str]) -> None:
    if action in _TARGETED and not targets:
        if "x" in params and "y" in params:
            targets.append(f"xy:{params.pop('x')},{params.pop('y')}")
            repairs.append(f"{where}: x/y params turned into {targets[0]}")
        else:
            problems.append(f"{where}: {action.value} needs a target_ref")


def _fallback(value: Any, where: str, screen_size: tuple[int, int] | None, source: str,
              repairs: list[str]) -> StepPlan | None:
    if value is None or value == {}:
        return None
    if not isinstance(value, dict):
        repairs.append(f"{where}: fallback {str(value)[:40]!r} is not an object; dropped")
        return None
    problems: list[str] = []
    step = parse_step(value, 0, screen_size=screen_size, source=source, problems=problems, repairs=[])
    if step is None or problems:
        repairs.append(f"{where}: fallback dropped ({'; '.join(problems)[:200]})")
        return None
    return step


def _timing(raw: dict[str, Any], where: str, problems: list[str], repairs: list[str]) -> dict[str, int]:
    values: dict[str, int] = {}
    for name, default, low, high in (("timeout", 3000, 1, MAX_TIMEOUT_MS), ("retry", 2, 0, None),
                                     ("wait_before", 0, 0, MAX_WAIT_MS), ("wait_after", 300, 0, MAX_WAIT_MS)):
        value = raw.get(name)
        amount = default if value is None else _number(value, name, where, problems, repairs)
        if amount is None:
            continue
        if amount < low or (high is not None and amount > high):
            problems.append(f"{where}: {name} {amount} is outside {low}..{high}")
            continue
        values[name] = amount
    if values.get("retry", 0) > MAX_RETRY:
        repairs.append(f"{where}: retry {values['retry']} lowered to {MAX_RETRY}")
        values["retry"] = MAX_RETRY
    return values


def _when(raw: dict[str, Any], where: str, problems: list[str]) -> When | None:
    try:
        return parse_when(raw.get("when"))
    except ArgsError as exc:
        problems.extend(f"{where}: {p}" for p in exc.problems)
        return None


def _body(value: Any, where: str, path: str, depth: int, screen_size: tuple[int, int] | None, source: str,
          problems: list[str], repairs: list[str]) -> tuple[StepPlan, ...]:
    """The steps of a block (repeat, retry, run), each parsed like any step; numbered 3.1, 3.2 in messages."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        problems.append(f"{where}: steps must be a non-empty list of steps")
        return ()
    if len(value) > MAX_BLOCK_STEPS:
        problems.append(f"{where}: a block holds at most {MAX_BLOCK_STEPS} steps, not {len(value)}")
        return ()
    if depth >= MAX_DEPTH:
        problems.append(f"{where}: blocks nest at most {MAX_DEPTH} deep")
        return ()
    out = []
    for i, raw in enumerate(value, start=1):
        step = parse_step(raw, i, screen_size=screen_size, source=source, problems=problems, repairs=repairs,
                          path=f"{path}.{i}", depth=depth + 1)
        if step is not None:
            out.append(step)
    return tuple(out)


def parse_step(raw: Any, number: int, *, screen_size: tuple[int, int] | None = None, source: str = "model",
               problems: list[str], repairs: list[str], path: str = "", depth: int = 0) -> StepPlan | None:
    """One step of a plan -> a :class:`StepPlan` with its typed, bounded ``args``; problems are appended.

    A block's steps are parsed too (``path`` numbers them in messages: ``step 3.2``); ``template`` keeps
    the step as written, to be filled again at run time."""
    path = path or str(number)
    where = f"step {path}"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be an object, not {type(raw).__name__}")
        return None
    raw = short_form(raw)
    template = copy.deepcopy(raw)
    action_name = _action_name(raw, where, problems, repairs)
    if action_name is None:
        return None
    params = _params(raw, action_name, where, repairs)
    if str(raw.get("action")).strip().lower() in ("back", "go_back"):
        params.setdefault("key", "BACK")
    action = ActionName(action_name)
    targets = _step_targets(raw, action_name, params, where, problems)
    body = _body(params.pop("steps", None), where, path, depth, screen_size, source, problems, repairs) \
        if action_name in BLOCK_KINDS else ()
    when = _when(raw, where, problems)
    _xy_from_params(action, params, targets, where, problems, repairs)
    problems.extend(f"{where}: {problem}" for problem in (check_target_ref(t, screen_size) for t in targets)
                    if problem)
    target_ref = targets[0] if targets else None
    description = str(raw.get("description") or "")[:500]
    try:
        args = parse_any(action, params, target_ref, description, body=len(body))
    except ArgsError as exc:
        problems.extend(f"{where}: {p}" for p in exc.problems)
        return None
    _as_read(args, params, where, repairs)
    values = _timing(raw, where, problems, repairs)
    return StepPlan(step=number, action=action, target_ref=target_ref,
                    target_type=_target_type(raw, target_ref, where, repairs),
                    description=description, params=params,
                    verify_ref=raw.get("verify_ref") if isinstance(raw.get("verify_ref"), str) else None,
                    success_condition=(str(raw["success_condition"])[:500] if raw.get("success_condition") else None),
                    fallback=_fallback(raw.get("fallback"), where, screen_size, source, repairs),
                    timeout=values.get("timeout", 3000), retry=values.get("retry", 2),
                    wait_before=values.get("wait_before", 0), wait_after=values.get("wait_after", 300),
                    alternatives=tuple(targets[1:]), source=source, anchors=_anchors(raw, where, problems),
                    args=args, when=when, steps=body, template=template)


def _action_name(raw: dict[str, Any], where: str, problems: list[str], repairs: list[str]) -> str | None:
    """The step's action as the grammar names it (a repair when written otherwise); None, with a problem,
    for an action the grammar does not know."""
    action_name = normalize_action(raw.get("action"))
    if action_name is None:
        problems.append(f"{where}: unknown action {str(raw.get('action'))[:40]!r} "
                        f"(use one of {', '.join(a.value for a in ActionName)})")
        return None
    if action_name != str(raw.get("action")).strip():
        repairs.append(f"{where}: action {raw.get('action')!r} read as {action_name!r}")
    return action_name


def _step_targets(raw: dict[str, Any], action_name: str, params: dict[str, Any], where: str,
                  problems: list[str]) -> list[str]:
    """The step's targets: its ``target_ref``/``target``, else what a flow step names in its params."""
    flow_target = target_of(action_name, params) if is_flow(action_name) else None
    given = raw.get("target_ref") or raw.get("target")
    return _targets({"target_ref": flow_target} if flow_target and not given else raw, where, problems)


def _as_read(args: Any, params: dict[str, Any], where: str, repairs: list[str]) -> None:
    """``params`` as they will be read: a swipe's direction in lower case, a wait's length written out."""
    if isinstance(args, Swipe) and args.direction:
        params["direction"] = args.direction
    if isinstance(args, Wait) and not any(k in params for k in ("ms", "seconds", "duration")):
        params["ms"] = args.ms
        repairs.append(f"{where}: wait without a duration waits {args.ms} ms")


def _target_type(raw: dict[str, Any], target_ref: str | None, where: str, repairs: list[str]) -> TargetType | None:
    """The step's target_type: as written when known, else inferred from its target (dynamic: always)."""
    raw_type = raw.get("target_type")
    if isinstance(raw_type, str) and raw_type in TargetType._value2member_map_:
        target_type: TargetType | None = TargetType(raw_type)
    else:
        target_type = infer_target_type(target_ref)
        if raw_type is not None:
            repairs.append(f"{where}: target_type {str(raw_type)[:40]!r} unknown; inferred {target_type}")
    if target_ref and target_ref.startswith("dynamic:"):
        target_type = TargetType.DYNAMIC
    return target_type


def parse_plan(data: Any, *, screen_size: tuple[int, int] | None = None, source: str = "model",
               module: str = "") -> TaskPlan:
    """Validate a parsed plan reply; raise :class:`PlanError` listing every problem.

    A model's plan (``source`` model or replan) must say what the finished task
    looks like: a ``success_check`` (the grammar of :mod:`remote.core.plan.checks`),
    or at least a ``success_criteria`` sentence for the verifier.
    """
    problems: list[str] = []
    repairs: list[str] = []
    data = _plan_object(data, repairs)
    steps = _plan_steps(data["steps"], screen_size, source, problems, repairs)
    check = SuccessCheck()
    try:
        check = parse_success_check(data.get("success_check"))
    except ArgsError as exc:
        problems.extend(exc.problems)
    criteria = str(data.get("success_criteria") or "")[:1000]
    ends_in_failure = bool(steps) and isinstance(steps[-1].args, Finish) and not steps[-1].args.success
    if source != "template" and not check and not criteria and not ends_in_failure:
        problems.append("the plan needs a success_check (app / text / target / absent / toggle) saying what the "
                        "finished task looks like")
    if problems:
        raise PlanError(problems)
    answer = data.get("answer")
    return TaskPlan(analysis=_analysis(data.get("analysis"), repairs), steps=steps, success_criteria=criteria,
                    potential_issues=_issues(data.get("potential_issues")),
                    source=source, module=module, success_check=check,
                    answer=answer[:500] if isinstance(answer, str) else "")


def _plan_object(data: Any, repairs: list[str]) -> dict[str, Any]:
    """The plan as an object with a non-empty, bounded ``steps`` list (a bare list is wrapped); PlanError
    otherwise."""
    if isinstance(data, list):
        data = {"steps": data}
        repairs.append("a bare list of steps was wrapped into a plan")
    if not isinstance(data, dict):
        raise PlanError([f"a plan must be a JSON object, not {type(data).__name__}"])
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise PlanError(["the plan has no steps (need a non-empty 'steps' list)"])
    if len(raw_steps) > MAX_STEPS:
        raise PlanError([f"the plan has {len(raw_steps)} steps; at most {MAX_STEPS}"])
    return data


def _plan_steps(raw_steps: list[Any], screen_size: tuple[int, int] | None, source: str, problems: list[str],
                repairs: list[str]) -> list[StepPlan]:
    """The plan's steps, numbered in order (a step numbered otherwise is renumbered, as a repair)."""
    steps = []
    for i, raw in enumerate(raw_steps, start=1):
        if isinstance(raw, dict) and raw.get("step") not in (None, i, str(i)):
            repairs.append(f"step {i}: numbered {str(raw.get('step'))[:20]!r}; renumbered")
        step = parse_step(raw, i, screen_size=screen_size, source=source, problems=problems, repairs=repairs)
        if step is not None:
            steps.append(step)
    return steps


def _analysis(analysis: Any, repairs: list[str]) -> dict[str, Any]:
    """The plan's analysis as an object (a sentence becomes its summary), with the repairs made listed."""
    if not isinstance(analysis, dict):
        analysis = {"summary": str(analysis)[:1000]} if analysis else {}
    return {**analysis, "repairs": repairs} if repairs else analysis


def _issues(issues: Any) -> list[str]:
    """The plan's potential issues: a sentence or a list of them, each at most 500 characters."""
    issues = [issues] if isinstance(issues, str) else issues or []
    return [str(i)[:500] for i in issues] if isinstance(issues, list) else []
