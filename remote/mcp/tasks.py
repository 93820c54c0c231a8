"""``run_task``: the whole runner (templates first, a model when one is configured) behind one tool.

The runner acts through the session's `GatedDevice`, so the allow list holds for
every step it takes. Its questions go to the person: a sensitive step's
confirmation becomes an elicitation when the client can be asked, else the
answer is no (never a silent yes). Steps are reported as MCP progress
notifications; the result names the run record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from remote.config import LLMConfig
from remote.errors import TaskError
from remote.mcp.asking import Asker, TeachNext
from remote.mcp.session import Session
from remote.records import StepResult, StepStatus, TaskPlan, TaskResult, TaskStatus
from remote.runner.task_runner import RunOptions, TaskRunner

logger = logging.getLogger(__name__)
Progress = Callable[[float, float | None, str], None]


def make_task_runner(device: Any, llm: LLMConfig | None, *, confirm: Callable[..., Any],
                     take_over: Callable[[str], bool], listener: Any, runs_dir: Any,
                     device_state: Callable[[], dict] | None, max_seconds: float) -> TaskRunner:
    """The one place a TaskRunner is built here (its constructor is being redesigned: fix it here)."""
    options = RunOptions(runs_dir=runs_dir, record=runs_dir is not None)
    return TaskRunner(device, llm, max_seconds=max_seconds, confirm=confirm, options=options,
                      take_over=take_over, listener=listener, device_state=device_state)


class ProgressListener:
    """The runner's listener, turned into MCP progress: one unit per step."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.total = 0
        self.done = 0

    def on_plan(self, plan: TaskPlan) -> None:
        self.total = len(plan.steps)
        self.progress(0, self.total, f"plan: {self.total} steps from {plan.source} [{plan.module}]")

    def on_step_start(self, step: Any, total: int) -> None:
        self.total = max(self.total, total)

    def on_step_end(self, sr: StepResult) -> None:
        self.done += 1
        self.progress(self.done, max(self.total, self.done), step_line(sr))

    def on_finish(self, result: TaskResult) -> None:
        pass


def step_line(sr: StepResult) -> str:
    step = sr.step
    what = step.target_ref or ""
    loc = sr.locate_result
    tier = f" via {loc.method_used} ({loc.element.confidence:.2f})" if loc and loc.element else ""
    mark = "ok" if sr.status is StepStatus.SUCCESS else sr.status.value
    why = f": {sr.error_message}" if sr.error_message else ""
    return f"{step.step}. {step.action.value} {what}".rstrip() + f" {mark}{tier}{why}"


def run_task(session: Session, asker: Asker, task: str, progress: Progress, max_seconds: float = 300.0) -> str:
    """Run ``task`` to the end; the summary, or a TaskError carrying it when the task did not succeed."""
    module, _score = session.registry.route(task)
    if module.package and not module.default:
        session.gate.check(module.package, f"run a task in {module.package}", in_front=False)

    unasked: list[str] = []

    def confirm(question: str, choices: list[str] | None = None) -> bool | int | None:
        if choices:
            return None     # picking among candidates is left to the model tier, not asked here
        answer = asker.confirm(question)
        if answer is None:
            unasked.append(question)
        return answer

    def take_over(message: str) -> bool:
        answer = asker.ask(f"The task needs you on the phone: {message}\nAccept when you are done.", TeachNext)
        return bool(answer)

    runner = make_task_runner(session.device, session.llm, confirm=confirm, take_over=take_over,
                              listener=ProgressListener(progress), runs_dir=session.options.runs_dir,
                              device_state=session.phone.snapshot if session.phone is not None else None,
                              max_seconds=max_seconds)
    try:
        result = runner.run(task)
    finally:
        session.acted()
        session.adb.close()   # the person's input method back
    text = summary(result)
    if unasked:
        text += (f"\nnote: a sensitive step needed the person's confirmation, but {asker.unavailable}; "
                 "it was refused")
    if result.status is not TaskStatus.SUCCESS:
        raise TaskError(text)
    return text


def summary(result: TaskResult) -> str:
    ok = sum(sr.status is StepStatus.SUCCESS for sr in result.step_results)
    calls = result.model_usage.calls
    lines = [f"{result.status.value.upper()}: {result.task}",
             f"module {result.module or '-'}, {ok}/{len(result.step_results)} steps ok, {calls} model calls, "
             f"{result.total_time:.1f} s"]
    if result.error_message:
        lines.append(f"why: {result.error_message}")
    lines += [f"  {step_line(sr)}" for sr in result.step_results]
    if result.record_dir:
        lines.append(f"record: {result.record_dir}/report.html")
    return "\n".join(lines)
