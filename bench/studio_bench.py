"""The studio's live view and inspector: frames a second through its HTTP API, and what a click costs, on the
simulated phone at three screen sizes; beside them, in the same run, what the frame costs without the studio.

    python bench/studio_bench.py
    python bench/studio_bench.py --frames 40 --sizes 1080x2400

Rows per screen size:
  studio jpeg    GET /api/screen?format=jpeg, one after another (what the page polls: its live view)
  studio png     GET /api/screen (the phone's pixels, lossless: what scripts get by default)
  raw frame      ADBController.screenshot() alone: the raw frame over ADB, decoded; the floor under any view of
                 the phone built on ADB screenshots (the studio adds the encoding and the HTTP round trip)
and the median of POST /api/inspect at a chat row (a fresh screen with its dump, every form looked for).
The simulated phone is in process (its screencap renders on the same 2 cores as the studio): a real phone
sends its frames over USB or Wi-Fi, which this does not measure. (`screencap -p` is not a row: the simulated
phone serves an unchanged screen's PNG from a cache, so its rate says nothing of a phone's PNG encoder.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib import request

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import uvicorn  # noqa: E402

from remote.apps import ModuleRegistry  # noqa: E402
from remote.core.device.adb_controller import ADBController  # noqa: E402
from remote.sim import serve  # noqa: E402
from remote.studio.acting import Acts, ActSettings  # noqa: E402
from remote.studio.app import Studio, build_app  # noqa: E402
from remote.studio.screens import LivePhone  # noqa: E402


def rate(fn: Any, n: int) -> float:
    fn()                                  # warm: the first frame pays for imports and connections
    started = time.perf_counter()
    for _ in range(n):
        fn()
    return n / (time.perf_counter() - started)


def get(url: str, body: dict[str, Any] | None = None) -> bytes:
    data = json.dumps(body).encode() if body is not None else None
    req = request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with request.urlopen(req, timeout=60) as answer:
        out: bytes = answer.read()
        return out


def one_size(size: str, frames: int, port: int) -> list[tuple[str, str, float]]:
    rows = []
    with serve({"resolution": size, "uiautomator_delay_ms": 0}) as sim, tempfile.TemporaryDirectory() as work:
        adb = ADBController(sim.serial, port=sim.port, state_dir=f"{work}/ime").connect()
        adb.launch_app("com.tencent.mm")
        time.sleep(0.5)
        registry = ModuleRegistry()
        source = LivePhone(adb)
        studio = Studio(source, registry, registry.get("wechat"),
                        Acts(source, registry, ActSettings(runs_dir=None, work_dir=Path(work))))
        web = uvicorn.Server(uvicorn.Config(build_app(studio), host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=web.run, daemon=True)
        thread.start()
        while not web.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        try:
            rows.append((size, "studio jpeg", rate(lambda: get(base + "/api/screen?format=jpeg"), frames)))
            rows.append((size, "studio png", rate(lambda: get(base + "/api/screen"), frames)))
            rows.append((size, "raw frame", rate(adb.screenshot, frames)))
            w, h = adb.window_size()
            row = [e for e in json.loads(get(base + "/api/elements"))["elements"] if e["text"] == "张三"][0]["box"]
            times = []
            for _ in range(max(5, frames // 4)):
                started = time.perf_counter()
                source.acted()                      # as after an action: the screen and its dump taken again
                get(base + "/api/inspect", {"x": w // 2, "y": (row[1] + row[3]) // 2})
                times.append(time.perf_counter() - started)
            rows.append((size, "inspect (ms, median)", statistics.median(times) * 1000))
        finally:
            web.should_exit = True
            thread.join(10)
            adb.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--sizes", default="720x1600,1080x2400,1440x3200")
    parser.add_argument("--port", type=int, default=8797)
    args = parser.parse_args()
    print(f"{'screen':<10} {'what':<22} {'frames/s':>9}")
    for size in args.sizes.split(","):
        for screen, what, value in one_size(size, args.frames, args.port):
            unit = f"{value:9.0f}" if what.startswith("inspect") else f"{value:9.2f}"
            print(f"{screen:<10} {what:<22} {unit}")


if __name__ == "__main__":
    main()
