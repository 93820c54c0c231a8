"""`remote run` as a person runs it: from the command to its exit, on a phone with a real phone's costs.

    python bench/cli_bench.py                         # real-usb, the headline task, 5 runs of each path
    python bench/cli_bench.py --profile real-wifi --repeat 3

Each run starts `remote sim --scenario` (the profile's costs, `remote.sim.realism.PROFILES`) as a process of
its own, then times `python -m remote run --adb-port PORT --device remote-sim --json TASK` in a new process:
its imports, the phone's opening, the run, the record and the exit, as a person waits for them. The tree server
(`--tree auto`) and `uiautomator dump` (`--tree dump`) alternate, on the same kind of fresh phone (u2.jar not on
it yet: each server run pushes it). It prints, per path, the median command-to-exit, the run's own time (its
summary's ``seconds``) and the rest (the process's start and end), and the ratio of the two paths.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADLINE = "给张三发微信消息说你好"


def one_run(task: str, profile: str, tree: str, workdir: Path) -> tuple[float, float, str]:
    """(command to exit in s, the run's own seconds (its summary's), its status) on a fresh simulated phone."""
    scenario = workdir / "phone.yaml"
    scenario.write_text(f"profile: {profile}\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REMOTE_TREE": tree}
    # `remote sim` takes 5037, or the next free port when that is taken, and prints the one it took
    sim = subprocess.Popen([sys.executable, "-m", "remote", "sim", "--scenario", str(scenario)],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert sim.stdout is not None
        while not (found := re.search(r" on 127\.0\.0\.1:(\d+)", line := sim.stdout.readline())):
            if not line:
                raise RuntimeError("remote sim did not start")
        port = found.group(1)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "remote", "run", "--adb-port", port, "--device",
                               "remote-sim", "--json", "--runs-dir", str(workdir / "runs"), task],
                              env=env, capture_output=True, text=True, timeout=300)
        wall = time.perf_counter() - started
    finally:
        sim.terminate()
        sim.wait(30)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return wall, float(out["seconds"]), str(out["status"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", choices=["real-usb", "real-wifi"], default="real-usb")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--task", default=HEADLINE)
    args = ap.parse_args()
    rows: dict[str, list[tuple[float, float, str]]] = {"auto": [], "dump": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for tree in rows:                    # interleaved: both paths see the machine as it is then
                work = Path(tmp) / f"{tree}{i}"
                work.mkdir()
                rows[tree].append(one_run(args.task, args.profile, tree, work))
    print(f"`remote run {args.task}` on `remote sim --scenario` ({args.profile}), {args.repeat} runs of each path")
    print(f"{'path':18} {'ok':>5} {'command to exit s':>18} {'the run s':>10} {'start and end s':>16}")
    med = {}
    for tree, runs in rows.items():
        walls, totals = [w for w, _, _ in runs], [t for _, t, _ in runs]
        ok = sum(status == "success" for *_, status in runs)
        med[tree] = statistics.median(walls)
        rest = statistics.median(w - t for w, t, _ in runs)
        name = "tree server" if tree == "auto" else "uiautomator dump"
        print(f"{name:18} {ok:>2}/{len(runs):<2} {med[tree]:18.2f} {statistics.median(totals):10.2f} {rest:16.2f}")
    print(f"command to exit, dump / server: {med['dump'] / med['auto']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
