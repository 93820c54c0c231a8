"""A run's record as the run goes (``TaskRunner``'s bookkeeping, `remote.core.record.recorder` writes it).

``run.json`` exists from before the phone is touched (status ``running``) and is rewritten as each step
ends, so even ``kill -9`` leaves a truthful record; at the end it is written whole with the report. A disk
that refuses it only warns while the run goes, and at the end is said on the result (``record_error``),
never in place of the outcome on the phone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from remote.core.device.protocol import Device
from remote.core.record.recorder import RunRecorder
from remote.core.records import TaskResult
from remote.errors import RemoteError
from remote.runner.capture import device_costs
from remote.runner.clock import Clock
from remote.runner.tools import Capture

logger = logging.getLogger(__name__)

# What a phone that can say its own state (the simulated or a traced one) tells run.json ("device_state").
DeviceState = Callable[[], Mapping[str, object]]


class RunRecord:
    """``record = RunRecord(recorder, meta, ...); record.snapshot(result); ...; record.final(result)``;
    ``meta`` holds the run's extra facts (the route score, what was learned ...), filled as the run goes;
    ``facts`` the run's own (its model, strategy, dry run), the same for every write."""

    def __init__(self, recorder: RunRecorder | None, meta: dict[str, Any], *, device: Device, clock: Clock,
                 facts: Callable[[], dict[str, Any]], device_state: DeviceState | None) -> None:
        self.recorder, self.meta = recorder, meta
        self.device, self.clock, self.facts, self.device_state = device, clock, facts, device_state
        self.capture: Capture | None = None           # the run's screens, for the device's costs
        self._device: dict[str, Any] | None = None

    def snapshot(self, result: TaskResult) -> None:
        """run.json as the run stands (status running): what a killed run leaves. A full disk only warns."""
        if self.recorder is None:
            return
        try:
            result.total_time = self.clock.elapsed()
            self._write(result, final=False)
        except OSError as exc:
            logger.warning("run record %s not updated: %s", self.recorder.dir, exc.strerror or exc)

    def final(self, result: TaskResult) -> None:
        if self.recorder is None:
            return
        result.record_dir = str(self.recorder.dir)
        try:
            self._write(result, final=True)
        except OSError as exc:   # the outcome on the phone stands whatever the disk does
            result.record_error = f"{exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else "")
            logger.warning("run record %s could not be written: %s", self.recorder.dir, result.record_error)

    def _write(self, result: TaskResult, *, final: bool) -> Path:
        assert self.recorder is not None
        meta = dict(self.meta)
        if result.error_type:
            meta["error_type"] = result.error_type
        meta.update(self.facts())
        meta["failure"] = result.failure.value if result.failure else None
        meta["final_check"] = result.final_check.to_dict() if result.final_check else None
        # the first snapshot, written before the phone is touched, does not wait for the phone's size
        meta["device"] = {**self._device_info(ask=final or bool(result.step_results)),
                          **device_costs(self.device, self.capture)}
        if self.device_state is not None:
            meta["device_state"] = self.device_state()
        return self.recorder.write(result, meta, final=final)

    def _device_info(self, *, ask: bool) -> dict[str, Any]:
        """The phone's serial and size, asked once (a phone that failed is asked again at the end); without
        ``ask``, the serial alone until then."""
        if self._device is not None:
            return self._device
        device = self.device
        if not ask:
            return {"serial": device.serial}
        try:
            info: dict[str, Any] = {"serial": device.serial, "size": list(device.window_size())}
        except RemoteError as exc:
            return {"serial": device.serial, "error": str(exc)}
        self._device = info
        return info
