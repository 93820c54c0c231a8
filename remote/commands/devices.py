"""`remote devices`: every phone the adb server lists, ready or not, with what it is and what to do.

Read without any command a phone may refuse (no ``ime``, no ``input``): a phone whose ROM refuses
keyboard switching is listed like any other, and `remote doctor` checks what it allows.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from remote.config import Settings
from remote.core.device import states
from remote.core.device.adb_controller import ADBController
from remote.errors import DeviceError, DeviceNotFound, ExitCode


def _row(serial: str, state: str, host: str, port: int) -> dict[str, Any]:
    if state != states.READY:
        return {"serial": serial, "state": state, "note": "; ".join(states.steps(state))}
    adb = ADBController(serial, host=host, port=port, reconnect_attempts=1)
    try:
        info = device_info(adb.connect())
    except DeviceError as exc:   # gone between the list and now, or not answering
        return {"serial": serial, "state": state, "note": f"{exc.message}" + (f" ({exc.hint})" if exc.hint else "")}
    finally:
        adb.close()
    return info


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    host = args.adb_host or settings.adb_host
    port = args.adb_port or settings.adb_port
    listed = ADBController.list_devices(host, port)
    if not listed:
        raise DeviceNotFound(f"no devices on the adb server at {host}:{port}",
                             hint='plug a phone in with USB debugging on, or try: python -m remote run --device sim '
                                  '"打开微信"')
    rows = [_row(serial, state, host, port) for serial, state in listed]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return ExitCode.OK
    print(f"{'serial':24} {'state':13} {'model':14} {'Android':8} {'ROM':24} {'resolution':11} ADBKeyboard")
    for row in rows:
        if "model" not in row:
            print(f"{row['serial']:24} {row['state']:13} {row['note']}")
            continue
        print(f"{row['serial']:24} {row['state']:13} {row['model'][:14]:14} {row['android'][:8]:8} {row['rom'][:24]:24} "
              f"{row['resolution']:11} {row['keyboard']}" + ("" if row["adbkeyboard"] else
                                                                 " (only ASCII can be typed)"))
    if any(row["state"] == states.READY for row in rows):
        print("check what a phone allows (taps, keyboard switching) with: python -m remote doctor --device SERIAL")
    return ExitCode.OK


def device_info(adb: ADBController) -> dict[str, Any]:
    """What `remote devices` shows: serial, model, Android, ROM, resolution, ADBKeyboard's state.

    Read without any command a phone may refuse (no ``ime``, no ``input``).
    """
    w, h = adb.window_size()
    rom = adb.rom()
    build, keyboards = adb.typer.build(), adb.typer.keyboards()
    keyboard = ("current" if keyboards.adbkeyboard_current else "enabled" if keyboards.adbkeyboard_enabled
                else "installed, not enabled") if build.installed else "not installed"
    return {"serial": adb.serial, "state": "device", "model": adb.getprop("ro.product.model"),
            "android": rom.android, "rom": rom.name, "resolution": f"{w}x{h}",
            "adbkeyboard": build.installed, "keyboard": keyboard}
