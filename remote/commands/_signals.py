"""SIGTERM, handled as Ctrl-C is: what `timeout`, systemd and `docker stop` send must not lose a record.

``run`` and ``batch`` run inside :func:`terminate_as_interrupt`: a SIGTERM raises
KeyboardInterrupt in the main thread, so the same clean-up runs as for Ctrl-C (the
run or the batch stops, records and batch.json are written, the simulated phone and
the input method are closed) and the exit status is 130, as for Ctrl-C. While a task
runs, the runner's own handler takes both signals (``runner/task_runner.py``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from remote.runner.clock import Terminated


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
