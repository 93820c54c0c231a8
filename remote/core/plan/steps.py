"""A plan and its steps, as they cross layers: what a template, a model or a replayed record asked for.

Field names are the run record's and the templates' format; fields are added, never renamed. A step's
``params`` are kept as written (JSON-friendly) and parsed once into ``args`` (``actions.parse_args``).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

from remote.core.plan.actions import ActionName
from remote.core.plan.checks import FailureScreen, SuccessCheck
from remote.core.plan.flow import TARGET_KEYS, FlowArgs, StepArgs, When, parse_any


class TargetType(enum.StrEnum):
    ICON = "icon"
    UI = "ui"
    DYNAMIC = "dynamic"
    STATE = "state"
    TEXT = "text"


def to_jsonable(value: Any) -> Any:
    """Dataclasses, enums, tuples and dicts to plain JSON types; images and bytes are dropped."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not f.metadata.get("transient")}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return None


@dataclass
class StepPlan:
    """One step. ``params`` as written (JSON-friendly); ``args`` the same, parsed once and bounded
    (:func:`remote.core.plan.actions.parse_args`): the executor reads only ``args``."""

    step: int
    action: ActionName
    target_ref: str | None = None
    target_type: TargetType | None = None
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    verify_ref: str | None = None
    success_condition: str | None = None
    fallback: StepPlan | None = None
    timeout: int = 3000          # ms
    retry: int = 2
    wait_before: int = 0         # ms
    wait_after: int = 300        # ms
    sensitive: bool = False      # ask for confirmation before acting
    sensitive_reason: str = ""   # why (what the step does, or the word that matched)
    alternatives: tuple[str, ...] = ()   # more target_refs, tried in order after target_ref
    source: str = "template"     # who wrote the step: "template" | "model" | "replan" | "learned"
    anchors: tuple[str, ...] = ()   # what the screen shows when the step is on the right screen (learned steps)
    when: When | None = None     # run only when this holds; else skipped, with the reason (core/plan/flow.py)
    steps: tuple[StepPlan, ...] = ()   # the block of a repeat, retry or run: {steps}
    parent: int = 0              # the step (a block or a run) that ran this one; 0: the plan's own step
    args: StepArgs = field(default=None, repr=False, compare=False, metadata={"transient": True})  # type: ignore[assignment]
    # The step as written, before its {slots} were filled: filled again at run time (-e values, extracted ones)
    template: dict[str, Any] | None = field(default=None, repr=False, compare=False, metadata={"transient": True})

    def __post_init__(self) -> None:
        self.action = ActionName(self.action)
        if self.args is None:
            self.args = parse_any(self.action, self.params, self.target_ref, self.description, body=len(self.steps))

    @property
    def label(self) -> str:
        """``tap desc:搜索``, ``input_text '张三'``, ``launch_app com.tencent.mm``: the step in a few words."""
        return f"{self.action.value} {self.args.describe(self.targets)}".strip()

    @property
    def targets(self) -> tuple[str, ...]:
        """``target_ref`` and its alternatives, in the order they are tried."""
        return (self.target_ref, *self.alternatives) if self.target_ref else ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        out["when"] = self.when.to_dict() if self.when is not None else None
        out["steps"] = [s.to_dict() for s in self.steps]
        return out

    def to_template(self) -> dict[str, Any]:
        """The step as a module author writes it in tasks.yaml (what a compiler of runs emits): a flow kind as
        its key, an action with ``action:``, only what differs from the defaults. Parsing it gives this step."""
        targets: Any = list(self.targets) if len(self.targets) > 1 else self.target_ref
        params = to_jsonable(self.params)
        out: dict[str, Any]
        if isinstance(self.args, FlowArgs):
            key = TARGET_KEYS.get(self.action.value, ("",))[0]
            if key == "target" and targets:
                params = {"target": targets, **params}
            if self.steps:
                params["steps"] = [s.to_template() for s in self.steps]
            out = {self.action.value: params, **({"wait_before": self.wait_before} if self.wait_before else {})}
        else:
            out = {"action": self.action.value, **({"target_ref": targets} if targets else {}),
                   **({"params": params} if params else {})}
            defaults = {"timeout": 3000, "retry": 2, "wait_before": 0, "wait_after": 300}
            out.update({k: getattr(self, k) for k, v in defaults.items() if getattr(self, k) != v})
            if self.verify_ref:
                out["verify_ref"] = self.verify_ref
            if self.fallback is not None:
                out["fallback"] = self.fallback.to_template()
        if self.description:
            out["description"] = self.description
        if self.when is not None:
            out["when"] = self.when.to_dict()
        return out


@dataclass
class TaskPlan:
    analysis: dict[str, Any] = field(default_factory=dict)
    steps: list[StepPlan] = field(default_factory=list)
    success_criteria: str = ""
    potential_issues: list[str] = field(default_factory=list)
    source: str = "template"     # "template" | "model" | "replan"
    module: str = ""
    # What the finished task looks like, checked on the final screen (remote.core.plan.checks)
    success_check: SuccessCheck = field(default_factory=SuccessCheck)
    failures: tuple[FailureScreen, ...] = ()   # screens that mean the task cannot succeed (module-declared)
    answer: str = ""             # what the task answers: "{last_message}" (a variable's typed value) or a text
    slots: dict[str, str] = field(default_factory=dict)   # the values the sentence gave
    env: dict[str, str | None] = field(default_factory=dict)   # what -e KEY=VALUE may give: default, or None: needed
    # The success_check as written, when it names a {variable} that only the run fills
    check_template: dict[str, Any] | None = field(default=None, repr=False, compare=False,
                                                  metadata={"transient": True})

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        out["success_check"] = self.success_check.to_dict()
        out["steps"] = [s.to_dict() for s in self.steps]
        return out
