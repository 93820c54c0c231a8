"""`remote submit "TASK" --device SERIAL|any --address ADDR`: one task placed by Ray on the phone (or any free
phone) of the cluster; the run's summary and its record come back here."""

from __future__ import annotations

import argparse
import json

from remote.commands.batch import FleetView, print_table, run_jobs
from remote.fleet import ray_cluster
from remote.fleet.jobs import Job


def run(args: argparse.Namespace) -> int:
    ray_cluster.connect(args.address, allow_no_auth=args.allow_unauthenticated_ray)
    view = FleetView(steps=False)
    (result,) = run_jobs([Job(task=args.task, device=args.device)], args, None, view)
    if args.json:
        print(json.dumps(result.to_row(), ensure_ascii=False))
    else:
        print_table([result])
    return result.exit_code
