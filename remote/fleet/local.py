"""Many phones on this host: one worker thread per phone, never two tasks on one phone at once.

Each phone's worker takes the first waiting job (in file order) that is pinned to
it or is for any phone. A phone that disconnects is taken out of the pool: it takes no more
jobs for any phone (those pinned to it still run, and fail with their record), and
the job for any phone it was running is tried once more on another phone.

Ctrl-C (or :meth:`LocalFleet.stop`) hands out no more jobs and stops the running
ones through each runner's clock; their records are written, the rest are
reported as not run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from remote.errors import ExitCode
from remote.fleet.execute import registry, run_job
from remote.fleet.jobs import Job, JobResult, Phone, RunSettings, not_run, retry_of, with_earlier
from remote.runner.clock import CTRL_C, Clock, stopped_by
from remote.runner.protocols import Listener

logger = logging.getLogger(__name__)

JOIN_POLL_S = 0.2   # how often the coordinator wakes to notice Ctrl-C


class BatchClock(Clock):
    """A run's clock that also stops when the whole batch is stopped (even if the run starts after)."""

    def __init__(self, max_seconds: float, batch_stop: threading.Event, why: Callable[[], str]) -> None:
        super().__init__(max_seconds)
        self.batch_stop, self.why = batch_stop, why

    def restart(self) -> None:
        super().restart()
        if self.batch_stop.is_set():
            self.halt(self.why())


@dataclass
class _Pool:
    """The shared state of one batch, guarded by ``cond``."""

    waiting: list[Job]
    cond: threading.Condition = field(default_factory=threading.Condition)
    running: int = 0
    finished: int = 0            # workers that have returned (counted by them, read by the coordinator)
    gone: set[str] = field(default_factory=set)
    results: list[JobResult] = field(default_factory=list)
    earlier: dict[int, JobResult] = field(default_factory=dict)


Events = Callable[[JobResult], None]


class LocalFleet:
    """``LocalFleet([Phone("A"), Phone("B")], settings).run(jobs) -> [JobResult]`` (file order)."""

    def __init__(self, phones: list[Phone], settings: RunSettings, *,
                 listener_for: Callable[[Phone, Job], Listener | None] | None = None,
                 on_result: Events | None = None) -> None:
        self.phones = phones
        self.settings = settings
        self.listener_for = listener_for or (lambda phone, job: None)
        self.on_result = on_result or (lambda result: None)
        self._stop = threading.Event()
        self._why = CTRL_C
        self._clocks: dict[str, BatchClock] = {}

    def stop(self, why: str = CTRL_C) -> None:
        """Hand out no more jobs; running tasks stop at their next check (saying ``why``) and write their
        records."""
        self._why = why
        self._stop.set()
        for clock in list(self._clocks.values()):
            clock.halt(why)
        logger.warning("stopping: no more tasks are handed out; running ones stop and write their records")

    def run(self, jobs: list[Job]) -> list[JobResult]:
        serials = {p.serial for p in self.phones}
        pool = _Pool(waiting=[j for j in jobs if not j.pinned or j.device in serials])
        pool.results += [not_run(j, f"phone {j.device} is not among this batch's phones ({', '.join(sorted(serials))})")
                         for j in jobs if j.pinned and j.device not in serials]
        threads = [threading.Thread(target=self._worker, args=(phone, pool), name=f"fleet-{phone.serial}",
                                    daemon=True) for phone in self.phones]
        for thread in threads:
            thread.start()
        try:
            self._wait(pool, len(threads))
        except KeyboardInterrupt as exc:
            self.stop(stopped_by(exc))
            with pool.cond:
                pool.cond.notify_all()
            self._wait(pool, len(threads))
        with pool.cond:
            why = f"stopped before it started ({self._why})" if self._stop.is_set() else "no phone left to run it"
            code = ExitCode.ABORTED if self._stop.is_set() else ExitCode.ENVIRONMENT
            for job in pool.waiting:
                pool.results.append(with_earlier(not_run(job, why, exit_code=code), pool.earlier.get(job.index)))
            pool.waiting.clear()
        return sorted(pool.results, key=lambda r: r.job.index)

    @staticmethod
    def _wait(pool: _Pool, workers: int) -> None:
        """Until every worker has returned. Not `Thread.join`: a Ctrl-C that interrupts a join can leave
        the thread looking finished while it still runs (CPython 3.11), and its result would be lost."""
        while pool.finished < workers:
            time.sleep(JOIN_POLL_S)

    # ------------------------------------------------------------------ one phone's worker
    def _worker(self, phone: Phone, pool: _Pool) -> None:
        try:
            self._serve(phone, pool)
        finally:
            with pool.cond:
                pool.finished += 1

    def _serve(self, phone: Phone, pool: _Pool) -> None:
        clock = BatchClock(self.settings.limits.max_seconds, self._stop, lambda: self._why)
        self._clocks[phone.serial] = clock
        modules = registry()
        while (job := self._take(phone, pool)) is not None:
            try:
                result = run_job(job, phone, self.settings, listener=self.listener_for(phone, job), clock=clock,
                                 modules=modules)
            except Exception as exc:  # a bug of ours: the row says so, the other phones go on
                logger.exception("task %r on %s", job.task, phone.serial)
                result = not_run(job, f"internal error ({type(exc).__name__}: {exc})", exit_code=ExitCode.FAILED)
                result.phone = phone.serial
            self._done(phone, pool, result)

    def _take(self, phone: Phone, pool: _Pool) -> Job | None:
        with pool.cond:
            while True:
                if self._stop.is_set():
                    return None
                live = phone.serial not in pool.gone
                for i, job in enumerate(pool.waiting):
                    if job.device == phone.serial or (live and not job.pinned):
                        pool.running += 1
                        return pool.waiting.pop(i)
                # A running job may still come back for a retry: live workers wait for it.
                if not live or pool.running == 0:
                    pool.cond.notify_all()
                    return None
                pool.cond.wait()

    def _done(self, phone: Phone, pool: _Pool, result: JobResult) -> None:
        result = with_earlier(result, pool.earlier.pop(result.job.index, None))
        with pool.cond:
            pool.running -= 1
            if result.phone_gone and phone.serial not in pool.gone:
                pool.gone.add(phone.serial)
                logger.warning("phone %s disconnected: taken out of the pool", phone.serial)
            if result.retryable and not self._stop.is_set():
                pool.earlier[result.job.index] = result
                pool.waiting.insert(0, retry_of(result))
                logger.warning("task %r: retrying on another phone", result.job.task)
            else:
                pool.results.append(result)
            pool.cond.notify_all()
        self.on_result(result)   # a retried attempt too: the display says it will be tried again
