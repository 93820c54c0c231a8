"""`remote replay RUN_DIR`: re-decide a recorded run offline; exit 1 if any decision changed."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from remote.commands._modules import registry as module_registry
from remote.core.record.report import load_record
from remote.core.records import StepOutcome
from remote.runner.replay import replay_run

# What a verify decision's "unknown" means, said once under the list (issue 34: it was printed bare).
UNKNOWN_MEANS = ("verify unknown: the screen changed after the step, and no expected text said what it should show, "
                 "so nothing free could judge it further (a model could); the step counted as done")


def run(args: argparse.Namespace) -> int:
    decisions = replay_run(args.run_dir, registry=module_registry())   # REMOTE_MODULES' modules too
    changed = [d for d in decisions if d.changed]
    unfinished = load_record(args.run_dir).get("status") in ("running", "pending")
    if unfinished:   # a killed run's record (run.json is rewritten as each step ends): its steps are all there is
        print("note: this record is unfinished (status running: the run was killed or is still going); "
              "only the steps that had ended are replayed", file=sys.stderr)
    if args.json:
        print(json.dumps({"decisions": [asdict(d) for d in decisions], "changed": len(changed),
                          "unfinished": unfinished}, ensure_ascii=False))
    else:
        for d in decisions:
            mark = "CHANGED" if d.changed else "same   "
            print(f"{mark} step {d.step:>2} {d.kind:<6} recorded: {d.recorded}  replayed: {d.replayed}"
                  + (f"  ({d.note})" if d.note else ""))
        if any(d.kind == "verify" and StepOutcome.UNKNOWN in (d.recorded, d.replayed) for d in decisions):
            print(UNKNOWN_MEANS)
        print(f"{len(decisions)} decisions, {len(changed)} changed")
    return 1 if changed else 0
