"""A Ray cluster of phone hosts: resources per phone, one room per host, joining and connecting.

Every host with phones runs ``remote worker --address HEAD:6379``: a Ray node that
advertises ``phone:SERIAL`` (1) for each attached phone and ``phone`` (one unit per
phone: the pool), and a room actor (``remote-room-<node id>``, pinned to that node)
that leases the host's phones to the tasks Ray places there (`remote.fleet.room`).

Nothing here reaches the network by itself: usage statistics are off, and
:func:`start_local` starts a one-host cluster in Ray's one-host mode, where its
node is 127.0.0.1 and all of Ray's servers listen on loopback alone (and it
requires token authentication anyway, `remote.fleet.ray_auth`). A cluster of
several hosts listens where its hosts reach each other: the token keeps others out.

A worker's Ray node dies with it (the ``ray start`` process gets SIGTERM when the
worker dies, even by ``kill -9``). A node whose worker is gone anyway (its room is
missing: an older worker, a node started by hand) still offers its phones; the
next worker for those phones takes them over (`take_over`: that node is drained).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from remote.fleet import ray_missing

try:   # the `fleet` extra: a clear error, not a traceback, where it is missing
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ModuleNotFoundError as exc:
    raise ray_missing(exc) from exc

from remote.errors import BadInput, ConfigError, DeviceError
from remote.fleet import ray_auth
from remote.fleet.jobs import Phone
from remote.fleet.room import Room

logger = logging.getLogger(__name__)

NAMESPACE = "remote"
POOL = "phone"
ROOM_PREFIX = "remote-room-"
PR_SET_PDEATHSIG = 1
# Ray's switch for a one-host node (`ray._private.ray_constants`, read by Ray's own processes at start): off,
# the node's address is 127.0.0.1 and Ray's servers bind to loopback only (its gRPC servers listen on 127.0.0.1
# exactly when the node's address is 127.0.0.1); on (Linux's default), 127.0.0.1 is replaced by the host's
# outward address and the servers listen on every interface.
ONE_HOST_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
NODE_WAIT_S = 60.0
ROOM_GRACE_S = 20.0     # a node younger than this may still be opening its room


def phone_resource(serial: str) -> str:
    return f"phone:{serial}"


def host_resources(phones: list[Phone]) -> dict[str, float]:
    """``{"phone:A": 1, "phone:B": 1, "phone": 2}``: each phone, and the host's pool."""
    out: dict[str, float] = {phone_resource(p.serial): 1.0 for p in phones}
    out[POOL] = float(len(phones))
    return out


def keep_workers(phones: list[Phone]) -> int:
    """Idle Ray workers a host keeps (Ray's ``num_workers_soft_limit``, by default its CPU count): one per
    phone, so a phone's next task does not wait for a new worker process (seconds each) after a pause."""
    return max(os.cpu_count() or 1, len(phones) + 1)


def _quiet_env() -> None:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")   # no usage report leaves the machine


def _answers(address: str, timeout: float = 3.0) -> bool:
    """Does something accept a TCP connection at ``HOST:PORT``? (Ray's own connect retries for minutes.)"""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def connect(address: str, *, allow_no_auth: bool = False) -> None:
    """Join the cluster at ``address`` as a driver (a no-op when this process already is one); a cluster that
    checks no token is refused unless ``allow_no_auth`` (`remote.fleet.ray_auth`)."""
    if ray.is_initialized():
        return
    if "://" not in address and not _answers(address):
        raise DeviceError(f"no Ray cluster answers at {address}",
                          hint="start its head with `ray start --head --port 6379` (docs/fleet.md) and give "
                               "--address HOST:PORT")
    _quiet_env()
    ray_auth.for_cluster(address, allow_no_auth)
    try:
        # A driver of this host's one-host cluster joins it in the same mode (a multi-host Ray would turn
        # 127.0.0.1 into the host's outward address, where a one-host cluster does not listen).
        with _one_host() if _on_loopback_one(address) else contextlib.nullcontext():
            ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, logging_level=logging.WARNING,
                     configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise DeviceError(f"cannot join the Ray cluster at {address}: {exc}",
                          hint="start its head with `ray start --head --port 6379` and check the address; with "
                               "token authentication set RAY_AUTH_MODE=token here too, with the cluster's token in "
                               "~/.ray/auth_token or RAY_AUTH_TOKEN (docs/fleet.md)") from exc


@dataclass
class LocalCluster:
    """A one-host cluster started by this process; keep it (its room lives as long as the handle)."""

    address: str
    room: Any

    def shutdown(self) -> None:
        self.room = None
        shutdown()


def start_local(phones: list[Phone], *, num_cpus: int = 1, temp_dir: str | None = None,
                allow_no_auth: bool = False, joinable_at: str | None = None) -> LocalCluster:
    """A Ray cluster in this process, with token authentication, serving ``phones``: one host, every server
    on loopback alone; or, with ``joinable_at``, a head other hosts join, its node at that address (Ray's
    multi-host mode: its servers listen on every interface, guarded by the token). Several hosts are better
    served by ``ray start --head`` (docs/fleet.md); tests use ``joinable_at`` for hosts on one machine."""
    _quiet_env()
    if ray.is_initialized():
        raise ConfigError("a Ray cluster is already running in this process")
    ray_auth.for_local_cluster(allow_no_auth)
    with _one_host() if joinable_at is None else contextlib.nullcontext():
        ray.init(num_cpus=num_cpus, resources=host_resources(phones), include_dashboard=False,
                 _system_config={"num_workers_soft_limit": keep_workers(phones)}, _node_ip_address=joinable_at,
                 namespace=NAMESPACE, log_to_driver=False, logging_level=logging.WARNING, configure_logging=False,
                 _temp_dir=temp_dir or tempfile.mkdtemp(prefix="remote-ray-"))
    room = open_room(phones, ray.get_runtime_context().get_node_id())
    return LocalCluster(str(ray.get_runtime_context().gcs_address), room)


def _on_loopback_one(address: str) -> bool:
    """Is ``address`` this host's 127.0.0.1 / localhost (where a one-host cluster listens)?"""
    return address.rpartition(":")[0].strip("[]") in ("127.0.0.1", "localhost", "::1")


@contextlib.contextmanager
def _one_host() -> Iterator[None]:
    """Ray's one-host mode while a local cluster starts: its node on 127.0.0.1, every server of it (GCS,
    raylet, workers, agents) listening on loopback alone. The processes Ray starts keep it (they inherit the
    environment); this process gets its switch back once its node exists (a later ``--address`` cluster of
    several hosts must not be told it is alone)."""
    constants = ray._private.ray_constants
    before_env, before_flag = os.environ.get(ONE_HOST_SWITCH), constants.ENABLE_RAY_CLUSTER
    os.environ[ONE_HOST_SWITCH] = "0"
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = before_flag
        if before_env is None:
            os.environ.pop(ONE_HOST_SWITCH, None)
        else:
            os.environ[ONE_HOST_SWITCH] = before_env


def shutdown() -> None:
    if ray.is_initialized():
        ray.shutdown()


@ray.remote(num_cpus=0)
class PoolHold:
    """Holds one pool unit of a host whose phone went away, so Ray places no more tasks for its share."""

    def ping(self) -> bool:
        return True


@ray.remote(num_cpus=0, max_concurrency=64)  # type: ignore[call-overload]  # Ray's stubs miss actor options
class RoomActor:
    """A host's `Room` as a Ray actor, pinned to the host's node."""

    def __init__(self, phones: list[Phone], node_id: str) -> None:
        self.room = Room(phones)
        self.node_id = node_id
        self.holds: list[Any] = []

    def lease(self, serial: str | None, timeout: float) -> Phone | None:
        return self.room.lease(serial, timeout)

    def release(self, serial: str, gone: bool) -> None:
        if self.room.release(serial, gone):
            logger.warning("phone %s disconnected: taken out of the pool", serial)
            strategy = NodeAffinitySchedulingStrategy(self.node_id, soft=False)
            hold = PoolHold.options(resources={POOL: 1}, scheduling_strategy=strategy)  # type: ignore[attr-defined]
            self.holds.append(hold.remote())

    def state(self) -> dict[str, list[str]]:
        return self.room.state()


def open_room(phones: list[Phone], node_id: str) -> Any:
    """Create the room actor of node ``node_id``; it lives as long as the returned handle is kept."""
    strategy = NodeAffinitySchedulingStrategy(node_id, soft=False)
    room = RoomActor.options(name=ROOM_PREFIX + node_id, namespace=NAMESPACE,  # type: ignore[attr-defined]
                             scheduling_strategy=strategy).remote(phones, node_id)
    ray.get(room.state.remote())   # wait until it answers
    return room


def room_here() -> Any:
    """The room of the node this code runs on (inside a task Ray placed)."""
    return ray.get_actor(ROOM_PREFIX + ray.get_runtime_context().get_node_id(), namespace=NAMESPACE)


def _resources() -> dict[str, float]:
    return dict(ray.cluster_resources())  # type: ignore[no-untyped-call]


def _nodes() -> list[dict[str, Any]]:
    return list(ray.nodes())  # type: ignore[no-untyped-call]


def advertised(serial: str | None = None) -> bool:
    """Does some live node advertise this phone (or, with None, any phone at all)?"""
    return _resources().get(phone_resource(serial) if serial else POOL, 0) > 0


def advertised_serials() -> list[str]:
    """The phones the cluster's live nodes advertise (``phone:SERIAL`` resources), sorted."""
    prefix = phone_resource("")
    return sorted(k[len(prefix):] for k, v in _resources().items() if k.startswith(prefix) and v > 0)


def start_node(address: str, phones: list[Phone], *, node_ip: str | None = None,
               num_cpus: int | None = None) -> subprocess.Popen[bytes]:
    """``ray start --address ADDRESS --resources {...} --block``: this host joins with its phones."""
    args = [sys.executable, "-m", "ray.scripts.scripts", "start", "--address", address, "--block",
            "--disable-usage-stats", "--resources", json.dumps(host_resources(phones))]
    if node_ip:
        args += ["--node-ip-address", node_ip]
    if num_cpus is not None:
        args += ["--num-cpus", str(num_cpus)]
    # Its own process group, so stopping it reaches the raylet and its helpers too (`stop_node`);
    # Ray's messages go to our stderr, leaving stdout to the command. It dies with this process
    # (`_die_with_parent`); its raylet and helpers die with it (`ray start --block` shares their fate).
    env = {**os.environ, "RAY_num_workers_soft_limit": str(keep_workers(phones)), "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=2, start_new_session=True, env=env,
                            preexec_fn=_die_with_parent())


def _die_with_parent() -> Callable[[], None] | None:
    """For ``preexec_fn``: the child gets SIGTERM when this process dies, however it dies (Linux's
    PR_SET_PDEATHSIG); None where that does not exist (then a ``kill -9`` of the worker leaves its node)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:    # the parent died before that: nobody would send the signal
            os.kill(os.getpid(), signal.SIGTERM)
    return preexec


def stop_node(node: subprocess.Popen[bytes], wait_s: float = 30.0) -> None:
    """Stop a node started by `start_node`: SIGTERM to its process group, SIGKILL if it lingers."""
    if node.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(node.pid, sig)
        except ProcessLookupError:
            return
        try:
            node.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            logger.warning("the Ray node did not stop within %g s: killing it", wait_s)


def node_with(phones: list[Phone], process: subprocess.Popen[bytes] | None = None,
              wait_s: float = NODE_WAIT_S) -> str:
    """The id of the live node advertising all of ``phones`` (waits for a joining node to appear)."""
    wanted = [phone_resource(p.serial) for p in phones]
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        for node in _nodes():
            if node.get("Alive") and all(w in node.get("Resources", {}) for w in wanted):
                return str(node["NodeID"])
        if process is not None and process.poll() is not None:
            raise DeviceError(f"`ray start` exited with status {process.returncode} before the node joined",
                              hint="see its messages above; check --address and that the head is running")
        time.sleep(0.25)
    raise DeviceError(f"no node with phones {', '.join(p.serial for p in phones)} joined within {wait_s:g} s")


def room_answers(node_id: str, timeout: float = 10.0) -> bool:
    """Does the room of node ``node_id`` exist? (A busy room that does not answer in time still counts.)"""
    try:
        room = ray.get_actor(ROOM_PREFIX + node_id, namespace=NAMESPACE)
    except ValueError:   # no actor of that name: it died with the worker that owned it
        return False
    try:
        ray.get(room.state.remote(), timeout=timeout)
    except ray.exceptions.GetTimeoutError:
        return True
    except ray.exceptions.RayActorError:
        return False
    return True


def _gcs_client() -> Any:
    """This driver's client of the cluster's GCS (Ray's own; not public API: node start times and draining)."""
    return ray._private.worker.global_worker.gcs_client  # type: ignore[attr-defined]


def _node_facts() -> dict[str, tuple[float, bool]]:
    """Seconds each node has been up, and whether it is the head (Ray's GCS client is the one place that
    says; it is not public API)."""
    try:
        infos = _gcs_client().get_all_node_info(timeout=10)
        now_ms = time.time() * 1000
        return {node_id.hex(): ((now_ms - info.start_time_ms) / 1000, bool(info.is_head_node))
                for node_id, info in infos.items()}
    except (AttributeError, RuntimeError, ray.exceptions.RayError) as exc:
        logger.info("node start times unknown (%s): waiting the whole grace period", exc)
        return {}


def take_over(serials: list[str], grace_s: float = ROOM_GRACE_S, wait_s: float = NODE_WAIT_S) -> list[str]:
    """The phones among ``serials`` that a live worker offers. Those offered by a node whose worker is gone
    (no room, ``grace_s`` after the node started) are taken over: that node is drained (Ray unregisters it
    and stops its raylet), so its stale offers vanish."""
    offering = [n for n in _nodes() if n.get("Alive") and any(phone_resource(s) in n.get("Resources", {})
                                                              for s in serials)]
    facts = _node_facts() if offering else {}
    live: list[str] = []
    for node in offering:
        node_id, theirs = str(node["NodeID"]), [s for s in serials if phone_resource(s) in node["Resources"]]
        age, head = facts.get(node_id, (0.0, False))
        deadline = time.monotonic() + max(0.0, grace_s - age)
        while not (alive := room_answers(node_id)) and time.monotonic() < deadline:
            time.sleep(0.5)   # a worker that has just started its node opens its room within seconds
        if alive:
            live += theirs
            continue
        if head:   # draining the head would stop the cluster
            raise BadInput(f"phone {theirs[0]} is offered by the cluster's head node, which has no room",
                           hint="start the head without phone resources; phones join with `remote worker`")
        logger.warning("phone(s) %s: offered by node %s whose worker is gone (it has no room): taking them over",
                       ", ".join(theirs), node_id[:12])
        _gcs_client().drain_nodes([bytes.fromhex(node_id)], timeout=10)
    gone = [s for s in serials if s not in live]
    deadline = time.monotonic() + wait_s
    while any(advertised(s) for s in gone) and time.monotonic() < deadline:
        time.sleep(0.25)
    return live
