"""Command line: ``python -m remote <command>``.

The parser lives here; each command's body lives in ``remote/commands/<name>.py``
as ``run(args) -> int`` and is imported only when that command runs, so
``--help`` stays fast and a missing optional extra only affects its command.

Exit codes: 0 the task/command succeeded, 1 it failed (task failed, target not
found, decisions changed on replay), 2 the environment failed (no device, no
model configured, bad configuration). Errors print ``error: …`` on stderr with
what to do; a traceback only with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from remote import __version__
from remote.errors import ConfigError, DeviceError, ModelError, RemoteError

EXIT_OK, EXIT_FAILED, EXIT_ENV = 0, 1, 2


def _add_device_args(p: argparse.ArgumentParser, *, sim_choice: bool = True) -> None:
    help_text = "device serial (or ip:port)" + (", or 'sim' for the built-in simulated phone" if sim_choice else "")
    p.add_argument("--device", "-s", metavar="SERIAL", default=None, help=help_text)
    if sim_choice:
        p.add_argument("--scenario", metavar="FILE", default=None, help="simulated-phone scenario YAML (with --device sim)")
        _add_trace_args(p)
    p.add_argument("--adb-host", default=None, help="adb server host (default 127.0.0.1)")
    p.add_argument("--adb-port", type=int, default=None, help="adb server port (default 5037)")


def _add_trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", metavar="DIR", default=None, help="serve a DroidBot recording (the trace phone)")
    p.add_argument("--trace-start", metavar="STATE", default=None, help="its screen to start on (state_str or prefix)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="remote", description="Automate an Android phone from one sentence.")
    parser.add_argument("--version", action="version", version=f"remote {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument("-v", "--verbose", action="store_true", help="show info logs")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("run", help="run a task on a phone: remote run --device sim \"给张三发微信消息说你好\"")
    p.add_argument("task")
    _add_device_args(p)
    p.add_argument("--module", default=None, help="force an app module (skip routing)")
    p.add_argument("--strategy", choices=["opencv_first", "opencv_only", "ai_only"], default="opencv_first")
    p.add_argument("--max-steps", type=int, default=30)
    p.add_argument("--max-seconds", type=float, default=300.0)
    p.add_argument("--max-model-calls", type=int, default=20, help="budget of model calls for the task")
    p.add_argument("--max-tokens", type=int, default=200_000, help="budget of model tokens for the task")
    p.add_argument("--dry-run", action="store_true", help="plan and locate, but do not touch the phone")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask before sensitive steps")
    p.add_argument("--json", action="store_true", help="print the run summary as one JSON object")
    p.add_argument("--runs-dir", default="runs", help="where run records go (default ./runs)")

    p = sub.add_parser("devices", help="list connected devices (serial, model, resolution, ADBKeyboard)")
    p.add_argument("--adb-host", default=None)
    p.add_argument("--adb-port", type=int, default=None)

    p = sub.add_parser("screenshot", help="save the phone's screen to a file")
    p.add_argument("-o", "--output", required=True, metavar="FILE")
    _add_device_args(p)

    p = sub.add_parser("sim", help="serve the simulated phone over the adb protocol until Ctrl-C")
    p.add_argument("--port", type=int, default=5037)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--scenario", metavar="FILE", default=None)
    _add_trace_args(p)
    p.add_argument("--serial", default=None, help="serial the simulated phone reports")

    p = sub.add_parser("locate", help="offline: find a target on a screenshot file")
    p.add_argument("screenshot")
    p.add_argument("target", help="target_ref: text:张三, id:..., desc:..., a reference name, xy:540,2280")
    p.add_argument("--xml", metavar="DUMP", help="uiautomator dump taken with the screenshot")
    p.add_argument("--ref", metavar="IMAGE", help="reference image to look for")
    p.add_argument("--module", default=None, help="module whose images and aliases to use")
    p.add_argument("--strategy", choices=["opencv_first", "opencv_only", "ai_only"], default="opencv_only")
    p.add_argument("--json", action="store_true")
    p.add_argument("--annotate", metavar="OUT.png", help="write a copy with the box and tap point drawn")

    p = sub.add_parser("match", help="offline: template-match a reference image in a screenshot")
    p.add_argument("ref")
    p.add_argument("screenshot")
    p.add_argument("--json", action="store_true")
    p.add_argument("--annotate", metavar="OUT.png")

    p = sub.add_parser("plan", help="offline: plan a task on a screenshot file with the configured model")
    p.add_argument("screenshot")
    p.add_argument("task")
    p.add_argument("--module", default=None)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("verify", help="offline: check a screenshot against an expectation with the model")
    p.add_argument("screenshot")
    p.add_argument("expectation")
    p.add_argument("--xml", metavar="DUMP")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("flow", help="offline: route, plan and locate every step of a task on one screenshot")
    p.add_argument("screenshot")
    p.add_argument("task")
    p.add_argument("--xml", metavar="DUMP")
    p.add_argument("--module", default=None)
    p.add_argument("--annotate", metavar="OUT.png")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("replay", help="offline: re-decide a recorded run and list changed decisions")
    p.add_argument("run_dir")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("report", help="(re)write a run's report.html")
    p.add_argument("run_dir")

    p = sub.add_parser("modules", help="list app modules and their task templates")
    p.add_argument("action", nargs="?", choices=["list", "check", "learned"], default="list")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("capture-ref", help="crop a reference image from the live screen into a module")
    p.add_argument("name")
    p.add_argument("--module", required=True)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--bbox", metavar="x1,y1,x2,y2")
    group.add_argument("--text", metavar="文本")
    _add_device_args(p)
    return parser


def _configure_logging(args: argparse.Namespace) -> None:
    level = logging.DEBUG if args.debug else (logging.INFO if args.verbose else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_OK
    _configure_logging(args)
    module_name = args.command.replace("-", "_")
    try:
        command = importlib.import_module(f"remote.commands.{module_name}")
        return int(command.run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ConfigError, DeviceError) as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENV
    except (ModelError, RemoteError) as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:  # files named on the command line: missing screenshot, unreadable dump
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENV


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
