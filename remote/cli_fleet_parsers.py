"""The fleet's commands: ``batch`` and ``schedule`` over this host's phones or a Ray cluster, ``worker`` and
``submit`` on a cluster (docs/fleet.md). ``remote.cli`` puts them together with the others (`remote.cli_parsers`).
"""

from __future__ import annotations

import argparse

from remote.cli_parsers import STRATEGIES, add_command, add_device_args
from remote.cli_values import non_negative_int, port, positive_float, positive_int, task_text


def task_options(p: argparse.ArgumentParser) -> None:
    """The options every fleet command shares with `run`: strategy, caps, --yes, --json, --runs-dir."""
    p.add_argument("--strategy", choices=STRATEGIES, default="opencv_first",
                   help="locator tiers: free tiers then the vision model; free tiers only; the model only")
    p.add_argument("--max-steps", type=positive_int, default=30, metavar="N", help="steps per task, replans included")
    p.add_argument("--max-seconds", type=positive_float, default=300.0, metavar="S", help="seconds per task")
    p.add_argument("--max-model-calls", type=non_negative_int, default=20, metavar="N",
                   help="model calls per task")
    p.add_argument("--max-tokens", type=non_negative_int, default=200_000, metavar="N", help="model tokens per task")
    p.add_argument("--yes", "-y", action="store_true",
                   help="allow sensitive steps without asking (nobody is asked in a batch: without it they are refused)")
    p.add_argument("--json", action="store_true", help="print the rows as one JSON object on stdout")
    p.add_argument("--runs-dir", metavar="DIR", default="runs", help="where run records and batch.json go")


def ray_auth_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-unauthenticated-ray", action="store_true",
                   help="go on with a Ray cluster that checks no token (RAY_AUTH_MODE=disabled): anyone who reaches "
                        "its ports runs code on its hosts; only on a network you trust")


def fleet_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "batch", "run a YAML list of tasks over the connected phones, or over a Ray cluster", """\
  remote batch tasks.yaml                            # every phone of the local adb server
  remote batch tasks.yaml --device sim --device sim  # two simulated phones
  remote batch tasks.yaml --address 10.0.0.5:6379    # the phones of a Ray cluster's workers

  tasks.yaml:  - task: 打开设置
                 device: any        # or a serial, or all
                 repeat: 3""", description="Run a YAML list of tasks (docs/fleet.md), one worker per phone, "
                 "never two tasks on one phone at once; a summary table and runs/batch-*/batch.json.")
    p.add_argument("file", help="batch YAML: a list of {task, device: SERIAL|any|all, repeat: N}")
    add_device_args(p, many=True)
    p.add_argument("--address", metavar="ADDR", default=None,
                   help="place the tasks on this Ray cluster (HEAD:6379) instead of this host's phones; "
                        "'local' starts a one-host cluster with this host's phones")
    ray_auth_arg(p)
    task_options(p)

    p = add_command(sub, "worker", "join a Ray cluster and offer this host's phones to it (until Ctrl-C)", """\
  remote worker --address 10.0.0.5:6379                  # every phone of the local adb server
  remote worker --address 10.0.0.5:6379 --device R58M123 --device R58M456""")
    p.add_argument("--address", required=True, metavar="ADDR", help="the Ray head's address (HOST:PORT)")
    p.add_argument("--device", "-s", metavar="SERIAL", action="append", default=None,
                   help="a phone to offer (repeat it); default: every phone the adb server sees")
    p.add_argument("--adb-host", metavar="HOST", default=None, help="adb server host (default 127.0.0.1)")
    p.add_argument("--adb-port", metavar="PORT", type=port, default=None, help="adb server port (default 5037)")
    p.add_argument("--node-ip-address", metavar="IP", default=None,
                   help="this host's address as the other hosts reach it (Ray's --node-ip-address)")
    p.add_argument("--num-cpus", type=non_negative_int, default=None, metavar="N",
                   help="CPUs this node offers to Ray (phone tasks need none; default: Ray's count)")
    ray_auth_arg(p)

    p = add_command(sub, "submit", "run one task on a Ray cluster: on a given phone, or any free one", """\
  remote submit "打开设置" --device any --address 10.0.0.5:6379
  remote submit "给张三发微信消息说你好" --device R58M123 --address 10.0.0.5:6379 --json""")
    p.add_argument("task", type=task_text, help="what to do, in one sentence")
    p.add_argument("--device", "-s", metavar="SERIAL", default="any", help="a phone's serial, or 'any'")
    p.add_argument("--address", required=True, metavar="ADDR", help="the Ray head's address (HOST:PORT)")
    ray_auth_arg(p)
    task_options(p)

    p = add_command(sub, "schedule", "run tasks on cron expressions until Ctrl-C; missed runs are reported", """\
  remote schedule daily.yaml
  remote schedule daily.yaml --address 10.0.0.5:6379

  daily.yaml:  - cron: "0 8 * * *"     # minute hour day month weekday, local time
                 task: 打开设置
                 device: all""")
    p.add_argument("file", help="schedule YAML: a list of {cron, task, device: SERIAL|any|all}")
    add_device_args(p, many=True)
    p.add_argument("--address", metavar="ADDR", default=None, help="submit to this Ray cluster (HEAD:6379)")
    ray_auth_arg(p)
    task_options(p)
