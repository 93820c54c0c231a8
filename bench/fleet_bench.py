"""Many phones: 24 template tasks on 1, 2 and 4 simulated phones, on this host and through Ray.

    python bench/fleet_bench.py [--tasks 24] [--counts 1,2,4] [--no-ray]

The phones are a simulated farm served by a separate process (`remote sim --count 4`,
as real phones are separate devices), with the scenario's default UI-dump delay
(300 ms), so the tasks are dominated by waits (the templates' waits after launching
an app, the dumps), as on real phones. For each phone count it runs the batch
locally (`LocalFleet`, one thread per phone) and then on a fresh one-host Ray cluster
(`RayFleet`), each after a warm-up of one task per phone, and prints tasks per
minute, the speed-up over one phone (target >= 3x at 4 phones), and Ray's overhead
per task: at one phone (tasks one after another), the wall time per task outside the
run itself (wall time minus the runs' own seconds: connecting, the record, placement),
through Ray minus locally.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/true")  # never start a real adb server

from remote.core.device.adb_controller import ADBController  # noqa: E402
from remote.fleet import ray_cluster  # noqa: E402
from remote.fleet.jobs import Job, JobResult, Phone, RunSettings  # noqa: E402
from remote.fleet.local import LocalFleet  # noqa: E402
from remote.fleet.ray_fleet import RayFleet  # noqa: E402
from remote.runner import RunOptions  # noqa: E402

TASKS = ["打开设置", "打开浏览器", "打开微信"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_farm(count: int) -> tuple[subprocess.Popen[bytes], list[Phone]]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "remote", "sim", "--count", str(count), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            serials = ADBController.list_serials("127.0.0.1", port)
            if len(serials) == count:
                return proc, [Phone(s, "127.0.0.1", port) for s in serials]
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the simulated farm did not start")


def jobs(n: int) -> list[Job]:
    return [Job(task=TASKS[i % len(TASKS)], index=i) for i in range(n)]


def timed(run: object, batch: list[Job]) -> tuple[float, list[JobResult]]:
    started = time.perf_counter()
    results = run.run(batch)  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - started
    failed = [r for r in results if not r.ok]
    if failed:
        raise SystemExit(f"{len(failed)} task(s) failed, e.g. {failed[0].status}: {failed[0].error}")
    return elapsed, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--counts", default="1,2,4")
    parser.add_argument("--no-ray", action="store_true", help="only the local pool")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    proc, all_phones = start_farm(max(counts))
    rows: dict[tuple[str, int], float] = {}
    outside: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory() as runs:
            settings = RunSettings(options=RunOptions(runs_dir=Path(runs)))
            for count in counts:
                phones = all_phones[:count]
                local = LocalFleet(phones, settings)
                timed(local, jobs(count))                          # warm-up
                rows[("local", count)], done = timed(local, jobs(args.tasks))
                if count == 1:
                    outside["local"] = (rows[("local", 1)] - sum(r.seconds for r in done)) / args.tasks
                print(f"local {count} phone(s): {args.tasks} tasks in {rows[('local', count)]:.1f} s", flush=True)
                if args.no_ray:
                    continue
                cluster = ray_cluster.start_local(phones, num_cpus=1)
                try:
                    fleet = RayFleet(settings)
                    timed(fleet, jobs(count))                      # warm-up: Ray's worker processes start
                    rows[("ray", count)], done = timed(fleet, jobs(args.tasks))
                    if count == 1:
                        outside["ray"] = (rows[("ray", 1)] - sum(r.seconds for r in done)) / args.tasks
                finally:
                    cluster.shutdown()
                print(f"ray   {count} phone(s): {args.tasks} tasks in {rows[('ray', count)]:.1f} s", flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"\n{args.tasks} template tasks ({', '.join(TASKS)}), simulated phones with a 300 ms UI dump, "
          f"{os.cpu_count()} cores")
    print(f"{'placement':10} {'phones':>6} {'seconds':>8} {'tasks/min':>10} {'speed-up':>9}")
    for (where, count), seconds in rows.items():
        speed = rows[(where, counts[0])] / seconds
        print(f"{where:10} {count:6d} {seconds:8.1f} {args.tasks * 60 / seconds:10.1f} {speed:8.2f}x")
    if "ray" in outside and "local" in outside:
        print(f"per task outside the run, one phone: local {outside['local'] * 1000:.0f} ms, "
              f"Ray {outside['ray'] * 1000:.0f} ms: Ray's overhead {1000 * (outside['ray'] - outside['local']):+.0f} ms "
              "(placement, lease, packing and unpacking the record)")
    best = rows[("local", counts[-1])]
    print(f"target: >= 3x at {counts[-1]} phones (local): {rows[('local', counts[0])] / best:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
