"""Opening the phone a command asked for: a real device through an adb server, or the simulated one."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from typing import Any

from remote.commands._busy import server_key, this_command
from remote.config import Settings
from remote.core.device.adb_controller import ADBController
from remote.core.device.phone_lock import PhoneLock
from remote.errors import ConfigError, DeviceError


def trace_overrides(args: Any) -> dict[str, Any]:
    """``--trace``/``--trace-start`` as scenario keys (only those given: a scenario file's stay otherwise)."""
    given = {"trace": getattr(args, "trace", None), "trace_start": getattr(args, "trace_start", None)}
    return {key: value for key, value in given.items() if value}


def check_sim_only(args: Any) -> None:
    """``--scenario`` and ``--trace`` set up the simulated phone: given for a real one they would do nothing,
    so they are refused rather than ignored."""
    if trace_overrides(args):
        raise ConfigError("--trace serves a recording as the simulated phone", hint="add --device sim")
    if getattr(args, "scenario", None):
        raise ConfigError("--scenario sets up the simulated phone and does nothing to a real one",
                          hint="add --device sim, or leave out --scenario")


@contextlib.contextmanager
def phone_locks(serials: list[str], host: str, port: int) -> Iterator[None]:
    """Hold the lock of each phone (``remote.core.device.phone_lock``) while the block drives them."""
    with contextlib.ExitStack() as stack:
        for serial in serials:
            stack.enter_context(PhoneLock.acquire(serial, server=server_key(host, port), command=this_command()))
        yield


def _serial_to_lock(serial: str | None, host: str, port: int) -> list[str]:
    """The phone a command will drive: the one named, else the only one connected (several or none: the
    connection says so)."""
    if serial:
        return [serial]
    try:
        connected = ADBController.list_serials(host, port)
    except DeviceError:
        return []
    return connected if len(connected) == 1 else []


@contextlib.contextmanager
def open_device(args: argparse.Namespace, settings: Settings | None = None, *,
                lock: bool = False) -> Iterator[tuple[ADBController, Any]]:
    """Yield ``(controller, sim_phone_or_None)``; the controller is closed (IME restored) afterwards.

    ``--device sim`` starts the simulated phone in-process on a free loopback port (the trace phone
    with ``--trace DIR``). ``lock``: a real phone's lock is taken before anything is sent to it (a
    command that drives the phone: run, mcp), and DeviceBusy names the process that holds it.
    """
    settings = settings or Settings.from_env()
    if settings.adb_path:
        os.environ.setdefault("ADBUTILS_ADB_PATH", settings.adb_path)
    serial = getattr(args, "device", None) or settings.adb_serial or None
    trace = trace_overrides(args)
    if serial != "sim":
        check_sim_only(args)
    if serial == "sim":
        from remote.sim import serve

        with serve(scenario=getattr(args, "scenario", None), **trace) as server:
            adb = ADBController(server.serial, port=server.port, operation_delay=settings.operation_delay,
                                tree=getattr(args, "tree", None) or settings.tree,
                            frames=getattr(args, "frames", None) or settings.frames)
            try:
                yield adb.connect(), server.phone
            finally:
                adb.close()
        return
    host = getattr(args, "adb_host", None) or settings.adb_host
    port = getattr(args, "adb_port", None) or settings.adb_port
    with phone_locks(_serial_to_lock(serial, host, port) if lock else [], host, port):
        adb = ADBController(serial, host=host, port=port, operation_delay=settings.operation_delay,
                            tree=getattr(args, "tree", None) or settings.tree,
                            frames=getattr(args, "frames", None) or settings.frames)
        try:
            yield adb.connect(), None
        finally:
            adb.close()
