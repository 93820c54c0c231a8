"""Screenshot latency on the simulated phone (1080x2400): ADBController vs adbutils.

    python bench/sim_bench.py [--n 50] [--resolution 1080x2400]

Prints the median and p95 of `ADBController.screenshot()` (raw `exec:screencap` on the loopback, as a
PIL image), of `ADBController.frame()` (the same frame as the BGR array the runner uses) and of
adbutils' own `d.screenshot()` (PNG over `shell:`), and their ratio.
Target: ADBController median < 60 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/true")  # never start a real adb server

import adbutils  # noqa: E402

from remote.core.device.adb_controller import ADBController  # noqa: E402
from remote.sim import serve  # noqa: E402


def measure(fn: Callable[[], object], n: int) -> list[float]:
    fn()  # warm-up: the first frame is rendered and encoded once, then cached
    times = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--resolution", default="1080x2400")
    args = parser.parse_args()
    with serve(resolution=args.resolution, uiautomator_delay_ms=0) as server, \
            tempfile.TemporaryDirectory() as state:
        adb = ADBController(server.serial, port=server.port, socket_timeout=10, state_dir=state).connect()
        image = adb.screenshot()
        assert image.size == server.phone.size, image.size
        ours = summary(measure(adb.screenshot, args.n))
        array = summary(measure(adb.frame, args.n))      # what the runner takes: the BGR array, no PIL image
        device = adbutils.AdbClient(port=server.port, socket_timeout=10).device(server.serial)
        theirs = summary(measure(lambda: device.screenshot(error_ok=False), args.n))
        adb.close()
    print(f"simulated phone {args.resolution}, {args.n} screenshots each")
    print(f"ADBController.screenshot()  median {ours[0]:7.1f} ms   p95 {ours[1]:7.1f} ms   (target < 60 ms)")
    print(f"ADBController.frame()       median {array[0]:7.1f} ms   p95 {array[1]:7.1f} ms   (the array the runner uses)")
    print(f"adbutils d.screenshot()     median {theirs[0]:7.1f} ms   p95 {theirs[1]:7.1f} ms")
    print(f"ratio adbutils / ADBController (median): {theirs[0] / ours[0]:.2f}x")
    return 0 if ours[0] < 60 else 1


if __name__ == "__main__":
    sys.exit(main())
