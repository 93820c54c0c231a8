"""`remote batch FILE`: a YAML list of tasks over this host's phones (or a Ray cluster's), live progress per
phone, a summary table and ``batch.json``. The helpers here serve `run --device A --device B`, `submit` and
`schedule` too."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from remote.commands._device import check_sim_only, phone_locks
from remote.commands._signals import terminate_as_interrupt
from remote.config import Settings
from remote.core.device.adb_controller import ADBController
from remote.core.record.report_words import answer_text
from remote.core.records import LocateStrategy, StepResult, StepStatus, TaskPlan, TaskResult
from remote.errors import BadInput, DeviceNotFound
from remote.fleet.files import expand, load_batch
from remote.fleet.jobs import (
    Job,
    JobResult,
    Phone,
    RunSettings,
    batch_document,
    batch_exit_code,
    one_line,
    write_batch_json,
)
from remote.runner import Limits, RunOptions
from remote.runner.models import Budget

MARKS = {StepStatus.SUCCESS: "ok", StepStatus.FAILED: "FAILED", StepStatus.SKIPPED: "skipped",
         StepStatus.NOT_CHECKED: "not checked"}


def settings_from(args: argparse.Namespace) -> RunSettings:
    limits = Limits(max_steps=args.max_steps, max_seconds=args.max_seconds,
                    budget=Budget(max_model_calls=args.max_model_calls, max_tokens=args.max_tokens))
    options = RunOptions(strategy=LocateStrategy(args.strategy), yes=args.yes, dry_run=getattr(args, "dry_run", False),
                         module=getattr(args, "module", None), runs_dir=Path(args.runs_dir),
                         env=tuple(getattr(args, "env", None) or ()))
    return RunSettings(limits=limits, options=options, operation_delay=Settings.from_env().operation_delay)


@contextlib.contextmanager
def local_phones(args: argparse.Namespace, *, every: bool = True) -> Iterator[list[Phone]]:
    """The phones named by ``--device`` (each ``sim`` adds a simulated phone), or every connected one; a real
    phone's lock is held meanwhile (DeviceBusy when another process drives it)."""
    devices: list[str] = list(getattr(args, "device", None) or [])
    sims = devices.count("sim")
    if sims:
        if sims != len(devices):
            raise BadInput("--device sim cannot be mixed with real serials in one batch")
        from remote.sim import serve_farm

        with serve_farm(sims, getattr(args, "scenario", None)) as server:
            yield [Phone(p.serial, server.host, server.port) for p in server.phones]
        return
    check_sim_only(args)
    settings = Settings.from_env()
    host, port = args.adb_host or settings.adb_host, args.adb_port or settings.adb_port
    connected = ADBController.list_serials(host, port)
    missing = [d for d in devices if d not in connected]
    if missing:
        raise DeviceNotFound(f"phone {missing[0]} is not connected (connected: {', '.join(connected) or 'none'})",
                             hint="check `python -m remote devices`")
    serials = devices or (connected if every else [])
    if not serials:
        raise DeviceNotFound(f"no phones on the adb server at {host}:{port}",
                             hint="plug phones in with USB debugging on, or try: --device sim --device sim")
    if len(set(serials)) != len(serials):
        raise BadInput("a phone is named twice with --device: one worker per phone")
    with phone_locks(serials, host, port):   # one process per phone: another run or batch is refused
        yield [Phone(s, host, port) for s in serials]


class FleetView:
    """Live progress on stderr, one whole line per event and phone (threads never split a line)."""

    def __init__(self, stream: TextIO | None = None, *, steps: bool = True) -> None:
        self.out = stream if stream is not None else sys.stderr
        self.lock = threading.Lock()
        self.steps = steps

    def line(self, text: str) -> None:
        with self.lock:
            print(text, file=self.out, flush=True)

    def listener_for(self, phone: Phone, job: Job) -> PhoneLines | None:
        return PhoneLines(self, phone.serial, job) if self.steps else None

    def on_result(self, result: JobResult) -> None:
        where = result.phone or "-"
        again = "; trying it on another phone" if result.retryable else ""
        why = f": {one_line(result.error)}" if result.error else ""
        self.line(f"{where:<16} #{result.job.index + 1} {result.status.upper()} {result.job.task} "
                  f"({result.seconds:.1f} s){why}{again}")


class PhoneLines:
    """A runner listener that prints each finished step prefixed by its phone."""

    def __init__(self, view: FleetView, serial: str, job: Job) -> None:
        self.view, self.serial, self.job = view, serial, job
        self.total = 0

    def on_plan(self, plan: TaskPlan) -> None:
        self.total = len(plan.steps)
        self.view.line(f"{self.serial:<16} #{self.job.index + 1} {self.job.task}: {len(plan.steps)} steps "
                       f"[{plan.module}]")

    def on_step_start(self, step: object, total: int) -> None:
        self.total = total   # the runner's: steps run and still queued, after replans too

    def on_step_end(self, sr: StepResult) -> None:
        extra = f": {sr.error_message}" if sr.error_message else ""
        self.view.line(f"{self.serial:<16} #{self.job.index + 1} [{sr.step.step}/{self.total}] {sr.step.label} "
                       f"{MARKS.get(sr.status, sr.status.value)} {sr.elapsed:.2f}s{extra}")

    def on_note(self, message: str) -> None:
        self.view.line(f"{self.serial:<16} warning: {message}")

    def on_finish(self, result: TaskResult) -> None:
        return None


def _width(text: str) -> int:
    """Columns a terminal gives ``text`` (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _cut(text: str, width: int) -> str:
    out = ""
    for c in text:
        if _width(out + c) > width:
            break
        out += c
    return out + " " * (width - _width(out))


def print_table(results: list[JobResult], out: TextIO | None = None) -> None:
    """task, phone, status, reason (why it failed, one line), time, model calls, record: one row per job; a
    reason too long for its column follows the table whole."""
    out = out if out is not None else sys.stdout
    answers = any(r.answer is not None for r in results)   # a question task's answer gets a column
    rows = [(str(r.job.index + 1), r.job.task, r.phone or "-",
             r.status.upper() + (f" (retried: {r.retried_from()} dropped)" if r.earlier else ""),
             one_line(r.error) or "-", f"{r.seconds:.1f}s", str(r.model_calls),
             *([one_line(answer_text(r.answer)) if r.answer is not None else "-"] if answers else []),
             r.record or "-")
            for r in results]
    head = ("#", "task", "phone", "status", "reason", "time", "model calls", *(["answer"] if answers else []),
            "record")
    last = len(head) - 1
    widths = [min(40, max(_width(row[i]) for row in [head, *rows])) for i in range(last)]
    print("", file=out)
    for row in [head, *rows]:
        print("  ".join(_cut(row[i], widths[i]) for i in range(last)) + "  " + row[last], file=out)
    cut = [(row[0], row[4]) for row in rows if _width(row[4]) > widths[4]]
    if cut:   # a reason the column cut short is given whole below the table
        print("", file=out)
        for number, reason in cut:
            print(f"  #{number}: {reason}", file=out)
    ok = sum(r.ok for r in results)
    print(f"\n{ok}/{len(results)} tasks succeeded", file=out)


def report(results: list[JobResult], args: argparse.Namespace, *, source: str, placement: str,
           started: float) -> int:
    """Write batch.json, print the table (or JSON), and return the batch's exit status. The outcome is
    printed and returned whatever the disk does; a batch.json that cannot be written is a warning."""
    doc = batch_document(results, source=source, placement=placement, started=started)
    try:
        path: Path | None = write_batch_json(doc, Path(args.runs_dir), started=started)
    except OSError as exc:
        path = None
        problem = f"{exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else "")
    if args.json:
        print(json.dumps({**doc, "batch_json": str(path) if path else None}, ensure_ascii=False), flush=True)
    else:
        print_table(results)
        print(f"batch: {path}" if path else "batch: not written", flush=True)
    for r in results:
        if r.record_error:
            print(f"warning: the run record of task {r.job.index + 1} could not be written ({r.record_error}); "
                  "its row says what happened on the phone", file=sys.stderr, flush=True)
    if path is None:
        print(f"warning: batch.json could not be written ({problem}); the rows above are what happened on the "
              "phones", file=sys.stderr, flush=True)
    return batch_exit_code(results)


def run_jobs(jobs: list[Job], args: argparse.Namespace, phones: list[Phone] | None, view: FleetView) -> list[JobResult]:
    """On this host's ``phones``, or (phones None) on the Ray cluster this process is connected to."""
    settings = settings_from(args)
    if phones is not None:
        from remote.fleet.local import LocalFleet

        return LocalFleet(phones, settings, listener_for=view.listener_for, on_result=view.on_result).run(jobs)
    from remote.fleet.ray_fleet import RayFleet

    return RayFleet(settings, on_result=view.on_result).run(jobs)


@contextlib.contextmanager
def placement(args: argparse.Namespace) -> Iterator[tuple[list[Phone] | None, str]]:
    """``(phones, "local")`` for this host's phones, ``(None, "ray ADDR")`` for a Ray cluster."""
    address = getattr(args, "address", None)
    if not address:
        with local_phones(args) as phones:
            yield phones, "local"
        return
    from remote.fleet import ray_cluster

    allow = getattr(args, "allow_unauthenticated_ray", False)
    if address == "local":
        with local_phones(args) as phones:
            cluster = ray_cluster.start_local(phones, allow_no_auth=allow)
            try:
                yield None, f"ray (one-host cluster {cluster.address})"
            finally:
                cluster.shutdown()
        return
    ray_cluster.connect(address, allow_no_auth=allow)
    yield None, f"ray {address}"


def run_many(args: argparse.Namespace) -> int:
    """`run "TASK" --device A --device B` / `--all-devices`: the task once on each phone, in parallel."""
    if args.all_devices and args.device:
        raise BadInput("--all-devices runs on every connected phone: leave out --device, or drop --all-devices")
    started = time.time()
    with terminate_as_interrupt(), local_phones(args) as phones:
        jobs = [Job(task=args.task, device=p.serial, index=i) for i, p in enumerate(phones)]
        view = FleetView(steps=not args.json)
        results = run_jobs(jobs, args, phones, view)
    return report(results, args, source="run", placement="local", started=started)


def run(args: argparse.Namespace) -> int:
    entries = load_batch(Path(args.file))
    started = time.time()
    with terminate_as_interrupt(), placement(args) as (phones, where):
        if phones is not None:
            serials = [p.serial for p in phones]
        else:
            from remote.fleet.ray_cluster import advertised_serials

            serials = advertised_serials()
        jobs = expand(entries, serials)
        view = FleetView(steps=not args.json)
        if not args.json:
            view.line(f"{len(jobs)} tasks on {len(phones) if phones is not None else 'the cluster'}"
                      f"{' phones' if phones is not None else ''} ({where})")
        results = run_jobs(jobs, args, phones, view)
    return report(results, args, source=str(args.file), placement=where, started=started)
