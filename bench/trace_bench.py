"""Every recorded path of every DroidBot recording, replayed through the real runner on the trace phone.

    python bench/trace_bench.py                              # the data folder's traces, dumps without delay
    python bench/trace_bench.py --traces DIR --dump-ms 300 --waits

For each path of a recording's ``paths.json`` the loopback model server returns the path as a plan of
``tap text:``/``tap desc:`` steps (1 model call: the plan), the runner locates and taps each label over
ADB, and the trace phone says where it ended. Printed per recording: paths replayed, paths that reached
their last state, paths the runner reported as succeeded, model calls, and seconds per step (median and
p95; runner waits skipped unless ``--waits``, so the figure is the runner's and the phone's own work).
Also printed: the same paths tapped at DroidBot's own points on the phone directly (no runner), which
checks the phone alone. Figures from a loaded machine are noisy: compare rows of one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remote.config import LLMConfig  # noqa: E402
from remote.core.device.adb_controller import ADBController  # noqa: E402
from remote.core.records import TaskStatus  # noqa: E402
from remote.runner import RunOptions, build_runner  # noqa: E402
from remote.runner.clock import Clock  # noqa: E402
from remote.sim import serve  # noqa: E402
from remote.sim.model_server import ModelServer  # noqa: E402
from remote.sim.trace import TracePhone  # noqa: E402
from tests.support.data import data_path  # noqa: E402

DEFAULT_TRACES = data_path("traces")   # REMOTE_DATA_DIR, else shared/data beside the checkout


def plan_of(path: list[dict[str, Any]], recording: Any) -> dict[str, Any]:
    """The path as a model's plan; its final check: the last screen's app in front and a text that screen
    shows and the one before it does not (so a run that ends elsewhere cannot pass)."""
    steps = [{"step": i, "action": "tap", "target_ref": f"{s['label_kind']}:{s['label']}"} for i, s in enumerate(path, 1)]
    last, before = path[-1]["stop_state"], path[-1]["start_state"]
    check: dict[str, Any] = {"app": recording.states[last].package}
    telling = recording.telling_texts(last, before)
    if telling:
        check["text"] = telling[0]
    return {"analysis": {"current_screen": "recorded"}, "steps": steps, "success_criteria": "last state",
            "success_check": check, "potential_issues": []}


def replay(folder: Path, path: list[dict[str, Any]], model: ModelServer, dump_ms: int, waits: bool) -> dict[str, Any]:
    llm = LLMConfig.custom(api_key="sk-bench", base_url=model.url, model="bench-vl", timeout=5.0, max_retries=0)
    with serve(trace=str(folder), trace_start=path[0]["start_state"], uiautomator_delay_ms=dump_ms) as server:
        model.script("plan", plan_of(path, server.phone.recording))
        sleep = time.sleep if waits else (lambda _s: None)
        adb = ADBController(server.serial, port=server.port, sleep=sleep).connect()
        runner = build_runner(adb, llm=llm, options=RunOptions(runs_dir=None), clock=Clock(300, sleep=sleep))
        started = time.perf_counter()
        result = runner.run("replay a recorded path")
        wall = time.perf_counter() - started
        adb.close()
        state = server.phone.snapshot()
    return {"reached": state["trace_state"] == path[-1]["stop_state"], "ok": result.status is TaskStatus.SUCCESS,
            "calls": result.model_usage.calls, "steps": max(1, len(result.step_results)), "wall": wall,
            "unrecorded": state["unrecorded_inputs"], "error": _why(result),
            "ended": f"ended on {state['trace_state'][:8]}, path's last {path[-1]['stop_state'][:8]}"}


def _why(result: Any) -> str:
    failed = [sr for sr in result.step_results if sr.error_message]
    step = f"step {failed[0].step.step}: {failed[0].error_message}; " if failed else ""
    return step + (f"then {result.error_message}" if result.error_message else "")


def at_droidbots_points(folder: Path, path: list[dict[str, Any]]) -> bool:
    phone = TracePhone(trace=str(folder), trace_start=path[0]["start_state"])
    for step in path:
        (x1, y1), (x2, y2) = step["bounds"]
        phone.tap((x1 + x2) // 2, (y1 + y2) // 2)
    return phone.snapshot()["trace_state"] == path[-1]["stop_state"]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES, help="folder of DroidBot recordings")
    ap.add_argument("--dump-ms", type=int, default=0, help="time a uiautomator dump takes on the phone")
    ap.add_argument("--waits", action="store_true", help="keep the runner's waits after actions")
    args = ap.parse_args()
    folders = sorted(p for p in args.traces.iterdir() if (p / "paths.json").is_file()) if args.traces.is_dir() else []
    if not folders:
        print(f"skipped: no recording with a paths.json under {args.traces} (the data folder's traces: set REMOTE_DATA_DIR or --traces)")
        return 0
    print(f"{'recording':<26}{'paths':>6}{'reached':>8}{'succeeded':>10}{'calls':>6}{'s/step med':>11}"
          f"{'p95':>7}{'unrecorded':>11}{'at DroidBot pts':>16}")
    totals = {"paths": 0, "reached": 0, "ok": 0, "calls": 0, "direct": 0}
    all_steps: list[float] = []
    with ModelServer() as model:
        for folder in folders:
            paths = json.loads((folder / "paths.json").read_text(encoding="utf-8"))["paths"]
            rows = [replay(folder, p, model, args.dump_ms, args.waits) for p in paths]
            direct = sum(at_droidbots_points(folder, p) for p in paths)
            per_step = [r["wall"] / r["steps"] for r in rows] or [0.0]
            all_steps += per_step
            print(f"{folder.name:<26}{len(rows):>6}{sum(r['reached'] for r in rows):>8}{sum(r['ok'] for r in rows):>10}"
                  f"{sum(r['calls'] for r in rows):>6}{statistics.median(per_step):>11.2f}{p95(per_step):>7.2f}"
                  f"{sum(r['unrecorded'] for r in rows):>11}{direct:>13}/{len(paths)}")
            for i, r in enumerate(rows):
                if not (r["reached"] and r["ok"]):
                    print(f"    path {i}: reached={r['reached']} succeeded={r['ok']} {r['error'][:100] or r['ended']}")
            for key, value in (("paths", len(rows)), ("reached", sum(r["reached"] for r in rows)),
                               ("ok", sum(r["ok"] for r in rows)), ("calls", sum(r["calls"] for r in rows)),
                               ("direct", direct)):
                totals[key] += value
    print(f"{'all':<26}{totals['paths']:>6}{totals['reached']:>8}{totals['ok']:>10}{totals['calls']:>6}"
          f"{statistics.median(all_steps):>11.2f}{p95(all_steps):>7.2f}{'':>11}{totals['direct']:>13}/{totals['paths']}")
    print(f"reached: {totals['reached'] / totals['paths']:.0%} of paths; model calls per path: "
          f"{totals['calls'] / totals['paths']:.2f} (1 = the plan only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
