"""Many phones: a local pool (one worker per phone), placement on a Ray cluster, batch and schedule files.

    from remote.fleet.local import LocalFleet
    results = LocalFleet([Phone("A"), Phone("B")], RunSettings()).run([Job("打开设置"), Job("打开设置")])

Built on the runner (`remote.runner.build_runner`, one runner and one controller per
phone) and on Ray for more than one host (`remote.fleet.ray_fleet`). Nothing of the
runner is shared across threads.
"""

from remote.errors import ConfigError

FLEET_EXTRA = "pip install 'remote[fleet]'"


def ray_missing(exc: ModuleNotFoundError) -> ConfigError:
    """What a command that needs Ray says when it is not installed: Ray is the ``fleet`` extra (about 240 MB),
    which one phone, or several on this computer (`remote batch` without --ray), never needs."""
    return ConfigError(f"this command places phones on a Ray cluster, and Ray is not installed ({exc.name})",
                       hint=f"{FLEET_EXTRA} (the `fleet` extra); phones on this computer need none: "
                            "`remote batch FILE` without --address")
