"""Fixtures for whole-task tests: a fast controller on the simulated phone and a runner factory.

The sim applies every action synchronously, so waits are skipped (``sleep`` is a
no-op) to keep the suite fast; bench/e2e_bench.py measures with the real waits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from remote.core.device.adb_controller import ADBController
from remote.runner.task_runner import RunOptions, TaskRunner


def no_sleep(_seconds: float) -> None:
    return None


@pytest.fixture
def fast_adb(sim_server: Any, tmp_path: Any) -> Iterator[ADBController]:
    adb = ADBController(sim_server.serial, port=sim_server.port, socket_timeout=5, command_timeout=10,
                        reconnect_attempts=2, reconnect_delay=0.01, state_dir=str(tmp_path / "ime"), sleep=no_sleep)
    adb.connect()
    try:
        yield adb
    finally:
        adb.close()


@pytest.fixture
def make_runner(fast_adb: ADBController, sim_phone: Any, tmp_path: Any) -> Callable[..., TaskRunner]:
    def make(llm_config: Any = None, *, confirm: Any = None, take_over: Any = None, listener: Any = None,
             **options: Any) -> TaskRunner:
        opts = RunOptions(runs_dir=str(tmp_path / "runs"), **options)
        return TaskRunner(fast_adb, llm_config, confirm=confirm, take_over=take_over, options=opts,
                          listener=listener, device_state=sim_phone.snapshot, sleep=no_sleep)
    return make
