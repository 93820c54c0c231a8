"""Many phones: a local pool (one worker per phone), placement on a Ray cluster, batch and schedule files.

    from remote.fleet.local import LocalFleet
    results = LocalFleet([Phone("A"), Phone("B")], RunSettings()).run([Job("打开设置"), Job("打开设置")])

Built on the runner (`remote.runner.build_runner`, one runner and one controller per
phone) and on Ray for more than one host (`remote.fleet.ray_fleet`). Nothing of the
runner is shared across threads.
"""
