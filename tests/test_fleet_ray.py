"""Many phones through Ray (issue 18): a real Ray cluster on loopback (started here, shut down after) whose
node offers three simulated phones as ``phone:SERIAL`` resources and a ``phone`` pool. Twelve tasks for any
phone, a pinned task and `remote submit`, and last a cable pulled mid-batch."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

from remote.cli import main
from remote.errors import ExitCode
from remote.fleet import ray_auth, ray_cluster
from remote.fleet.jobs import Job, RunSettings
from remote.fleet.ray_fleet import RayFleet
from remote.runner import RunOptions
from remote.sim import SimServer
from tests.test_fleet import FAST, ROOT, TimedPhone, check_one_task_at_a_time, farm, phones_of, twelve_jobs

# One worker runs this whole module, in order (pytest-xdist's --dist loadfile), and first (tests/conftest.py):
# its tests share the module's cluster (the cable-pulled test comes last), and it is the longest chain of waits.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Any, SimServer]]:
    # A short folder: the nodes that join put their sockets under it, and an AF_UNIX path is at most 107 bytes
    # (pytest's own folders, /tmp/pytest-of-USER/pytest-N/popen-gwN/..., leave too few for Ray's session names).
    temp_dir = tempfile.mkdtemp(prefix="ray-")
    server = farm(3)
    local = ray_cluster.start_local(phones_of(server), num_cpus=1, temp_dir=temp_dir,
                                    joinable_at="127.0.0.2")   # a head the other "hosts" of this machine join
    try:
        yield local, server
    finally:
        local.shutdown()
        server.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def offsets(server: SimServer) -> dict[str, int]:
    return {p.serial: len(p.commands) for p in server.phones}


def settings(tmp_path: Path) -> RunSettings:
    return RunSettings(options=RunOptions(runs_dir=tmp_path / "runs"))


def test_twelve_tasks_for_any_phone_placed_by_ray_one_at_a_time(cluster, tmp_path):
    local, server = cluster
    assert ray_cluster.advertised_serials() == ["farm-1", "farm-2", "farm-3"]
    since = offsets(server)
    results = RayFleet(settings(tmp_path)).run(twelve_jobs())
    assert [r.status for r in results] == ["success"] * 12, [r.error for r in results]
    assert len({r.phone for r in results}) >= 2            # Ray spread them over the phones
    for r in results:   # the records came back into the submitter's runs folder
        assert Path(r.record).parent == tmp_path / "runs" and Path(r.record, "run.json").exists()
    check_one_task_at_a_time(server, results, since)


def test_a_pinned_task_runs_on_its_phone_and_submit_brings_its_record_back(cluster, tmp_path, capsys):
    local, server = cluster
    since = offsets(server)
    results = RayFleet(settings(tmp_path)).run([Job("打开微信", device="farm-3", index=0),
                                               Job("打开设置", device="farm-7", index=1)])
    assert (results[0].phone, results[0].status) == ("farm-3", "success")
    assert (results[1].status, results[1].error) == ("not_run", "no worker of the cluster has phone farm-7")
    assert server.phones[2].snapshot()["foreground"]["package"] == "com.tencent.mm"
    check_one_task_at_a_time(server, results[:1], since)

    code = main(["submit", "打开设置", "--device", "farm-1", "--address", local.address, "--json",
                 "--runs-dir", str(tmp_path / "submitted")])
    row = json.loads(capsys.readouterr().out)
    assert code == 0 and (row["phone"], row["status"]) == ("farm-1", "success")
    assert Path(row["record"]).parent == tmp_path / "submitted" and Path(row["record"], "report.html").exists()
    assert server.phones[0].snapshot()["foreground"]["package"] == "com.android.settings"


def test_a_second_host_joins_with_remote_worker_and_its_phone_takes_tasks(cluster, tmp_path):
    """`remote worker` as a user starts it (a subprocess: a second Ray node on this machine, over loopback)."""
    local, _ = cluster
    other = SimServer(phones=[TimedPhone(FAST, serial="far-1")]).start()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_AUTH_MODE": "token"}
    worker = subprocess.Popen([sys.executable, "-m", "remote", "worker", "--address", local.address,
                               "--adb-port", str(other.port), "--node-ip-address", "127.0.0.2", "--num-cpus", "0"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert worker.stdout is not None
        joined = worker.stdout.readline()
        assert "joined" in joined and "far-1" in joined, joined
        assert "far-1" in ray_cluster.advertised_serials()
        (result,) = RayFleet(settings(tmp_path)).run([Job("打开设置", device="far-1")])
        assert (result.phone, result.status) == ("far-1", "success"), result.error
        assert any("com.android.settings" in c for c in other.phones[0].commands)   # it ran over there
        worker.send_signal(signal.SIGINT)
        assert worker.wait(60) == 0
        deadline = time.monotonic() + 30
        while ray_cluster.advertised("far-1") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not ray_cluster.advertised("far-1")          # the host left: its phone with it
    finally:
        if worker.poll() is None:
            worker.terminate()                                 # the worker stops its Ray node on SIGTERM too
            worker.wait(60)
        other.close()


# ---------------------------------------------------------------------------- workers that die, stale offers
def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc: Ray's own session and process groups included)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
    found, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in found} - found
        found |= more
        grew = bool(more)
    return found - {pid}


def alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] != "Z":
            out.add(pid)
    return out


def start_worker(address: str, adb_port: int, log: Path) -> subprocess.Popen[str]:
    """`remote worker` as a user starts it; returns once it says it joined (its stderr goes to ``log``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(log, "a", encoding="utf-8") as err:
        worker = subprocess.Popen([sys.executable, "-m", "remote", "worker", "--address", address, "--adb-port",
                                   str(adb_port), "--node-ip-address", "127.0.0.2", "--num-cpus", "0"],
                                  env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    assert worker.stdout is not None
    joined = worker.stdout.readline()
    assert "joined" in joined, joined + log.read_text(encoding="utf-8")
    return worker


def wait_until(check: Any, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.25)
    return bool(check())


def test_a_stale_offer_is_one_clean_line_then_taken_over_and_a_killed_worker_takes_its_node_along(cluster, tmp_path,
                                                                                                    capsys):
    """A node offering a phone with no room (its worker gone, as a kill -9 left it before this fix): a task
    for that phone fails with one clean line; the next worker takes the phone over; killed with -9, that
    worker's Ray processes die with it and the phone leaves the cluster (a restart would not be refused)."""
    local, _ = cluster
    other = SimServer(phones=[TimedPhone(FAST, serial="stale-1")]).start()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    stale = subprocess.Popen([sys.executable, "-m", "ray.scripts.scripts", "start", "--address", local.address,
                              "--block", "--disable-usage-stats", "--node-ip-address", "127.0.0.2", "--num-cpus", "0",
                              "--resources", json.dumps({"phone:stale-1": 1, "phone": 1})], env=env,
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        assert wait_until(lambda: ray_cluster.advertised("stale-1"))
        code = main(["submit", "打开设置", "--device", "stale-1", "--address", local.address, "--runs-dir",
                     str(tmp_path / "runs")])
        out = capsys.readouterr().out
        (row,) = [line for line in out.splitlines() if "打开设置" in line]
        assert code == ExitCode.ENVIRONMENT and "NOT_RUN" in row and "has no room" in row, out
        assert "\x1b" not in out and "Traceback" not in out and 'File "' not in out and len(out.splitlines()) <= 8
        assert "#1: the host Ray chose has no room: its `remote worker` is gone (restart it there)" in out   # whole
        worker = start_worker(local.address, other.port, tmp_path / "worker.log")
        assert "taking them over" in (tmp_path / "worker.log").read_text(encoding="utf-8")
        (result,) = RayFleet(settings(tmp_path)).run([Job("打开设置", device="stale-1")])
        assert (result.phone, result.status) == ("stale-1", "success"), result.error
        assert any("com.android.settings" in c for c in other.phones[0].commands)
        ray_processes = descendants(worker.pid)      # ray start, raylet, its agents, the room's process
        assert len(ray_processes) >= 3
        worker.kill()
        worker.wait(10)
        assert wait_until(lambda: not alive(ray_processes) and not ray_cluster.advertised("stale-1"))
    finally:
        if worker is not None and worker.poll() is None:
            worker.terminate()
            worker.wait(60)
        os.killpg(stale.pid, signal.SIGKILL)    # drained, its raylet is gone; `ray start --block` itself lingers
        stale.wait(10)
        other.close()


# ---------------------------------------------------------------------------- what listens where; authentication
def listening(pids: set[int]) -> list[tuple[str, str]]:
    """(address, process name) of every TCP socket the processes ``pids`` listen on (`ss`)."""
    found: list[tuple[str, str]] = []
    for line in subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout.splitlines():
        if {int(pid) for pid in re.findall(r"pid=(\d+)", line)} & pids:
            found.append((line.split()[3].rsplit(":", 1)[0], re.findall(r'\(\("([^"]+)"', line)[0]))
    return found


def test_a_head_others_join_requires_a_token(cluster):
    local, _ = cluster
    assert ray_auth.probe(local.address) == "TOKEN"               # a client without the token is refused


def test_an_unauthenticated_cluster_is_refused_and_a_batch_whose_cluster_dies_still_writes_batch_json(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_AUTH_MODE": "disabled"}
    batch = tmp_path / "b.yaml"
    batch.write_text("- task: 打开设置\n  repeat: 30\n", encoding="utf-8")
    (tmp_path / "slow.yaml").write_text("uiautomator_delay_ms: 1000\n", encoding="utf-8")
    command = [sys.executable, "-m", "remote", "batch", str(batch), "--address", "local", "--device", "sim",
               "--scenario", str(tmp_path / "slow.yaml"), "--runs-dir", str(tmp_path / "runs")]
    refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == ExitCode.ENVIRONMENT, refused.stderr
    assert "RAY_AUTH_MODE=disabled would start this host's Ray cluster without authentication" in refused.stderr
    assert "--allow-unauthenticated-ray" in refused.stderr and not (tmp_path / "runs").exists()

    proc = subprocess.Popen(command + ["--allow-unauthenticated-ray"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None and proc.stdout is not None
    try:
        seen = ""
        while not (found := re.search(r"one-host cluster (127\.0\.0\.1:\d+)", seen)):
            line = proc.stderr.readline()
            assert line, seen
            seen += line
        assert "can run code on its hosts" in seen and "Going on because of --allow-unauthenticated-ray" in seen
        if shutil.which("ss") is not None:      # what listens: loopback alone (nothing on *, 0.0.0.0, [::])
            listeners = listening(descendants(proc.pid) | {proc.pid})
            assert any(name == "gcs_server" for _, name in listeners), listeners
            assert all(where.startswith(("127.", "[::1]", "[::ffff:127.")) for where, _ in listeners), listeners
        # Joining it from elsewhere is refused: it answers a client without a token.
        joined = subprocess.run([sys.executable, "-m", "remote", "submit", "打开设置", "--address", found.group(1)],
                                env={**env, "RAY_AUTH_MODE": "token"}, capture_output=True, text=True, timeout=120)
        assert joined.returncode == ExitCode.ENVIRONMENT and "answers clients without a token" in joined.stderr
        while "SUCCESS" not in (line := proc.stderr.readline()):
            assert line, seen
        gcs = [pid for pid in descendants(proc.pid) if Path(f"/proc/{pid}/comm").read_text().strip() == "gcs_server"]
        os.kill(gcs[0], signal.SIGKILL)                              # the cluster's head goes away mid-batch
        out = proc.stdout.read()
        proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    (path,) = (tmp_path / "runs").glob("batch-*/batch.json")
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    assert len(rows) == 30 and rows[0]["status"] == "success"
    assert any(r["status"] == "not_run" and "stopped answering" in r["error"] for r in rows), rows
    assert "stopped answering" in out and f"batch: {path}" in out


def test_a_cable_pulled_mid_batch_on_ray_retries_on_another_phone(cluster, tmp_path, capsys):
    """Last in this module: the pulled phone stays out of the pool."""
    local, server = cluster
    pulled = server.phones[1]
    pulled.scenario = pulled.scenario.replace(drop_after_commands=len(pulled.commands) + 3)   # mid-task
    path = tmp_path / "b.yaml"
    path.write_text("- task: 打开设置\n  repeat: 6\n", encoding="utf-8")
    code = main(["batch", str(path), "--address", local.address, "--runs-dir", str(tmp_path / "runs")])
    out = capsys.readouterr().out
    assert code == 0                               # every task succeeded in the end
    (batch,) = (tmp_path / "runs").glob("batch-*/batch.json")
    rows = json.loads(batch.read_text(encoding="utf-8"))["rows"]
    assert [r["status"] for r in rows] == ["success"] * 6
    retried = [r for r in rows if r["retried_from"]]
    assert len(retried) == 1 and retried[0]["phone"] != "farm-2" and retried[0]["retried_from"] == "farm-2"
    assert retried[0]["earlier_attempts"][0]["failure"] == "device"
    assert Path(retried[0]["earlier_attempts"][0]["record"], "run.json").exists()
    assert "retried: farm-2 dropped" in out                                  # the summary says so
    # A task pinned to the pulled phone fails with its record (brought back), exit status 2.
    code = main(["submit", "打开浏览器", "--device", "farm-2", "--address", local.address, "--json",
                 "--runs-dir", str(tmp_path / "pinned")])
    row = json.loads(capsys.readouterr().out)
    assert code == ExitCode.ENVIRONMENT and (row["phone"], row["failure"]) == ("farm-2", "device")
    assert Path(row["record"], "run.json").exists()
    # Taken out of the pool in Ray's own accounting: one unit of `phone` is held for the pulled phone.
    deadline = time.monotonic() + 30
    while ray.available_resources().get("phone", 0) != 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("phone", 0) == 2
