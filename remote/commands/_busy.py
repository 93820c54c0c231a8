"""A second `remote run` on a phone another process drives is refused before anything heavy is imported.

The run's own lock is taken later, where the phone is opened (`remote.commands._device.open_device`); this
is a look ahead of it, made with the lock alone (`remote.core.device.phone_lock`: fcntl, a few ms), so the
refusal answers in a fraction of a second instead of after the runner's imports (OpenCV, numpy, adbutils,
the modules: 1-2 s). It needs the phone named (``--device`` or ``ADB_SERIAL``); with none named, the only
connected phone is found by the adb client and its lock refuses the run there.
"""

from __future__ import annotations

import sys
from typing import Any

from remote.config import Settings
from remote.core.device.phone_lock import PhoneLock


def this_command() -> str:
    """What the lock file says this process is: ``remote run 打开设置 --device R58M123``."""
    return " ".join(["remote", *sys.argv[1:]])


def server_key(host: str, port: int) -> str:
    return f"{'127.0.0.1' if host in ('localhost', '::1') else host}:{port}"


def refuse_if_busy(args: Any) -> None:
    """DeviceBusy (exit 2, naming the holder) when a named phone's lock is held by another process."""
    named = getattr(args, "device", None)
    settings = Settings.from_env()
    serials = (named if isinstance(named, list) else [named]) if named else [settings.adb_serial]
    host = getattr(args, "adb_host", None) or settings.adb_host
    port = getattr(args, "adb_port", None) or settings.adb_port
    for serial in serials:
        if serial and serial != "sim":
            PhoneLock.acquire(serial, server=server_key(host, port), command=this_command()).release()
