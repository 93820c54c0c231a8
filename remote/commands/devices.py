"""`remote devices`: serial, model, resolution, ADBKeyboard present or not."""

from __future__ import annotations

import argparse
import json

from remote.config import Settings
from remote.core.device.adb_controller import ADBController
from remote.errors import DeviceError, DeviceNotFound, ExitCode


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    host = args.adb_host or settings.adb_host
    port = args.adb_port or settings.adb_port
    serials = ADBController.list_serials(host, port)
    if not serials:
        raise DeviceNotFound(f"no devices on the adb server at {host}:{port}",
                             hint='plug a phone in with USB debugging on, or try: python -m remote run --device sim '
                                  '"打开微信"')
    rows = []
    for serial in serials:
        adb = ADBController(serial, host=host, port=port)
        try:
            rows.append(adb.connect().info())
        except DeviceError as exc:
            rows.append({"serial": serial, "error": exc.message})
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return ExitCode.OK
    print(f"{'serial':24} {'model':20} {'resolution':12} ADBKeyboard")
    for info in rows:
        if "error" in info:
            print(f"{info['serial']:24} error: {info['error']}")
            continue
        kb = "yes" if info["adbkeyboard"] else "no (needed for Chinese text)"
        print(f"{info['serial']:24} {info['model'][:20]:20} {info['resolution']:12} {kb}")
    return ExitCode.OK
