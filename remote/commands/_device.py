"""Opening the phone a command asked for: a real device through an adb server, or the simulated one."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from typing import Any

from remote.config import Settings
from remote.core.device.adb_controller import ADBController


@contextlib.contextmanager
def open_device(args: argparse.Namespace, settings: Settings | None = None) -> Iterator[tuple[ADBController, Any]]:
    """Yield ``(controller, sim_phone_or_None)``; the controller is closed (IME restored) afterwards.

    ``--device sim`` starts the simulated phone in-process on a free loopback port.
    """
    settings = settings or Settings.from_env()
    if settings.adb_path:
        os.environ.setdefault("ADBUTILS_ADB_PATH", settings.adb_path)
    serial = getattr(args, "device", None) or settings.adb_serial or None
    if serial == "sim":
        from remote.sim import serve

        with serve(scenario=getattr(args, "scenario", None)) as server:
            adb = ADBController(server.serial, port=server.port, operation_delay=settings.operation_delay)
            try:
                yield adb.connect(), server.phone
            finally:
                adb.close()
        return
    host = getattr(args, "adb_host", None) or settings.adb_host
    port = getattr(args, "adb_port", None) or settings.adb_port
    adb = ADBController(serial, host=host, port=port, operation_delay=settings.operation_delay)
    try:
        yield adb.connect(), None
    finally:
        adb.close()
