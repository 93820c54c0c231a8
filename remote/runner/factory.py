"""Building a TaskRunner at the edge (the CLI, the MCP server, a fleet worker) from plain settings."""

from __future__ import annotations

from remote.apps import ModuleRegistry
from remote.config import LLMConfig
from remote.core.device.protocol import Device
from remote.runner.clock import Clock
from remote.runner.learner import Learner
from remote.runner.models import LLMModels
from remote.runner.protocols import Listener, Person
from remote.runner.run_record import DeviceState
from remote.runner.task_runner import Limits, RunOptions, TaskRunner


def build_runner(device: Device, *, llm: LLMConfig | None = None, limits: Limits = Limits(),
                 options: RunOptions = RunOptions(), person: Person | None = None, listener: Listener | None = None,
                 device_state: DeviceState | None = None,
                 registry: ModuleRegistry | None = None, clock: Clock | None = None,
                 learner: Learner | None = None) -> TaskRunner:
    """``build_runner(adb, llm=LLMConfig.from_env()).run("给张三发微信消息说你好")``."""
    return TaskRunner(device, LLMModels(llm), registry or ModuleRegistry(), limits=limits, options=options,
                      person=person, listener=listener, device_state=device_state,
                      clock=clock or Clock(limits.max_seconds), learner=learner)
