"""What a fleet moves around: phones, jobs (one task for one phone or any), their results, ``batch.json``.

Everything here is plain data that pickles (Ray ships jobs to workers and results back)::

    Job(task="打开设置", device="any")          # any free phone
    Job(task="打开设置", device="emulator-5556") # that phone, and only when it is free
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from remote.core.safe_files import write_atomic
from remote.errors import ExitCode
from remote.runner import Limits, RunOptions

ANY = "any"
ALL = "all"
NOT_RUN = "not_run"


@dataclass(frozen=True)
class Phone:
    """One phone and the adb server that sees it."""

    serial: str
    host: str = "127.0.0.1"
    port: int = 5037


@dataclass(frozen=True)
class RunSettings:
    """How every task of a batch runs: the runner's limits and options (``runs_dir`` is where records go)."""

    limits: Limits = field(default_factory=Limits)
    options: RunOptions = field(default_factory=RunOptions)
    operation_delay: float = 0.0


@dataclass(frozen=True)
class Job:
    """One task for one phone (``device`` a serial) or for whichever is free (``device == "any"``)."""

    task: str
    device: str = ANY
    index: int = 0
    line: int | None = None
    attempt: int = 1
    env: tuple[tuple[str, str], ...] = ()   # the entry's env: (-e values; they win over the command's -e)

    @property
    def pinned(self) -> bool:
        return self.device != ANY


@dataclass
class JobResult:
    """How one job ended; one row of the summary table and of ``batch.json``."""

    job: Job
    phone: str | None
    status: str
    exit_code: int
    failure: str | None = None
    error: str = ""
    seconds: float = 0.0
    model_calls: int = 0
    tokens: int = 0
    record: str | None = None
    started: float = 0.0          # wall clock (time.time()) around the whole job, connect to close
    ended: float = 0.0
    phone_gone: bool = False      # the phone was no longer connected after the job
    earlier: list[dict[str, Any]] = field(default_factory=list)   # attempts before this one (a retry)
    answer: Any = None            # a question task's typed answer
    record_error: str = ""        # why the run's record could not be written (a full disk); the row still counts

    @property
    def ok(self) -> bool:
        return self.exit_code == ExitCode.OK

    @property
    def retryable(self) -> bool:
        """A job for any phone whose phone went away under it gets one more try on another phone."""
        return self.phone_gone and not self.job.pinned and self.job.attempt == 1 and not self.ok

    def retried_from(self) -> str | None:
        return self.earlier[-1]["phone"] if self.earlier else None

    def attempt_row(self) -> dict[str, Any]:
        return {"phone": self.phone, "status": self.status, "failure": self.failure, "error": self.error,
                "record": self.record}

    def to_row(self) -> dict[str, Any]:
        return {"index": self.job.index, "task": self.job.task, "device": self.job.device, "phone": self.phone,
                "status": self.status, "exit_code": self.exit_code, "failure": self.failure, "error": self.error,
                "seconds": round(self.seconds, 2), "model_calls": self.model_calls, "tokens": self.tokens,
                "record": self.record, "answer": self.answer, "line": self.job.line, "attempts": self.job.attempt,
                "retried_from": self.retried_from(), "earlier_attempts": self.earlier,
                "record_error": self.record_error or None}


_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f]")   # ANSI colours, control characters


def one_line(text: str | None, limit: int = 300) -> str:
    """An error as one clean line for a table: no colour codes, the first line only (a traceback's first line
    says where it came from; its last what happened: callers pass what happened)."""
    lines = [line.strip() for line in _CONTROL.sub("", text or "").splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0] + (" …" if len(lines) > 1 else "")
    return first if len(first) <= limit else first[:limit - 1] + "…"


def not_run(job: Job, why: str, *, exit_code: int = ExitCode.ENVIRONMENT) -> JobResult:
    """A job that never reached a phone (no phone left, stopped by Ctrl-C, no worker has the phone)."""
    return JobResult(job=job, phone=None, status=NOT_RUN, exit_code=exit_code, error=why)


def retry_of(result: JobResult) -> Job:
    return replace(result.job, attempt=result.job.attempt + 1)


def with_earlier(result: JobResult, earlier: JobResult | None) -> JobResult:
    if earlier is not None:
        result.earlier = [*earlier.earlier, earlier.attempt_row()]
    return result


def batch_exit_code(results: list[JobResult]) -> int:
    """0 when every job succeeded; 130 when stopped; 1 when a task failed; 2 when only the environment did."""
    codes = {r.exit_code for r in results}
    if not results or codes == {ExitCode.OK}:
        return ExitCode.OK if results else ExitCode.ENVIRONMENT
    if ExitCode.ABORTED in codes:
        return ExitCode.ABORTED
    return ExitCode.FAILED if ExitCode.FAILED in codes else ExitCode.ENVIRONMENT


def batch_document(results: list[JobResult], *, source: str, started: float, placement: str) -> dict[str, Any]:
    """What batch.json holds: one row per job (task, device, phone, status, record ...)."""
    rows = [r.to_row() for r in sorted(results, key=lambda r: r.job.index)]
    return {"source": source, "placement": placement,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
            "seconds": round(time.time() - started, 2), "tasks": len(rows),
            "succeeded": sum(r["exit_code"] == ExitCode.OK for r in rows), "rows": rows}


def write_batch_json(doc: dict[str, Any], runs_dir: Path, *, started: float) -> Path:
    """``<runs_dir>/batch-<time>/batch.json``, written whole or not at all (OSError on a full disk)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(started))
    runs_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    while True:   # mkdir is the claim: two batches in one second get two folders
        folder = runs_dir / (f"batch-{stamp}" + (f"-{n}" if n else ""))
        try:
            folder.mkdir()
            break
        except FileExistsError:
            n += 1
    return write_atomic(folder / "batch.json", json.dumps(doc, ensure_ascii=False, indent=2))
