"""`remote schedule FILE`: tasks on cron expressions, submitted like a batch (this host's phones, or a Ray
cluster with --address), until Ctrl-C. Runs missed while it was stopped, or while a batch was still running,
are reported and not replayed. What it watched is kept in ``<runs-dir>/schedule-state.json``."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime
from pathlib import Path

from remote.commands.batch import FleetView, local_phones, report, run_jobs
from remote.errors import DeviceBusy, ExitCode
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
    except DeviceBusy as exc:   # another process drives a phone now: this firing is skipped, the next comes
        print(f"not fired: {exc.message}", file=sys.stderr, flush=True)
        return
    report(results, args, source=str(args.file), placement="local", started=started)


def run(args: argparse.Namespace) -> int:
    entries = load_schedule(Path(args.file))
    if args.address:
        from remote.fleet import ray_cluster

        ray_cluster.connect(args.address, allow_no_auth=args.allow_unauthenticated_ray)
    scheduler = Scheduler(entries, lambda due: _fire(args, due), on_missed=_missed,
                          state_path=Path(args.runs_dir) / "schedule-state.json")
    for entry in entries:
        nxt = entry.trigger.get_next_fire_time(None, datetime.now().astimezone())
        print(f"{entry.cron:<16} {entry.device:<10} {entry.task}   next: {nxt:%Y-%m-%d %H:%M}" if nxt else
              f"{entry.cron:<16} {entry.device:<10} {entry.task}   never fires again", file=sys.stderr)
    print("Ctrl-C stops it.", file=sys.stderr, flush=True)
    try:
        scheduler.run()
    except KeyboardInterrupt:
        scheduler.stop()
        print("stopped", file=sys.stderr)
        return ExitCode.OK
    return ExitCode.OK
