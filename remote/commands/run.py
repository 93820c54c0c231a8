"""`remote run "TASK"`: route, plan, locate, act, verify, record; live progress and a one-screen summary."""

from __future__ import annotations

import json
import sys
from typing import Any

from remote import errors
from remote.commands._device import open_device
from remote.config import LLMConfig
from remote.records import StepResult, StepStatus, TaskPlan, TaskResult, TaskStatus
from remote.runner.task_runner import RunOptions, TaskRunner

MARKS = {StepStatus.SUCCESS: "ok", StepStatus.FAILED: "FAILED", StepStatus.SKIPPED: "skipped"}


class Progress:
    """Live progress on stderr (stdout stays clean for --json)."""

    def __init__(self, stream: Any = None) -> None:
        self.out = stream if stream is not None else sys.stderr  # looked up now: tests swap sys.stderr
        self.total = 0

    def on_plan(self, plan: TaskPlan) -> None:
        self.total = len(plan.steps)
        src = {"template": "task template (free)", "model": "the model", "replan": "replan"}.get(plan.source, plan.source)
        print(f"plan: {len(plan.steps)} steps from {src} [{plan.module}]", file=self.out, flush=True)

    def on_step_start(self, step: Any, total: int) -> None:
        self.total = max(self.total, total)
        what = step.target_ref or next((str(step.params[k]) for k in ("package", "url", "key", "direction", "number")
                                        if k in step.params), "")
        target = f" {what}" if what else ""
        text = f" {step.params['text']!r}" if "text" in step.params else ""
        print(f"  [{step.step}/{self.total}] {step.action.value}{target}{text} ...", end="", file=self.out, flush=True)

    def on_step_end(self, sr: StepResult) -> None:
        loc = sr.locate_result
        tier = f" via {loc.method_used} ({loc.element.confidence:.2f})" if loc and loc.element else ""
        extra = f": {sr.error_message}" if sr.error_message else ""
        print(f" {MARKS.get(sr.status, sr.status.value)}{tier} {sr.elapsed:.2f}s{extra}", file=self.out, flush=True)
        for note in sr.notes:
            if note != "abort":
                print(f"      {note}", file=self.out, flush=True)

    def on_finish(self, result: TaskResult) -> None:
        pass


def ask_person(question: str, choices: list[str] | None = None) -> bool | int | None:
    """Ask on the terminal; without one (CI, pipes) the safe answer is no."""
    if not sys.stdin.isatty():
        return None if choices else False
    print(question, file=sys.stderr)
    if choices:
        for i, label in enumerate(choices, 1):
            print(f"  {i}. {label}", file=sys.stderr)
        answer = input("number (empty = none): ").strip()
        return int(answer) - 1 if answer.isdigit() and 0 < int(answer) <= len(choices) else None
    return input("[y/N] ").strip().lower() in ("y", "yes", "是")


def take_over(message: str) -> bool:
    if not sys.stdin.isatty():
        return False
    print(f"\nplease take over on the phone: {message}\npress Enter when done, or type 'q' to stop", file=sys.stderr)
    return input().strip().lower() != "q"


def summary(result: TaskResult) -> dict[str, Any]:
    return {"status": result.status.value, "task": result.task, "module": result.module,
            "steps": len(result.step_results),
            "steps_ok": sum(sr.status is StepStatus.SUCCESS for sr in result.step_results),
            "model_calls": result.model_usage.calls, "tokens": result.model_usage.total_tokens,
            "seconds": round(result.total_time, 2), "error": result.error_message, "record": result.record_dir}


def run(args: Any) -> int:
    llm = LLMConfig.from_env()
    options = RunOptions(max_model_calls=args.max_model_calls, max_tokens=args.max_tokens, dry_run=args.dry_run,
                         yes=args.yes, module=args.module, runs_dir=args.runs_dir)
    with open_device(args) as (adb, sim):
        runner = TaskRunner(adb, llm, strategy=args.strategy, max_steps=args.max_steps, max_seconds=args.max_seconds,
                            confirm=ask_person, options=options, take_over=take_over,
                            listener=None if args.json else Progress(),
                            device_state=sim.snapshot if sim is not None else None)
        result = runner.run(args.task)
    info = summary(result)
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
    else:
        calls = f"{info['model_calls']} model calls ({info['tokens']} tokens)" if info["model_calls"] else "0 model calls"
        print(f"\n{result.status.value.upper()}: {args.task}")
        print(f"  module {info['module'] or '-'}, {info['steps_ok']}/{info['steps']} steps ok, {calls}, "
              f"{info['seconds']:.1f} s")
        if result.error_message:
            print(f"  why: {result.error_message}")
        if result.record_dir:
            print(f"  record: {result.record_dir}/report.html")
    if result.status is TaskStatus.SUCCESS:
        return 0
    return 2 if runner_env_failure(result) else 1


def runner_env_failure(result: TaskResult) -> bool:
    """The environment failed (no model configured, bad config, the phone gone): exit status 2."""
    kind = getattr(errors, result.error_type, None) if result.error_type else None
    return (result.status is TaskStatus.FAILED and isinstance(kind, type)
            and issubclass(kind, errors.ConfigError | errors.DeviceError))
