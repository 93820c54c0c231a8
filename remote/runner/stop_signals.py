"""Ctrl-C and SIGTERM stop a run the same way: the step in progress stops, the record is written, the status
is aborted (exit 130). SIGTERM is what `timeout`, systemd and `docker stop` send.

The first signal sets the run's clock's stop flag (every wait and check notices within a second); one not
noticed in time, or a second signal, interrupts whatever runs (KeyboardInterrupt). While the record is being
written (``hold()``), further signals wait for it: a second Ctrl-C must not cut the record short.
Only the main thread can take signals; elsewhere (a batch's worker threads) this does nothing.
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType
from typing import Any

from remote.runner.clock import CTRL_C, SIGTERM, Clock

logger = logging.getLogger(__name__)
FORCE_STOP_S = 0.8        # a stop not noticed by then interrupts whatever runs
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """``signals = StopSignals(clock); signals.install(); ...; signals.hold(); write; signals.restore()``."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.received = 0               # the signal that asked the run to stop
        self._holding = False
        self._timer: threading.Timer | None = None
        self._previous: dict[int, Any] = {}

    @property
    def reason(self) -> str:
        return SIGTERM if self.received == signal.SIGTERM else CTRL_C

    def install(self) -> None:
        self.received, self._holding = 0, False
        if threading.current_thread() is not threading.main_thread():
            return
        main = threading.main_thread().ident

        def force() -> None:
            if main is not None:
                signal.pthread_kill(main, signal.SIGINT)   # the run did not notice in time: stop it now

        def handler(signum: int, frame: FrameType | None) -> None:
            if self._holding:
                logger.warning("writing the run record first")
                return
            if self.clock.stop.is_set():
                raise KeyboardInterrupt
            self.received = self.received or signum
            self.clock.halt(self.reason)
            logger.warning("%s: stopping the step in progress", self._name())
            self._timer = threading.Timer(FORCE_STOP_S, force)
            self._timer.daemon = True
            self._timer.start()

        self._previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}

    def _name(self) -> str:
        return "SIGTERM" if self.received == signal.SIGTERM else "Ctrl-C"

    def hold(self) -> None:
        if self.received and not self._holding:   # what the seconds after a stop are spent on, said as they start
            logger.warning("%s: stopped; writing the run's record (its screens and report.html), then exiting with "
                           "status 130", self._name())
        self._holding = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def restore(self) -> None:
        self.hold()
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
