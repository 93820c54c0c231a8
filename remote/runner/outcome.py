"""How a step ended, as a value: every way through ``StepRunner`` returns one, and ``StepRunner.run`` writes
it onto the step's record once (:meth:`Ended.record`).

The facts gathered on the way (what was located, where it tapped, the screens before and after, the
timings, the verifier's verdict) are still put on the ``StepResult`` where they are found; whether the step
succeeded, why it failed and whether the task must stop is decided by the value a path returns::

    return Ended.failed(FailureReason.WRONG_PAGE, "text:发送 is there, but not ..."), before
    return Ended.ok("already on: nothing to tap"), before
"""

from __future__ import annotations

from dataclasses import dataclass

from remote.core.locate.screen import Screen
from remote.core.records import FailureReason, StepResult, StepStatus


@dataclass(frozen=True)
class Ended:
    status: StepStatus
    failure: FailureReason | None = None
    message: str = ""
    abort: bool = False          # the task must stop here (no replan)
    note: str = ""               # one line for the record ("home after 2 BACK presses")

    @classmethod
    def ok(cls, note: str = "") -> Ended:
        return cls(StepStatus.SUCCESS, note=note)

    @classmethod
    def failed(cls, failure: FailureReason, message: str, *, abort: bool = False, note: str = "") -> Ended:
        return cls(StepStatus.FAILED, failure, message, abort, note)

    @property
    def succeeded(self) -> bool:
        return self.status is StepStatus.SUCCESS

    def record(self, sr: StepResult) -> None:
        """Write this ending onto ``sr`` (its notes keep what the path noted before)."""
        sr.status = self.status
        if self.failure is not None:
            sr.failure, sr.error_message, sr.abort = self.failure, self.message, self.abort
        if self.note:
            sr.notes.append(self.note)


# What every path of the step runner returns: how the step ended and the screen after it, when known.
StepEnd = tuple[Ended, Screen | None]
