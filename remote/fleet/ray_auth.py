"""Ray's token authentication, required: whoever reaches a Ray cluster's ports runs code on its hosts.

A cluster of several hosts listens where its hosts reach each other (Ray 2.60 binds
its GCS, raylets and workers to every interface unless the node is a one-host node
on 127.0.0.1, which ``start_local`` is). What keeps a peer out there is Ray's token
check (``RAY_AUTH_MODE=token``, Ray 2.52 and later):
every request to those servers must carry the cluster's token (``~/.ray/auth_token``
or ``RAY_AUTH_TOKEN``). So:

- a one-host cluster (``--address local``) starts with it on (Ray writes a token to
  ``~/.ray/auth_token`` when there is none);
- before joining a cluster (``--address HOST:PORT``), a client without a token (a
  subprocess with ``RAY_AUTH_MODE=disabled``) asks its GCS for the cluster id: a
  cluster that answers it checks no token;

and either way a cluster without authentication is refused unless the command was
given ``--allow-unauthenticated-ray``, which still prints a warning.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

from remote.errors import ConfigError

logger = logging.getLogger(__name__)

MODE = "RAY_AUTH_MODE"
FLAG = "--allow-unauthenticated-ray"
PROBE_TIMEOUT_S = 60.0
_PROBE = """
import sys
import ray.exceptions
from ray._raylet import GcsClient
try:
    GcsClient(address=sys.argv[1]).internal_kv_keys(b"remote-probe", namespace=None, timeout=10)
    print("OPEN")
except ray.exceptions.AuthenticationError:
    print("TOKEN")
except Exception as exc:
    print("UNKNOWN", type(exc).__name__)
"""


def _refuse(what: str, allow: bool) -> None:
    danger = (f"{what}: anyone who can reach its ports can run code on its hosts "
              "as this user, read the run records and take the phones")
    if not allow:
        raise ConfigError(danger, hint=f"use Ray's token authentication: unset {MODE} (or set {MODE}=token) with the "
                                       f"cluster's token in ~/.ray/auth_token (docs/fleet.md); to go on anyway, on a "
                                       f"network you trust, add {FLAG}")
    logger.warning("%s. Going on because of %s.", danger, FLAG)


def for_local_cluster(allow: bool) -> None:
    """Before starting a one-host cluster: token authentication on, unless turned off on purpose (and allowed)."""
    mode = os.environ.get(MODE)
    if mode is None or not mode.strip():
        # What Ray 2.60 does by default for a new cluster (and its children inherit), said rather than relied on;
        # Ray read its configuration when imported, so it is read again (as Ray's own default does).
        from ray._raylet import Config  # type: ignore[attr-defined]

        os.environ[MODE] = "token"
        Config.initialize("")
    elif mode.strip().lower() != "token":
        _refuse(f"{MODE}={mode} would start this host's Ray cluster without authentication", allow)


def probe(address: str) -> str:
    """``"TOKEN"`` when the GCS at ``address`` refuses a client without a token, ``"OPEN"`` when it answers it,
    ``"UNKNOWN …"`` when neither could be told (unreachable, an address form this probe cannot use)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH_")}
    env.update({MODE: "disabled", "RAY_AUTH_TOKEN_PATH": os.devnull, "RAY_USAGE_STATS_ENABLED": "0"})
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, address], env=env, capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"UNKNOWN {type(exc).__name__}"
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else f"UNKNOWN exit status {done.returncode}"


def for_cluster(address: str, allow: bool) -> None:
    """Before joining the cluster at ``address``: refuse one that checks no token (unless allowed)."""
    if "://" in address:   # Ray Client (ray://): its server is another door, not checked here
        logger.warning("cannot check that the Ray cluster at %s requires a token (a %s address)", address,
                       address.split("://", 1)[0])
        return
    found = probe(address)
    if found == "OPEN":
        _refuse(f"the Ray cluster at {address} answers clients without a token", allow)
    elif found != "TOKEN":
        logger.warning("could not tell whether the Ray cluster at %s requires a token (%s)", address, found)
