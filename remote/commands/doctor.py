"""`remote doctor`: check a phone before running tasks on it; one line per check, steps for each ✗.

Exit status 0 when every check passed (the phone is ready), 1 when one failed, 2 when no phone or
adb server could be reached at all. The checks are `remote.core.device.doctor`'s.
"""

from __future__ import annotations

import argparse
import json
import textwrap

from remote.commands._device import trace_overrides
from remote.config import Settings
from remote.core.device import doctor, states
from remote.core.device.adb_controller import ADBController
from remote.errors import ConfigError, DeviceNotReady, ExitCode

MARK = {True: "✓", False: "✗"}


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    serial = args.device or settings.adb_serial or None
    if serial == "sim":
        from remote.sim import serve

        with serve(scenario=args.scenario, **trace_overrides(args)) as server:
            return examine(server.serial, "127.0.0.1", server.port, as_json=args.json,
                           tree=getattr(args, "tree", None) or settings.tree)
    if args.scenario or trace_overrides(args):
        raise ConfigError("--scenario and --trace describe the simulated phone", hint="add --device sim")
    return examine(serial, args.adb_host or settings.adb_host, args.adb_port or settings.adb_port,
                   as_json=args.json, tree=getattr(args, "tree", None) or settings.tree)


def examine(serial: str | None, host: str, port: int, *, as_json: bool = False, tree: str | None = None) -> int:
    serial, state = states.choose(serial, ADBController.list_devices(host, port))
    lines = []
    if state == states.READY or state in states.TRANSIENT:
        adb = ADBController(serial, host=host, port=port, reconnect_attempts=1, tree=tree)
        try:
            adb.connect()
            lines = [doctor.device_state(serial, states.READY), *doctor.run(doctor.Probe(adb))]
        except DeviceNotReady as exc:
            lines = [doctor.device_state(serial, exc.state)]
        finally:
            adb.close()
    else:
        lines = [doctor.device_state(serial, state)]
    failed = [line for line in lines if not line.ok]
    if as_json:
        print(json.dumps({"serial": serial, "ready": not failed, "checks": [line.to_dict() for line in lines]},
                         ensure_ascii=False))
    else:
        _print(serial, host, port, lines, failed)
    return ExitCode.OK if not failed else ExitCode.FAILED


def _print(serial: str, host: str, port: int, lines: list[doctor.Check], failed: list[doctor.Check]) -> None:
    print(f"remote doctor: {serial} (adb server {host}:{port})")
    for line in lines:
        print(f"  {MARK[line.ok]} {line.name:19} {line.measured}")
        for number, step in enumerate(line.steps, 1):
            print(textwrap.fill(step, width=100, initial_indent=f"      {number}. ", subsequent_indent=" " * 9))
    if len(lines) == 1 and not lines[0].ok:
        print("  (the other checks need the phone to answer)")
    if failed:
        names = ", ".join(line.name for line in failed)
        print(f"not ready: {len(failed)} check(s) failed ({names}); do the steps above, then run "
              "`python -m remote doctor` again")
    else:
        print("ready: every check passed")
