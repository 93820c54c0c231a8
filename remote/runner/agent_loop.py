"""A task driven by a phone-agent model in its own protocol, with ``remote`` keeping what those projects lack.

Each turn: the screen is captured, the agent (``remote.ai.agent_model``) names one
action, ``agent_steps`` turns it into steps and the :class:`StepRunner` runs them as
it runs any step: taps snapped to real elements, typed text read back, the
sensitivity gate (the agent's ``Take_over`` and ``message="重要操作"`` included),
verification, the record. The loop is bounded by the step cap, the clock and the
model budget, and stops on no progress (the screen unchanged turn after turn) and
on loops (the same action on the same screen again and again). The agent's
``finish`` is a claim: the task is SUCCESS only when the final check passes (the
template's check when one fits the task, else the switch an "打开X" task turned).
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass

from remote.ai.agent_model import AgentModel, AgentTurn, Past
from remote.ai.answers import Verb
from remote.ai.calls import summary
from remote.core.locate.screen import Screen
from remote.core.record.recorder import RunRecorder
from remote.core.records import (
    FailureReason,
    ModelUsage,
    StepResult,
    StepStatus,
    TaskPlan,
    TaskResult,
    TaskStatus,
)
from remote.runner.agent_steps import Translated, steps_for, toggle_check
from remote.runner.final_check import FinalChecker
from remote.runner.protocols import Listener
from remote.runner.step_runner import StepRunner

logger = logging.getLogger(__name__)
NO_PROGRESS_LIMIT = 4     # turns in a row that changed nothing on the screen
LOOP_LIMIT = 3            # the same action on the same screen


@dataclass
class AgentRun:
    """What one agent-driven task needs from the task runner."""

    steps: StepRunner
    checker: FinalChecker
    listener: Listener
    max_steps: int
    recorder: RunRecorder | None = None   # steps are recorded as they go


class AgentLoop:
    def __init__(self, agent: AgentModel, run: AgentRun) -> None:
        self.agent = agent
        self.ctx = run

    def run(self, task: str, template: TaskPlan | None, result: TaskResult, usage: ModelUsage) -> None:
        steps, tools = self.ctx.steps, self.ctx.steps.tools
        app = template.success_check.app if template is not None else None
        if app and "." not in app and tools.apps.package_for(app) is None:
            template = None   # a catch-all template's guess ("打开{app}" with no such app): its check means nothing
        plan = self._plan(task, template, result)
        history: list[Past] = []
        switches: list[str] = []
        seen: Counter[tuple[str, str]] = Counter()
        unchanged = 0
        while True:
            tools.clock.check()
            if len(result.step_results) >= self.ctx.max_steps:
                return self._end(result, TaskStatus.FAILED, FailureReason.STEP_CAP,
                                 f"step cap reached ({self.ctx.max_steps} steps) before the agent finished")
            screen = steps.capture()
            turn = self.agent.next(task, screen.pil, history)
            if turn.verb is Verb.FINISH:
                plan.analysis["claim"] = turn.text or ("success" if turn.success is not False else "failure")
                break
            translated = steps_for(turn, screen, tools.sensitive_words)
            switches += [translated.switch] if translated.switch else []
            key = (_fingerprint(screen), f"{turn.verb.value}:{translated.note or translated.problem}")
            seen[key] += 1
            before = len(result.step_results)
            outcome, changed = self._carry_out(translated, screen, result, usage, turn)
            history.append(Past(turn.raw, outcome))
            unchanged = 0 if changed else unchanged + 1
            if self._aborted(result, before) or self._stuck(result, turn, unchanged, seen[key]):
                return
        if template is None:
            plan.success_check = toggle_check(task, switches)
        self._final(plan, result)

    def _aborted(self, result: TaskResult, before: int) -> bool:
        """Whether a step the turn ran (from ``before`` on) stops the run; if so the run is ended with its
        reason (ABORTED when a person was to be asked)."""
        stopped = next((sr for sr in result.step_results[before:] if sr.abort), None)
        if stopped is None:
            return False
        asked = stopped.failure in (FailureReason.NOT_CONFIRMED, FailureReason.NO_PERSON)
        self._end(result, TaskStatus.ABORTED if asked else TaskStatus.FAILED, stopped.failure or FailureReason.INTERNAL,
                  f"step {stopped.step.step} ({stopped.step.label}) failed: {stopped.error_message}")
        return True

    def _stuck(self, result: TaskResult, turn: AgentTurn, unchanged: int, repeats: int) -> bool:
        """Whether the agent makes no progress (``unchanged`` turns changed nothing, or the same act on the
        same screen ``repeats`` times); if so the run is ended as NO_CHANGE."""
        if unchanged < NO_PROGRESS_LIMIT and repeats < LOOP_LIMIT:
            return False
        why = (f"the agent repeated {turn.verb.value} on the same screen {repeats} times"
               if repeats >= LOOP_LIMIT else f"{unchanged} turns in a row changed nothing on the screen")
        self._end(result, TaskStatus.FAILED, FailureReason.NO_CHANGE, f"no progress: {why}")
        return True

    def _plan(self, task: str, template: TaskPlan | None, result: TaskResult) -> TaskPlan:
        """The run's plan as recorded: the agent, where the final check comes from, what it took over from."""
        criteria = task if self.agent.family.json_prompts else ""   # a model that can check a screen checks it
        plan = TaskPlan(analysis={"agent": self.agent.name, "claim": None,
                                  "final_check_from": "template" if template is not None else "task"},
                        success_criteria=template.success_criteria if template is not None else criteria,
                        source="agent", module=template.module if template is not None else "",
                        success_check=template.success_check if template is not None else toggle_check(task, []),
                        failures=template.failures if template is not None else ())
        if result.plan is not None:   # taking over where a plan failed
            plan.analysis["after"] = {"source": result.plan.source, "template": result.plan.analysis.get("template"),
                                      "steps_run": len(result.step_results)}
            plan.module = result.plan.module
        result.plan = plan
        self.ctx.listener.on_plan(plan)
        return plan

    def _carry_out(self, translated: Translated, screen: Screen, result: TaskResult, usage: ModelUsage,
                   turn: AgentTurn) -> tuple[str, bool]:
        """Run the turn's steps; (what to tell the agent, whether the screen changed)."""
        if not translated.steps:
            logger.info("agent turn not run: %s", translated.problem)
            return f"not done: {translated.problem}", False
        current: Screen | None = screen
        changed = False
        outcome = "done"
        for step in translated.steps:
            step.step = len(result.step_results) + 1
            self.ctx.listener.on_step_start(step, step.step)
            sr, current = self.ctx.steps.run(step, current, usage)
            sr.notes.append(f"agent: {translated.note}")
            if turn.thought:
                sr.notes.append(f"agent thought: {turn.thought[:200]}")
            sr.notes += [f"model {summary(call)}" for call in self.agent.log.calls]   # size sent, frame, convention
            self._record(sr, result)
            changed = changed or _changed(sr)
            if sr.status is StepStatus.FAILED:
                outcome = f"failed: {sr.error_message[:200]}"
                break
        return outcome, changed

    def _record(self, sr: StepResult, result: TaskResult) -> None:
        result.step_results.append(sr)
        if self.ctx.recorder is not None:
            self.ctx.recorder.record_step(sr, sr.screenshot_before, sr.screenshot_after)
        self.ctx.listener.on_step_end(sr)

    def _final(self, plan: TaskPlan, result: TaskResult) -> None:
        screen = self.ctx.steps.capture()
        claim = plan.analysis.get("claim") or ""
        failure = self.ctx.checker.failure_screen(plan.failures, screen)
        if failure is not None:
            return self._end(result, TaskStatus.FAILED, FailureReason.FAILURE_SCREEN, failure.says)
        final = self.ctx.checker.check(plan.success_check, screen, plan.success_criteria)
        result.final_check = final
        if final.passed is True:
            return self._end(result, TaskStatus.SUCCESS, None, "")
        if final.passed is None and not plan.success_check and not plan.success_criteria:
            final.summary = ("nothing could check the finished screen (no template covers the task and it is not an "
                             f"'打开/关闭 X' task); the agent's claim {claim!r} alone is not a success")
        return self._end(result, TaskStatus.FAILED, FailureReason.FINAL_CHECK,
                         f"the agent claims {claim!r}, but the final check failed: {final.summary}")

    @staticmethod
    def _end(result: TaskResult, status: TaskStatus, failure: FailureReason | None, message: str) -> None:
        result.status, result.failure, result.error_message = status, failure, message


def _changed(sr: StepResult) -> bool:
    if sr.status is not StepStatus.SUCCESS:
        return False
    verdict = sr.verify_result
    return verdict is None or verdict.screen_changed


def _fingerprint(screen: Screen) -> str:
    """What the screen shows, for loop detection: its texts when it has a tree, else a small image."""
    tree = screen.tree()
    data = "\n".join(tree.texts()).encode() if tree is not None else screen.pil.resize((16, 32)).tobytes()
    return hashlib.sha1(data).hexdigest()[:16]
