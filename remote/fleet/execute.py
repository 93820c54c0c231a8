"""One job on one phone: open it, run the task through the ordinary runner, close it, say whether it is gone.

The same function runs in a local worker thread and inside a Ray task on the host
that has the phone. A phone that cannot be reached still gets a runner: the run
fails with ``FailureReason.DEVICE`` and writes its record, so a task pinned to a
pulled phone fails *with its record*, as any other failed run does.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import replace
from pathlib import Path

from remote.apps import APPS_DIR, ModuleRegistry
from remote.config import LLMConfig, Settings
from remote.core.device.adb_controller import ADBController
from remote.core.records import FailureReason, TaskResult
from remote.errors import DeviceError, RemoteError
from remote.fleet.jobs import Job, JobResult, Phone, RunSettings
from remote.runner import build_runner
from remote.runner.clock import Clock
from remote.runner.protocols import Listener

logger = logging.getLogger(__name__)


def phone_present(phone: Phone) -> bool:
    """Is the phone still listed, in state ``device``, by its adb server? (False when the server is gone.)"""
    try:
        return phone.serial in ADBController.list_serials(phone.host, phone.port)
    except DeviceError:
        return False


def registry() -> ModuleRegistry:
    """The shipped modules and this host's REMOTE_MODULES (on a Ray worker: the worker host's)."""
    return ModuleRegistry([APPS_DIR, *Settings.from_env().module_dirs])


@functools.lru_cache(maxsize=4)
def _process_registry(dirs: tuple[Path, ...]) -> ModuleRegistry:
    return ModuleRegistry(dirs)


def process_registry() -> ModuleRegistry:
    """One registry per process and module folders: a Ray worker process runs its tasks one at a time, and
    reading every module's YAML for each task would cost a quarter of a second."""
    return _process_registry((APPS_DIR, *Settings.from_env().module_dirs))


def run_job(job: Job, phone: Phone, settings: RunSettings, *, listener: Listener | None = None,
            clock: Clock | None = None, modules: ModuleRegistry | None = None) -> JobResult:
    """Run ``job.task`` on ``phone``; never raises for what the run itself can record."""
    started = time.time()
    adb = ADBController(phone.serial, host=phone.host, port=phone.port, operation_delay=settings.operation_delay)
    try:
        adb.connect()
    except DeviceError as exc:   # the runner's first command fails the same way, and the record says so
        logger.info("phone %s not reachable before the task: %s", phone.serial, exc.message)
    try:
        options = replace(settings.options, env=tuple({**dict(settings.options.env), **dict(job.env)}.items()))
        runner = build_runner(adb, llm=LLMConfig.from_env(), limits=settings.limits, options=options,
                              listener=listener, registry=modules or process_registry(),
                              clock=clock or Clock(settings.limits.max_seconds))
        result = runner.run(job.task)
    finally:
        try:
            adb.close()
        except RemoteError as exc:   # the IME could not be restored on a phone that went away
            logger.info("closing %s: %s", phone.serial, exc.message)
    gone = result.failure is FailureReason.DEVICE and not phone_present(phone)
    return from_task(job, phone.serial, result, started=started, gone=gone)


def from_task(job: Job, serial: str, result: TaskResult, *, started: float, gone: bool) -> JobResult:
    usage = result.model_usage
    error = result.error_message
    if gone:
        error = f"{error} (phone {serial} disconnected)" if error else f"phone {serial} disconnected"
    return JobResult(job=job, phone=serial, status=result.status.value, exit_code=int(result.exit_code),
                     failure=result.failure.value if result.failure else None, error=error,
                     seconds=result.total_time, model_calls=usage.calls, tokens=usage.total_tokens,
                     record=result.record_dir or None, started=started, ended=time.time(), phone_gone=gone,
                     answer=result.answer, record_error=result.record_error)
