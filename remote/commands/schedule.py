"""`remote schedule FILE`: tasks on cron expressions, submitted like a batch (this host's phones, or a Ray
cluster with --address), until Ctrl-C or SIGTERM. Runs missed while it was stopped, or while a batch was still
running, are reported and not replayed. What it watched is kept in ``<runs-dir>/schedule-state.json``.

A stop asked while a firing runs ends that firing as a batch's Ctrl-C does (running tasks stop and write their
records, the table and batch.json are written), then the schedule itself: exit 130, as for an aborted run.
Between firings it just stops (exit 0): that is how a schedule is meant to end."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from remote.commands.batch import FleetView, local_phones, report, run_jobs
from remote.errors import DeviceError, ExitCode
from remote.fleet.files import BatchEntry, ScheduleEntry, expand, load_schedule
from remote.fleet.schedule import Missed, Scheduler


def _missed(missed: Missed) -> None:
    first, last = missed.times[0], missed.times[-1]
    span = f"{first:%Y-%m-%d %H:%M}" + (f" … {last:%Y-%m-%d %H:%M}" if missed.count > 1 else "")
    if missed.more or missed.count > len(missed.times):   # only the first ones are listed
        span = f"the first at {first:%Y-%m-%d %H:%M}"
    count = f"more than {missed.count}" if missed.more else str(missed.count)
    print(f"missed {count} run(s) {missed.why} of {missed.entry.task!r} ({missed.entry.cron}, {missed.entry.device}): "
          f"{span}; not replayed", file=sys.stderr, flush=True)


def _serials(args: argparse.Namespace) -> list[str]:
    if args.address:
        from remote.fleet.ray_cluster import advertised_serials

        return advertised_serials()
    with local_phones(args) as phones:
        return [p.serial for p in phones]


class _Stop:
    """Ctrl-C or SIGTERM, remembered: the batch in progress catches the interrupt to stop in order, the
    schedule must still end after it."""

    def __init__(self) -> None:
        self.asked = 0

    def _handler(self, signum: int, frame: object) -> None:
        self.asked = signum
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self._handler) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _fire(args: argparse.Namespace, due: list[tuple[ScheduleEntry, datetime]]) -> None:
    started = time.time()
    entries = [BatchEntry(e.task, e.device, 1, e.line, e.env) for e, _ in due]
    print(f"\n{datetime.now():%Y-%m-%d %H:%M:%S} firing: " + "; ".join(f"{e.cron} {e.task!r}" for e, _ in due),
          file=sys.stderr, flush=True)
    view = FleetView(steps=False)
    if args.address:
        jobs = expand(entries, _serials(args))
        results = run_jobs(jobs, args, None, view)
        report(results, args, source=str(args.file), placement=f"ray {args.address}", started=started)
        return
    try:
        with local_phones(args) as phones:   # the phones connected now: one may have been plugged in since
            jobs = expand(entries, [p.serial for p in phones])
            results = run_jobs(jobs, args, phones, view)
    except DeviceError as exc:  # another process drives a phone, no adb server or no phone now: this firing is
        print(f"not fired: {exc}", file=sys.stderr, flush=True)   # skipped (with what to do), the next one tries
        return
    report(results, args, source=str(args.file), placement="local", started=started)


def run(args: argparse.Namespace) -> int:
    entries = load_schedule(Path(args.file))
    if args.address:
        from remote.fleet import ray_cluster

        ray_cluster.connect(args.address, allow_no_auth=args.allow_unauthenticated_ray)
    stop = _Stop()
    aborted = False

    def fire(due: list[tuple[ScheduleEntry, datetime]]) -> None:
        nonlocal aborted
        try:
            _fire(args, due)
        except KeyboardInterrupt:
            aborted = True
            raise
        if stop.asked:   # the batch caught the stop, ended in order and reported: now the schedule ends
            aborted = True
            raise KeyboardInterrupt

    scheduler = Scheduler(entries, fire, on_missed=_missed, state_path=Path(args.runs_dir) / "schedule-state.json")
    for entry in entries:
        nxt = entry.trigger.get_next_fire_time(None, datetime.now().astimezone())
        print(f"{entry.cron:<16} {entry.device:<10} {entry.task}   next: {nxt:%Y-%m-%d %H:%M}" if nxt else
              f"{entry.cron:<16} {entry.device:<10} {entry.task}   never fires again", file=sys.stderr)
    print("Ctrl-C (or SIGTERM) stops it.", file=sys.stderr, flush=True)
    try:
        with stop.installed():
            scheduler.run()
    except KeyboardInterrupt:
        scheduler.stop()
        print("stopped" + (" (the firing in progress stopped in order: its records and batch.json are written)"
                           if aborted else ""), file=sys.stderr)
        return ExitCode.ABORTED if aborted else ExitCode.OK
    return ExitCode.OK
