"""A plan and its steps, as they cross layers: what a template, a model or a replayed record asked for.

Field names follow the design card (``../shared/seeds/003_*``); fields are added, never renamed. A step's
``params`` are kept as written (JSON-friendly) and parsed once into ``args`` (``actions.parse_args``).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

from remote.core.plan.actions import ActionName, Args, parse_args
from remote.core.plan.checks import FailureScreen, SuccessCheck


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
    args: Args = field(default=None, repr=False, compare=False, metadata={"transient": True})  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.action = ActionName(self.action)
        if self.args is None:
            self.args = parse_args(self.action, self.params, self.target_ref, self.description)

    @property
    def label(self) -> str:
        """``tap desc:搜索``, ``input_text '张三'``, ``launch_app com.tencent.mm``: the step in a few words."""
        what = " | ".join(self.targets) or next((str(self.params[k]) for k in ("package", "app", "url", "key",
                                                                                "direction", "number")
                                                 if k in self.params), "")
        text = f" {str(self.params['text'])[:60]!r}" if "text" in self.params else ""
        return f"{self.action.value}{' ' + what if what else ''}{text}"

    @property
    def targets(self) -> tuple[str, ...]:
        """``target_ref`` and its alternatives, in the order they are tried."""
        return (self.target_ref, *self.alternatives) if self.target_ref else ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        out["success_check"] = self.success_check.to_dict()
        return out
