"""`remote devices`: serial, model, resolution, ADBKeyboard present or not."""

from __future__ import annotations

from typing import Any

from remote.config import Settings
from remote.core.device.adb_controller import ADBController
from remote.errors import DeviceError


def run(args: Any) -> int:
    settings = Settings.from_env()
    host = args.adb_host or settings.adb_host
    port = args.adb_port or settings.adb_port
    serials = ADBController.list_serials(host, port)
    if not serials:
        print(f"no devices on the adb server at {host}:{port}")
        print("plug a phone in with USB debugging on, or try: python -m remote run --device sim \"打开微信\"")
        return 1
    print(f"{'serial':24} {'model':20} {'resolution':12} ADBKeyboard")
    for serial in serials:
        adb = ADBController(serial, host=host, port=port)
        try:
            info = adb.connect().info()
            kb = "yes" if info["adbkeyboard"] else "no (needed for Chinese text)"
            print(f"{serial:24} {info['model'][:20]:20} {info['resolution']:12} {kb}")
        except DeviceError as exc:
            print(f"{serial:24} error: {exc}")
    return 0
