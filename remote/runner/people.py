"""Asking the person: a sensitive step's yes, and a take-over. Each answer is an :class:`Ended` or None."""

from __future__ import annotations

from remote.core.plan.actions import TakeOver
from remote.core.records import FailureReason, StepPlan, StepResult
from remote.runner.outcome import Ended
from remote.runner.tools import StepTools


class Consent:
    def __init__(self, tools: StepTools) -> None:
        self.tools = tools

    def ask(self, step: StepPlan, sr: StepResult) -> Ended | None:
        """None when the step may go ahead (``--yes``, a dry run, or the person said yes); else how it ends."""
        if self.tools.yes or self.tools.dry_run:
            return None
        what = f"{step.action.value} {step.target_ref or ''}".strip()
        why = step.sensitive_reason or "declared sensitive"
        if self.tools.person.confirm(f"Step {step.step} is sensitive ({what}: {why}). Go ahead?"):
            sr.notes.append("confirmed by the person")
            return None
        return Ended.failed(FailureReason.NOT_CONFIRMED, f"sensitive step not confirmed ({why}); use --yes to allow it",
                            abort=True)

    def take_over(self, args: TakeOver) -> Ended:
        if self.tools.dry_run:
            return Ended.ok()
        if self.tools.person.take_over(args.message):
            return Ended.ok("the person took over and handed back")
        return Ended.failed(FailureReason.NO_PERSON, f"needs a person ({args.message}) and nobody took over",
                            abort=True)
