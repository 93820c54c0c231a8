"""A call's deadline, seen from inside its worker thread: loops stop when the call is over.

`Caller.run` gives every tool body a `Deadline` (its time limit, and an event set
when the call ends early: it timed out, or the client cancelled it). A worker
thread cannot be killed, so the body's loops ask instead: ``check()`` before
each step, ``sleep()`` instead of ``time.sleep`` (it wakes at once when the call
is over), ``remaining()`` to cap a wait. Outside a call (a unit test calling a
tool function directly) there is no deadline and nothing stops.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Iterator

from remote.errors import ActionError


class CallOver(ActionError):
    """The call's deadline passed (or the client cancelled it): its work stops here."""


class Deadline:
    """``Deadline(30)``: 30 s from now; ``end()`` stops it early."""

    def __init__(self, seconds: float | None) -> None:
        self.expires = None if seconds is None else time.monotonic() + max(0.0, seconds)
        self.limit = seconds
        self._over = threading.Event()

    def end(self) -> None:
        self._over.set()

    @property
    def over(self) -> bool:
        return self._over.is_set() or (self.expires is not None and time.monotonic() >= self.expires)

    def remaining(self) -> float:
        """Seconds left (inf without a limit, 0 once over)."""
        if self._over.is_set():
            return 0.0
        return float("inf") if self.expires is None else max(0.0, self.expires - time.monotonic())

    def check(self) -> None:
        if self.over:
            limit = f" of {self.limit:g} s" if self.limit is not None else ""
            raise CallOver(f"the call's deadline{limit} passed: its work stopped here",
                           hint="give the call less to do, or a longer timeout where the tool has one")

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` (capped by what is left); raise `CallOver` when the call ends meanwhile."""
        self.check()
        self._over.wait(max(0.0, min(seconds, self.remaining())))
        self.check()


_NONE = Deadline(None)
_current: contextvars.ContextVar[Deadline] = contextvars.ContextVar("remote_mcp_deadline", default=_NONE)


def current() -> Deadline:
    """The running call's deadline (one without a limit outside a call)."""
    return _current.get()


@contextlib.contextmanager
def running(deadline: Deadline) -> Iterator[Deadline]:
    """Make ``deadline`` the current one in this thread for the duration of a call's body."""
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)
