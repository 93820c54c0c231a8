"""Many phones through Ray (issue 18): a real Ray cluster on loopback (started here, shut down after) whose
node offers three simulated phones as ``phone:SERIAL`` resources and a ``phone`` pool. Twelve tasks for any
phone, a pinned task and `remote submit`, and last a cable pulled mid-batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

from remote.cli import main
from remote.errors import ExitCode
from remote.fleet import ray_cluster
from remote.fleet.jobs import Job, RunSettings
from remote.fleet.ray_fleet import RayFleet
from remote.runner import RunOptions
from remote.sim import SimServer
from tests.test_fleet import FAST, ROOT, TimedPhone, check_one_task_at_a_time, farm, phones_of, twelve_jobs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, SimServer]]:
    server = farm(3)
    local = ray_cluster.start_local(phones_of(server), num_cpus=1,
                                    temp_dir=str(tmp_path_factory.mktemp("ray")))
    try:
        yield local, server
    finally:
        local.shutdown()
        server.close()


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
