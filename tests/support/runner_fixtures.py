"""Fixtures for whole-task tests: a fast controller on the simulated phone and a runner factory.

The sim applies every action synchronously, so waits are skipped (``sleep`` is a
no-op) to keep the suite fast; bench/e2e_bench.py measures with the real waits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from remote.core.device.adb_controller import ADBController
from remote.core.records import LocateStrategy
from remote.runner import Limits, RunOptions, TaskRunner, build_runner
from remote.runner.clock import Clock
from remote.runner.models import Budget


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


class ScriptedPerson:
    """A person at the terminal whose answers a test scripts (each a function; absent: "no")."""

    def __init__(self, confirm: Callable[[str], bool] | None = None,
                 choose: Callable[[str, Any], int | None] | None = None,
                 take_over: Callable[[str], bool] | None = None) -> None:
        self._confirm, self._choose, self._take_over = confirm, choose, take_over

    def confirm(self, question: str) -> bool:
        return bool(self._confirm(question)) if self._confirm else False

    def choose(self, question: str, options: Any) -> int | None:
        return self._choose(question, options) if self._choose else None

    def take_over(self, message: str) -> bool:
        return bool(self._take_over(message)) if self._take_over else False


def runner_for(adb: ADBController, tmp_path: Any, llm_config: Any = None, *, person: Any = None,
               listener: Any = None, registry: Any = None, device_state: Any = None,
               sleep: Callable[[float], None] = no_sleep, learner: Any = None, **options: Any) -> TaskRunner:
    """A runner with fast (skipped) waits; options may mix RunOptions, Limits and Budget fields."""
    budget = Budget(**{k: options.pop(k) for k in ("max_model_calls", "max_tokens") if k in options})
    limits = Limits(budget=budget, **{k: options.pop(k) for k in ("max_steps", "max_seconds", "max_replans")
                                      if k in options})
    if "strategy" in options:
        options["strategy"] = LocateStrategy(options["strategy"])
    opts = RunOptions(runs_dir=tmp_path / "runs", **options)
    return build_runner(adb, llm=llm_config, limits=limits, options=opts, person=person, listener=listener,
                        device_state=device_state, registry=registry,
                        clock=Clock(limits.max_seconds, sleep=sleep), learner=learner)


@pytest.fixture
def make_runner(fast_adb: ADBController, sim_phone: Any, tmp_path: Any) -> Callable[..., TaskRunner]:
    def make(llm_config: Any = None, *, confirm: Any = None, take_over: Any = None, choose: Any = None,
             listener: Any = None, learner: Any = None, **options: Any) -> TaskRunner:
        person = ScriptedPerson(confirm=confirm, choose=choose, take_over=take_over)
        return runner_for(fast_adb, tmp_path, llm_config, person=person, listener=listener,
                          device_state=sim_phone.snapshot, learner=learner, **options)
    return make
