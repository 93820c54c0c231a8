"""`remote replay RUN_DIR`: re-decide a recorded run offline; exit 1 if any decision changed."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from remote.commands._modules import registry as module_registry
from remote.runner.replay import replay_run


def run(args: argparse.Namespace) -> int:
    decisions = replay_run(args.run_dir, registry=module_registry())   # REMOTE_MODULES' modules too
    changed = [d for d in decisions if d.changed]
    if args.json:
        print(json.dumps({"decisions": [asdict(d) for d in decisions], "changed": len(changed)}, ensure_ascii=False))
    else:
        for d in decisions:
            mark = "CHANGED" if d.changed else "same   "
            print(f"{mark} step {d.step:>2} {d.kind:<6} recorded: {d.recorded}  replayed: {d.replayed}"
                  + (f"  ({d.note})" if d.note else ""))
        print(f"{len(decisions)} decisions, {len(changed)} changed")
    return 1 if changed else 0
