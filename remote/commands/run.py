"""`remote run "TASK"`: route, plan, locate, act, verify, record; live progress and a one-screen summary.

The phone is opened first, and the tree server's cold start (0.8 s on a phone: docs/devices.md) begins at once,
beside the rest of the command's start: the runner, the modules and the learner are imported and built while it
runs (`remote.commands._run_task`), not before it.
"""

from __future__ import annotations

import argparse

from remote.commands._signals import terminate_as_interrupt
from remote.config import LLMConfig


def run(args: argparse.Namespace) -> int:
    devices = args.device or []
    if getattr(args, "all_devices", False) or len(devices) > 1:
        from remote.commands.batch import run_many  # many phones: one worker each (remote.fleet)

        return run_many(args)
    args.device = devices[0] if devices else None
    llm = LLMConfig.from_env()   # a configuration refused is said before the phone is touched
    from remote.commands._device import open_device  # the phone's link alone: adbutils, frames

    with terminate_as_interrupt(), open_device(args, lock=True) as (adb, sim):
        if not args.dry_run:
            adb.warm_session()   # idempotent: the run's own call finds it started
        from remote.commands import _run_task  # the runner, the modules, the learner: while the server starts

        ran = _run_task.run_on(args, llm, adb, sim)
    return _run_task.report(args, ran)
