"""`remote screenshot -o FILE`: save the phone's screen."""

from __future__ import annotations

import argparse

from remote.commands._device import open_device


def run(args: argparse.Namespace) -> int:
    with open_device(args) as (adb, _sim):
        img = adb.screenshot(allow_uniform=True)
        img.save(args.output)
        meta = adb.last_screenshot
        took = f" in {meta.elapsed_ms:.0f} ms" if meta else ""
        print(f"saved {img.width}x{img.height} screenshot of {adb.serial} to {args.output}{took}")
    return 0
