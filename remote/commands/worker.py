"""`remote worker --address ADDR`: this host joins a Ray cluster with its phones until Ctrl-C.

It runs ``ray start --address ADDR --block`` with one ``phone:SERIAL`` resource per phone
and the ``phone`` pool, then opens the host's room (the actor that leases the phones to
the tasks Ray places here). Ctrl-C or SIGTERM (or the node stopping) ends both.
"""

from __future__ import annotations

import argparse
import logging
import signal
import subprocess
import sys
from types import FrameType
from typing import Any

from remote.commands._device import phone_locks
from remote.config import Settings
from remote.core.device.adb_controller import ADBController
from remote.errors import BadInput, DeviceNotFound, ExitCode
from remote.fleet import ray_cluster
from remote.fleet.jobs import Phone

logger = logging.getLogger(__name__)

ROOM_CHECK_S = 5.0


def _phones(args: argparse.Namespace) -> list[Phone]:
    settings = Settings.from_env()
    host, port = args.adb_host or settings.adb_host, args.adb_port or settings.adb_port
    connected = ADBController.list_serials(host, port)
    serials = args.device or connected
    missing = [s for s in serials if s not in connected]
    if missing:
        raise DeviceNotFound(f"phone {missing[0]} is not connected (connected: {', '.join(connected) or 'none'})",
                             hint="check `python -m remote devices`")
    if not serials:
        raise DeviceNotFound(f"no phones on the adb server at {host}:{port}", hint="plug phones in first")
    return [Phone(s, host, port) for s in serials]


def _keep_room(node: subprocess.Popen[bytes], phones: list[Phone], node_id: str, room: Any) -> int:
    """Until the node stops: a room that died (its process killed) is opened again, or every task Ray
    places here would fail to find it. The room lives as long as its handle is held here."""
    held = [room]
    while True:
        try:
            return node.wait(ROOM_CHECK_S)
        except subprocess.TimeoutExpired:
            pass
        if not ray_cluster.room_answers(node_id):
            logger.warning("the room of this host's phones died: opening it again")
            held[:] = [ray_cluster.open_room(phones, node_id)]


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt   # a service manager's SIGTERM stops the worker as Ctrl-C does


def run(args: argparse.Namespace) -> int:
    phones = _phones(args)
    host, port = phones[0].host, phones[0].port
    with phone_locks([p.serial for p in phones], host, port):   # offered to the cluster: no other process
        return _offer(args, phones)


def _offer(args: argparse.Namespace, phones: list[Phone]) -> int:
    ray_cluster.connect(args.address, allow_no_auth=args.allow_unauthenticated_ray)
    taken = [p.serial for p in phones if ray_cluster.advertised(p.serial)]
    taken = ray_cluster.take_over(taken) if taken else []   # offers of a worker that is gone are taken over
    if taken:
        raise BadInput(f"phone {taken[0]} is already offered by another worker of the cluster",
                       hint="one worker per phone: stop the other one, or leave this phone out with --device")
    previous = signal.signal(signal.SIGTERM, _terminate)
    node = ray_cluster.start_node(args.address, phones, node_ip=args.node_ip_address, num_cpus=args.num_cpus)
    try:
        node_id = ray_cluster.node_with(phones, node)
        room = ray_cluster.open_room(phones, node_id)
        print(f"worker node {node_id[:12]} joined {args.address} with {len(phones)} phone(s): "
              f"{', '.join(p.serial for p in phones)}")
        print("Ctrl-C stops it (tasks running here are lost to the cluster).")
        sys.stdout.flush()
        code = _keep_room(node, phones, node_id, room)
        print(f"the Ray node stopped (status {code})", file=sys.stderr)
        return ExitCode.ENVIRONMENT
    except KeyboardInterrupt:
        print("stopping", file=sys.stderr)
        return ExitCode.OK
    finally:
        ray_cluster.shutdown()
        ray_cluster.stop_node(node)
        signal.signal(signal.SIGTERM, previous)
