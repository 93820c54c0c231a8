"""What the task loop carries (``TaskRunner._execute``): the run it serves, the state from one step to the next,
and a queued step with the learned index it came from (its replay is counted, healed and written back by it)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from remote.apps import AppModule
from remote.core.locate.screen import Screen
from remote.core.plan.checks import SuccessCheck
from remote.core.record.recorder import RunRecorder
from remote.core.records import StepPlan, StepResult, TaskPlan, TaskResult
from remote.runner.final_check import FinalChecker
from remote.runner.flow import Flow
from remote.runner.models import Models
from remote.runner.step_runner import StepRunner


@dataclass(frozen=True)
class Queued:
    """A step waiting in the loop; ``learned``: its number in the learned task it comes from (its replay is
    counted, healed and written back by that number), None for any other step."""

    step: StepPlan
    learned: int | None = None


@dataclass
class LoopState:
    """What the step loop carries from one step to the next."""

    queue: deque[Queued]
    check: SuccessCheck
    criteria: str
    screen: Screen | None = None
    replans: int = 0
    executed: list[StepResult] = field(default_factory=list)
    changed_by: int = 0          # --dry-run: the first step after which the screen is unknown


@dataclass(frozen=True)
class RunContext:
    """The run the loop serves: what it does, with what, and where it is recorded."""

    task: str
    module: AppModule
    plan: TaskPlan
    steps: StepRunner
    models: Models
    result: TaskResult
    recorder: RunRecorder | None
    checker: FinalChecker
    flow: Flow
