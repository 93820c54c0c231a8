"""The run's clock: its time budget and Ctrl-C, honoured inside steps, not only between them.

Every wait of a run goes through :meth:`Clock.sleep`, which wakes at once on
Ctrl-C and never sleeps past the budget; loops inside a step (key repeats,
BACK presses, retries) call :meth:`Clock.check`. So ``wait ms: 60000`` in a
run with ``--max-seconds 10`` ends at 10 s with ``time cap reached``, and a
Ctrl-C during a wait stops the run within a fraction of a second.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from remote.errors import FailureReason, TaskError


class Interrupted(TaskError):
    """Ctrl-C (or SIGTERM): the task stops (and still writes its record)."""

    reason = FailureReason.INTERRUPTED


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be (`remote.commands._signals`)."""


CTRL_C, SIGTERM = "interrupted (Ctrl-C)", "stopped by SIGTERM"   # what stopped a run, as its record says


def stopped_by(exc: BaseException) -> str:
    """What stopped a run, from the KeyboardInterrupt that stopped it (`Terminated` for SIGTERM)."""
    return SIGTERM if isinstance(exc, Terminated) else CTRL_C


class TimeCapReached(TaskError):
    """The run spent its ``--max-seconds``."""

    reason = FailureReason.TIME_CAP


class Clock:
    """``Clock(max_seconds=300)``; ``sleep`` is a seam for tests (records waits instead of waiting)."""

    def __init__(self, max_seconds: float = 300.0, *, sleep: Callable[[float], None] | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.max_seconds = max_seconds
        self.stop = threading.Event()
        self.stop_reason = CTRL_C    # what `check` says once ``stop`` is set (`halt`)
        self._sleep = sleep
        self._monotonic = monotonic
        self.started = monotonic()

    def restart(self) -> None:
        self.started = self._monotonic()
        self.stop.clear()

    def elapsed(self) -> float:
        return self._monotonic() - self.started

    def remaining(self) -> float:
        return self.max_seconds - self.elapsed()

    def halt(self, why: str = CTRL_C) -> None:
        """Stop the run at its next check or wait, saying ``why`` (`CTRL_C`, `SIGTERM`, a batch's stop)."""
        self.stop_reason = why
        self.stop.set()

    def check(self) -> None:
        """Raise when Ctrl-C was pressed or the time budget is spent."""
        if self.stop.is_set():
            raise Interrupted(self.stop_reason)
        if self.remaining() <= 0:
            raise TimeCapReached(f"time cap reached ({self.max_seconds:g} s)", hint="raise --max-seconds")

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, but no longer than the budget and not a moment after Ctrl-C."""
        self.check()
        seconds = max(0.0, seconds)
        cut = seconds > self.remaining()
        seconds = min(seconds, max(0.0, self.remaining()))
        if self._sleep is not None:
            self._sleep(seconds)
        elif seconds:
            self.stop.wait(seconds)
        if cut:
            raise TimeCapReached(f"time cap reached ({self.max_seconds:g} s)", hint="raise --max-seconds")
        self.check()
