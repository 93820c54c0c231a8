"""The values a run fills into its steps: the sentence's slots, ``-e KEY=VALUE``, and what extract steps read.

A template's plan arrives with the sentence's slots already filled; a ``{name}`` that no slot fills
stays, and each step keeps its form as written (``StepPlan.template``). Just before such a step runs,
:meth:`Scope.bind` fills it again from that form, in one pass (a value holding ``{braces}`` is typed as
it is), and parses it again (so a value that makes a bad step is a failed step, not a crash)::

    scope = Scope.for_plan(plan, env={"contact": "张三"})     # ConfigError when a needed value is missing
    step = scope.bind(step)                                   # "text:{contact}" -> "text:张三"
    scope.variables["last_message"] = "明天见"                  # an extract's value
    scope.answer("{last_message}")                           -> "明天见"

Precedence: a variable an extract read > the sentence's slot > ``-e`` > the template's ``env:`` default.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from remote.core.plan import sensitivity
from remote.core.plan.actions import ArgsError
from remote.core.plan.checks import SuccessCheck, parse_success_check
from remote.core.plan.flow import Extract
from remote.core.plan.schema import parse_step
from remote.core.plan.values import Value, as_text, fill_slots, slots_in
from remote.core.records import StepPlan, TaskPlan
from remote.errors import ConfigError

_ONE = re.compile(r"^\s*\{(\w+)\}\s*$")


@dataclass
class Scope:
    slots: dict[str, str] = field(default_factory=dict)          # the sentence's (or a run step's slots:)
    given: dict[str, str] = field(default_factory=dict)          # -e KEY=VALUE
    defaults: dict[str, str] = field(default_factory=dict)       # the template's env: defaults
    variables: dict[str, Value] = field(default_factory=dict)    # extracted; shared with sub-tasks
    module: str = ""               # the module whose steps run (a run: without module: means this one)
    package: str = ""              # its app (when: {version: ...} reads this one's)
    depth: int = 0                 # sub-tasks inside sub-tasks

    @classmethod
    def for_plan(cls, plan: TaskPlan, *, env: Mapping[str, str] | None = None, package: str = "",
                 variables: dict[str, Value] | None = None, depth: int = 0) -> Scope:
        """The scope of ``plan``; ConfigError naming what neither the sentence, -e nor a default gives."""
        scope = cls(slots=dict(plan.slots), given=dict(env or {}), module=plan.module, package=package, depth=depth,
                    defaults={k: v for k, v in plan.env.items() if v is not None},
                    variables=variables if variables is not None else {})
        missing = sorted(needed(plan) - set(scope.values()) - extracted(plan.steps))
        if missing:
            name = plan.analysis.get("template") or "the task"
            raise ConfigError(f"task {name} needs {', '.join('{' + m + '}' for m in missing)}, which the sentence "
                              "does not say", hint="give it on the command line: " +
                              " ".join(f"-e {m}=VALUE" for m in missing) + " (a batch or schedule entry: env:)")
        return scope

    def child(self, plan: TaskPlan) -> Scope:
        """The scope of a sub-task (``run: {task, slots}``): its own slots, the same -e and variables."""
        return Scope.for_plan(plan, env=self.given, variables=self.variables, depth=self.depth + 1,
                              package=self.package)

    def values(self) -> dict[str, str]:
        return {**self.defaults, **self.given, **self.slots, **{k: as_text(v) for k, v in self.variables.items()}}

    def needs_binding(self, step: StepPlan) -> bool:
        """Does the step, as written, name a value the plan was not built with?"""
        return step.template is not None and bool(slots_in(step.template) - set(self.slots))

    def bind(self, step: StepPlan) -> StepPlan:
        """The step filled with the current values (itself when nothing is left to fill); ArgsError when a
        value makes it a bad step. A block's own steps are bound when they run, not now."""
        if not self.needs_binding(step) or step.template is None:
            return step
        problems: list[str] = []
        bound = parse_step(fill_slots(copy.deepcopy(step.template), self.values()), step.step, source=step.source,
                           problems=problems, repairs=[])
        if bound is None or problems:
            raise ArgsError(problems or [f"step {step.step} cannot be built from its values"])
        filled = replace(bound, step=step.step, parent=step.parent, steps=step.steps, template=step.template,
                         sensitive=step.sensitive, sensitive_reason=step.sensitive_reason)
        return sensitivity.mark(filled)   # the mark the step had stays; what its values make it is added

    def check(self, plan: TaskPlan, check: SuccessCheck) -> SuccessCheck:
        """The plan's success_check with the run's values, when it names one its build did not have."""
        written = plan.check_template
        if check is not plan.success_check or not written or not slots_in(written) - set(self.slots):
            return check
        try:
            return parse_success_check(fill_slots(copy.deepcopy(written), self.values()))
        except ArgsError as exc:
            raise ConfigError("the success_check cannot be built from the run's values: " +
                              "; ".join(exc.problems)) from exc

    def answer(self, spec: str) -> Value:
        """``"{last_message}"`` -> that variable's typed value; a longer text -> the text, filled.
        ConfigError naming a value nothing gave."""
        one = _ONE.match(spec)
        if one and one.group(1) in self.variables:
            return self.variables[one.group(1)]
        values = self.values()
        missing = sorted(slots_in(spec) - set(values))
        if missing:
            raise ConfigError(f"the answer needs {', '.join('{' + m + '}' for m in missing)}, which no step read")
        filled: str = fill_slots(spec, values)
        return filled


def needed(plan: TaskPlan) -> set[str]:
    """Every {name} the plan's steps (as written), check and answer use."""
    names = set().union(*(slots_in(s.template) for s in walk(plan.steps) if s.template is not None)) \
        if plan.steps else set()
    return names | slots_in(plan.check_template or {}) | slots_in(plan.answer)


def extracted(steps: Iterable[StepPlan]) -> set[str]:
    return {s.args.name for s in walk(steps) if isinstance(s.args, Extract)}


def walk(steps: Iterable[StepPlan]) -> list[StepPlan]:
    """The steps and, depth first, the steps of their blocks."""
    out: list[StepPlan] = []
    for step in steps:
        out.append(step)
        out += walk(step.steps)
    return out
