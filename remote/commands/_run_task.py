"""`remote run "TASK"` on one phone, once it is open (`remote.commands.run` opens it and starts the tree server
first): route, plan, locate, act, verify, record; live progress and a one-screen summary."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from remote.commands._learned import learner as make_learner
from remote.commands._modules import registry as module_registry
from remote.config import LLMConfig
from remote.core.device import fast_tree
from remote.core.device.adb_controller import ADBController
from remote.core.device.frames import LinkReport
from remote.core.device.frames import describe as frames_line
from remote.core.record.report import learning_words
from remote.core.record.report_words import answer_text
from remote.core.records import (
    LocateStrategy,
    StepPlan,
    StepResult,
    StepStatus,
    TaskPlan,
    TaskResult,
    TaskStatus,
)
from remote.runner import Limits, RunOptions, build_runner
from remote.runner.models import Budget

MARKS = {StepStatus.SUCCESS: "ok", StepStatus.FAILED: "FAILED", StepStatus.SKIPPED: "skipped",
         StepStatus.NOT_CHECKED: "not checked"}
SOURCES = {"template": "task template (free)", "model": "the model", "replan": "replan",
           "learned": "a learned task (free)"}


class Progress:
    """Live progress on stderr (stdout stays clean for --json)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.out = stream if stream is not None else sys.stderr  # looked up now: tests swap sys.stderr
        self.total = 0
        self.open = 0                       # the step whose line waits for its result
        self.depth: dict[int, int] = {}     # a block's steps are indented under it

    def _print(self, text: str, end: str = "\n") -> None:
        print(text, end=end, file=self.out, flush=True)

    def on_plan(self, plan: TaskPlan) -> None:
        self.total = len(plan.steps)
        self._print(f"plan: {len(plan.steps)} steps from {SOURCES.get(plan.source, plan.source)} [{plan.module}]")
        if plan.success_check:
            self._print(f"  final check: {plan.success_check.describe()}")

    def _head(self, step: StepPlan) -> str:
        depth = self.depth.get(step.step, 0)
        number = f"{step.step}/{self.total}" if not depth else str(step.step)
        return f"  {'   ' * depth}[{number}] {step.label} ..."

    def on_step_start(self, step: StepPlan, total: int) -> None:
        if self.open:
            self._print("")
        self.depth[step.step] = self.depth.get(step.parent, -1) + 1 if step.parent else 0
        if not step.parent:
            self.total = total   # the runner's: steps run and still queued, after replans too
        self._print(self._head(step), end="")
        self.open = step.step

    def on_step_end(self, sr: StepResult) -> None:
        if self.open != sr.step.step:    # a block: its steps were printed in between
            self._print(self._head(sr.step), end="")
        self.open = 0
        loc = sr.locate_result
        tier = f" via {loc.method_used} ({loc.element.confidence:.2f})" if loc and loc.element and loc.success else ""
        extra = f": {sr.error_message}" if sr.error_message else ""
        timing = f" {sr.elapsed:.2f}s" if sr.status is not StepStatus.NOT_CHECKED else ""
        self._print(f" {MARKS.get(sr.status, sr.status.value)}{tier}{timing}{extra}")
        phases = {k: v for k, v in sr.timings.items() if v >= 50}
        notes = list(sr.notes)
        if phases and sr.elapsed >= 1.0:
            notes.append("time: " + ", ".join(f"{k} {v / 1000:.2f}s" for k, v in phases.items()))
        for note in notes:
            self._print(f"      {'   ' * self.depth.get(sr.step.step, 0)}{note}")

    def on_note(self, message: str) -> None:
        self._print(f"warning: {message}")

    def on_finish(self, result: TaskResult) -> None:
        return None


class TerminalPerson:
    """Asks on the terminal; without one (CI, pipes) the safe answer is no."""

    def confirm(self, question: str) -> bool:
        if not sys.stdin.isatty():
            return False
        print(question, file=sys.stderr)
        return input("[y/N] ").strip().lower() in ("y", "yes", "是")

    def choose(self, question: str, options: Sequence[str]) -> int | None:
        if not sys.stdin.isatty():
            return None
        print(question, file=sys.stderr)
        for i, label in enumerate(options, 1):
            print(f"  {i}. {label}", file=sys.stderr)
        answer = input("number (empty = none): ").strip()
        return int(answer) - 1 if answer.isdigit() and 0 < int(answer) <= len(options) else None

    def take_over(self, message: str) -> bool:
        if not sys.stdin.isatty():
            return False
        print(f"\nplease take over on the phone: {message}\npress Enter when done, or type 'q' to stop",
              file=sys.stderr)
        return input().strip().lower() != "q"


def summary(result: TaskResult, dry_run: bool = False) -> dict[str, Any]:
    steps = result.step_results
    final = result.final_check
    planned = max(result.steps_planned, len(steps))
    return {"status": result.status.value, "dry_run": dry_run,
            "task": result.task, "module": result.module,
            "steps": len(steps), "steps_planned": planned, "steps_not_done": planned - len(steps),
            "steps_ok": sum(sr.status is StepStatus.SUCCESS for sr in steps),
            "steps_failed": sum(sr.status is StepStatus.FAILED for sr in steps),
            "steps_not_checked": sum(sr.status is StepStatus.NOT_CHECKED for sr in steps),
            "failure": result.failure.value if result.failure else None, "plan_source": result.plan_source,
            "learned": result.learning.get("learned") or result.learning.get("replayed"),
            "final_check": final.to_dict() if final else None,
            "steps_skipped": sum(sr.status is StepStatus.SKIPPED for sr in steps), "answer": result.answer,
            "model_calls": result.model_usage.calls, "tokens": result.model_usage.total_tokens,
            "seconds": round(result.total_time, 2), "error": result.error_message, "record": result.record_dir,
            "record_error": result.record_error or None, "exit_code": int(result.exit_code)}


def print_summary(result: TaskResult, dry_run: bool) -> None:
    info = summary(result, dry_run)
    calls = f"{info['model_calls']} model calls ({info['tokens']} tokens)" if info["model_calls"] else "0 model calls"
    head = "DRY RUN (plan valid)" if result.status is TaskStatus.PLANNED else \
        result.status.value.upper() + (" (dry run)" if dry_run else "")
    print(f"\n{head}: {result.task}")
    if result.answer is not None:
        print(f"  answer: {answer_text(result.answer)}")
    if dry_run:
        print("  nothing was done on the phone: the plan was checked against the current screen only")
    counts = f"{info['steps_ok']}/{info['steps_planned']} steps ok"
    if info["steps_failed"]:
        counts += f", {info['steps_failed']} failed"
    if info["steps_not_checked"]:
        counts += f", {info['steps_not_checked']} not checked"
    if info["steps_skipped"]:
        counts += f", {info['steps_skipped']} skipped"
    if info["steps_not_done"]:
        counts += f", {info['steps_not_done']} not done"
    print(f"  module {info['module'] or '-'}, {counts}, {calls}, {info['seconds']:.1f} s")
    if result.final_check is not None:
        verdict = {True: "passed", False: "FAILED", None: "undecided"}[result.final_check.passed]
        print(f"  no final check: {result.final_check.summary}" if result.status is TaskStatus.UNCHECKED
              else f"  final check {verdict}: {result.final_check.summary}")
    if result.error_message:
        print(f"  why: {result.error_message}")
    learned = learning_words(result.learning)
    if learned:
        print(f"  {learned}")
    if result.record_dir and not result.record_error:
        print(f"  record: {Path(result.record_dir) / 'report.html'}")


def warn_record(result: TaskResult) -> None:
    """On stderr, whatever the output format: the outcome above stands, its record does not."""
    if result.record_error:
        print(f"warning: the run record could not be written ({result.record_error}); {result.record_dir} holds "
              "only what was written before. The outcome above is what happened on the phone.",
              file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Ran:
    """What a run on an open phone leaves for its summary, printed once the phone is closed."""

    result: TaskResult
    tree: dict[str, Any]     # where the run's UI trees came from, the server's cold start
    link: LinkReport         # and its frames
    when_read: bool = False  # taken only where a check read the pixels (--frames needed, with the server's trees)


def run_on(args: argparse.Namespace, llm: LLMConfig, adb: ADBController, sim: Any) -> Ran:
    """Build the runner for the open phone ``adb`` (``sim``: the simulated phone, or None) and run the task."""
    limits = Limits(max_steps=args.max_steps, max_seconds=args.max_seconds,
                    budget=Budget(max_model_calls=args.max_model_calls, max_tokens=args.max_tokens))
    options = RunOptions(strategy=LocateStrategy(args.strategy), dry_run=args.dry_run, yes=args.yes,
                         module=args.module, runs_dir=Path(args.runs_dir) if args.runs_dir else None,
                         env=tuple(args.env or ()))
    runner = build_runner(adb, llm=llm, limits=limits, options=options, person=TerminalPerson(),
                          registry=module_registry(),
                          listener=None if args.json else Progress(),
                          device_state=sim.snapshot if sim is not None else None,
                          learner=make_learner(args))
    result = runner.run(args.task)
    return Ran(result, adb.dump_stats().tree, adb.link_report(), adb.frames_when_read())


def report(args: argparse.Namespace, ran: Ran) -> int:
    """The run's summary (one JSON line with --json) and its exit code."""
    result, link = ran.result, ran.link
    if args.json:
        frames = {"taken": link.grabs, "from_tree_server": link.shots, "screencap_wire": link.wire,
                  "when_read": ran.when_read}
        print(json.dumps({**summary(result, args.dry_run), "tree": ran.tree, "frames": frames}, ensure_ascii=False),
              flush=True)
    else:
        print_summary(result, args.dry_run)
        where = " (where a check read the pixels; --frames every: each screen)" if ran.when_read else ""
        print(f"  {fast_tree.describe(ran.tree)}; {frames_line(link)}{where}")
    warn_record(result)
    return int(result.exit_code)
