"""Placing jobs on a Ray cluster of phone hosts, and bringing their results and records back.

A job pinned to a phone asks Ray for ``phone:SERIAL`` and one pool unit; a job for
any phone asks for one pool unit. Ray's scheduler places it on a host that has
that free; the host's room (`remote.fleet.room`) hands it the phone. The task
runs there through the ordinary runner, packs its run record, and returns it with
the result; the submitter unpacks it into its own runs folder. A job for any phone
whose phone went away is submitted once more (Ray places it on another phone).
"""

from __future__ import annotations

import io
import logging
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from remote.fleet import ray_missing

try:   # the `fleet` extra: a clear error, not a traceback, where it is missing
    import ray
    from ray.exceptions import RayError, RayTaskError
except ModuleNotFoundError as exc:
    raise ray_missing(exc) from exc

from remote.errors import ExitCode
from remote.fleet.execute import run_job
from remote.fleet.jobs import Job, JobResult, RunSettings, not_run, one_line, retry_of, with_earlier
from remote.fleet.ray_cluster import POOL, advertised, phone_resource, room_here
from remote.runner.clock import stopped_by

logger = logging.getLogger(__name__)

LEASE_TIMEOUT_S = 60.0       # a job for any phone waits this long on its host for a live phone
WAIT_POLL_S = 0.5
CANCEL_GRACE_S = 10.0        # after Ctrl-C, how long cancelled tasks get to write their records
CHECK_EVERY_S = 5.0          # how often a batch checks that its cluster answers and still offers its phones
CLUSTER_TIMEOUT_S = 10.0


def pack(record: Path) -> bytes:
    """A run record folder as a tar (its folder name at the top); not compressed: its images are PNGs already."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(record, arcname=record.name)
    return buf.getvalue()


def unpack(data: bytes, runs_dir: Path) -> Path:
    """Unpack a packed record into ``runs_dir`` under a name not taken yet; returns its folder."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=runs_dir))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            tar.extractall(incoming, filter="data")
        (source,) = list(incoming.iterdir())
        target, n = runs_dir / source.name, 1
        while target.exists():
            target, n = runs_dir / f"{source.name}-{n}", n + 1
        source.rename(target)
        return target
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


@ray.remote(num_cpus=0, max_retries=0)
def _remote_job(job: Job, settings: RunSettings) -> tuple[JobResult, bytes | None]:
    """Runs on the host Ray chose: lease a phone there, run, release, pack the record."""
    try:
        room = room_here()
    except ValueError:   # the host's worker died and its node lingers: worth one more placement elsewhere
        refused = not_run(job, "the host Ray chose has no room: its `remote worker` is gone (restart it there)")
        refused.phone_gone = True
        return refused, None
    phone = ray.get(room.lease.remote(job.device if job.pinned else None, LEASE_TIMEOUT_S))
    if phone is None:   # every phone of this host went away: worth one more placement elsewhere
        refused = not_run(job, "no live phone on the host Ray chose")
        refused.phone_gone = True
        return refused, None
    with tempfile.TemporaryDirectory(prefix="remote-run-") as tmp:
        local = replace(settings, options=replace(settings.options, runs_dir=Path(tmp)))
        result: JobResult | None = None
        try:
            result = run_job(job, phone, local)
        finally:
            ray.get(room.release.remote(phone.serial, result is not None and result.phone_gone))
        packed = pack(Path(result.record)) if result.record else None
    return result, packed


def _what_happened(exc: RayError) -> str:
    """One clean line: the exception a task raised (not Ray's traceback around it, nor its colours)."""
    cause = getattr(exc, "cause", None)
    if isinstance(exc, RayTaskError) and isinstance(cause, BaseException):
        return one_line(f"{type(cause).__name__}: {cause}")
    return one_line(f"{type(exc).__name__}: {exc}")


class RayFleet:
    """``RayFleet(settings).run(jobs)`` on the cluster this process is connected to (`ray_cluster.connect`)."""

    def __init__(self, settings: RunSettings, *, on_result: Callable[[JobResult], None] | None = None) -> None:
        self.settings = settings
        self.on_result = on_result or (lambda result: None)
        self.runs_dir = settings.options.runs_dir

    def _submit(self, job: Job) -> Any:
        resources = {POOL: 1.0}
        if job.pinned:
            resources[phone_resource(job.device)] = 1.0
        return _remote_job.options(resources=resources).remote(job, self.settings)

    def _placeable(self, job: Job) -> JobResult | None:
        if job.pinned and not advertised(job.device):
            return not_run(job, f"no worker of the cluster has phone {job.device}")
        if not job.pinned and not advertised():
            return not_run(job, "no worker of the cluster has a phone")
        return None

    def run(self, jobs: list[Job]) -> list[JobResult]:
        results: list[JobResult] = []
        pending: dict[Any, Job] = {}
        earlier: dict[int, JobResult] = {}
        for job in jobs:
            refused = self._placeable(job)
            if refused is not None:
                results.append(refused)
            else:
                pending[self._submit(job)] = job
        next_check = time.monotonic() + CHECK_EVERY_S
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_POLL_S)
                for ref in ready:
                    self._collect(ref, pending, earlier, results)
                if pending and time.monotonic() >= next_check:
                    results += self._lost(pending, earlier)
                    next_check = time.monotonic() + CHECK_EVERY_S
        except KeyboardInterrupt as exc:
            logger.warning("stopping: cancelling the tasks placed on the cluster")
            results += self._cancel(pending, earlier, stopped_by(exc))
        return sorted(results, key=lambda r: r.job.index)

    def _lost(self, pending: dict[Any, Job], earlier: dict[int, JobResult]) -> list[JobResult]:
        """Jobs that can no longer run, taken out of ``pending``: all of them when the cluster stops answering
        (Ray ends this process a minute after its head is gone: the rows must be written before), else those
        whose phone no live worker offers any more (Ray would keep them waiting forever)."""
        answer: list[dict[str, float]] = []
        probe = threading.Thread(target=lambda: answer.append(dict(ray.cluster_resources())),  # type: ignore[no-untyped-call]
                                 daemon=True, name="cluster-check")
        probe.start()
        probe.join(CLUSTER_TIMEOUT_S)
        if not answer:
            logger.warning("the Ray cluster stopped answering: the tasks not finished are given up")
            lost = {ref: "the Ray cluster stopped answering (is its head still running?)" for ref in pending}
        else:
            lost = {ref: f"{refused.error} any more: it left during the batch" for ref, job in pending.items()
                    if (refused := self._placeable(job)) is not None}
        out = []
        for ref, why in lost.items():
            job = pending.pop(ref)
            if answer:
                ray.cancel(ref, force=True)
            out.append(with_earlier(not_run(job, why), earlier.pop(job.index, None)))
        return out

    def _collect(self, ref: Any, pending: dict[Any, Job], earlier: dict[int, JobResult],
                 results: list[JobResult]) -> None:
        job = pending[ref]
        result = self._fetch(ref, job)
        del pending[ref]   # only now: a Ctrl-C before this still finds the task among the pending ones
        result = with_earlier(result, earlier.pop(job.index, None))
        self.on_result(result)
        if result.retryable:
            earlier[job.index] = result
            retry = retry_of(result)
            pending[self._submit(retry)] = retry
            logger.warning("task %r: retrying on another phone", job.task)
        else:
            results.append(result)

    def _fetch(self, ref: Any, job: Job) -> JobResult:
        try:
            result: JobResult
            result, packed = ray.get(ref)
        except RayError as exc:   # the worker died, or the task was cancelled
            return not_run(job, f"the cluster lost the task: {_what_happened(exc)}", exit_code=ExitCode.FAILED)
        if packed is not None and self.runs_dir is not None:
            result.record = str(unpack(packed, Path(self.runs_dir)))
        return result

    def _cancel(self, pending: dict[Any, Job], earlier: dict[int, JobResult], why: str) -> list[JobResult]:
        for ref in pending:
            ray.cancel(ref)
        out = []
        deadline = time.monotonic() + CANCEL_GRACE_S
        for ref, job in pending.items():
            ready, _ = ray.wait([ref], timeout=max(0.0, deadline - time.monotonic()))
            result = self._fetch(ref, job) if ready else not_run(job, why, exit_code=ExitCode.ABORTED)
            if result.status == "not_run":
                result.exit_code = ExitCode.ABORTED
            out.append(with_earlier(result, earlier.pop(job.index, None)))
        return out
