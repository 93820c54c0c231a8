"""``run_task``: the whole runner (templates first, a model when one is configured) behind one tool.

The runner acts through the session's `GatedDevice`, so the allow list holds for
every step it takes: the app in front is checked before and after each act, a
key that launches an app obeys the allow list and a call key asks the person. Its questions go to the person: a sensitive step's
confirmation becomes an elicitation when the client can be asked, else the
answer is no (never a silent yes). Steps are reported as MCP progress
notifications; the result names the run record.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from remote.config import LLMConfig
from remote.core.record.report import learning_words
from remote.core.records import StepResult, StepStatus, TaskPlan, TaskResult, TaskStatus
from remote.errors import TaskError
from remote.mcp.asking import Asker, TeachNext
from remote.mcp.session import Session
from remote.runner import Limits, RunOptions, TaskRunner, build_runner
from remote.runner.learner import Learner
from remote.runner.protocols import Listener, Person

logger = logging.getLogger(__name__)
Progress = Callable[[float, float | None, str], None]


def make_task_runner(device: Any, llm: LLMConfig | None, *, person: Person, listener: Listener, runs_dir: Any,
                     device_state: Callable[[], dict[str, Any]] | None, max_seconds: float,
                     learner: Learner | None = None) -> TaskRunner:
    """The one place a TaskRunner is built here."""
    options = RunOptions(runs_dir=Path(runs_dir) if runs_dir else None)
    return build_runner(device, llm=llm, limits=Limits(max_seconds=max_seconds), options=options, person=person,
                        listener=listener, device_state=device_state, learner=learner)


class AskingPerson:
    """The person behind the MCP client: asked by elicitation when the client can be asked, else "no"."""

    def __init__(self, asker: Asker) -> None:
        self.asker = asker
        self.unasked: list[str] = []

    def confirm(self, question: str) -> bool:
        answer = self.asker.confirm(question)
        if answer is None:
            self.unasked.append(question)
        return bool(answer)

    def choose(self, question: str, options: Sequence[str]) -> int | None:
        return None     # picking among candidates is left to the model tier, not asked here

    def take_over(self, message: str) -> bool:
        answer = self.asker.ask(f"The task needs you on the phone: {message}\nAccept when you are done.", TeachNext)
        return bool(answer)


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

    def on_note(self, message: str) -> None:
        self.progress(self.done, self.total or None, f"note: {message}")

    def on_finish(self, result: TaskResult) -> None:
        return None


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

    person = AskingPerson(asker)
    # A call key asks the person too; None (nobody could be asked) is a no, said as such.
    device = session.device.asking(lambda question: person.confirm(question) if asker.can_ask else None)
    runner = make_task_runner(device, session.llm, person=person,
                              listener=ProgressListener(progress), runs_dir=session.options.runs_dir,
                              device_state=session.phone.snapshot if session.phone is not None else None,
                              max_seconds=max_seconds,
                              learner=Learner(session.options.learned, save=session.options.learn))
    try:
        result = runner.run(task)
    finally:
        session.acted()
        session.journal.clear()   # the runner learns its own runs; save_task saves the agent's own calls
        session.adb.close()   # the person's input method back
    text = summary(result)
    if person.unasked:
        text += (f"\nnote: a sensitive step needed the person's confirmation, but {asker.unavailable}; "
                 "it was refused")
    if result.status is not TaskStatus.SUCCESS:
        raise TaskError(text)
    return text


def summary(result: TaskResult) -> str:
    ok = sum(sr.status is StepStatus.SUCCESS for sr in result.step_results)
    calls = result.model_usage.calls
    source = result.plan.source if result.plan is not None else "-"
    lines = [f"{result.status.value.upper()}: {result.task}",
             f"module {result.module or '-'}, plan from {source}, {ok}/{len(result.step_results)} steps ok, "
             f"{calls} model calls, {result.total_time:.1f} s"]
    if result.answer is not None:   # a question task's typed answer, as JSON: "明天见", true, 13
        lines.insert(1, f"answer: {json.dumps(result.answer, ensure_ascii=False)}")
    learning = learning_words(result.learning or {})
    if learning:
        lines.append(learning)
    if result.final_check is not None:
        verdict = {True: "passed", False: "FAILED", None: "undecided"}[result.final_check.passed]
        lines.append(f"final check {verdict}: {result.final_check.summary}")
    if result.error_message:
        lines.append(f"why: {result.error_message}")
    lines += [f"  {step_line(sr)}" for sr in result.step_results]
    if result.record_dir:
        lines.append(f"record: {result.record_dir}/report.html")
    return "\n".join(lines)
