"""Command line: ``python -m remote <command>``.

The parsers live in ``remote.cli_parsers``; each command's body lives in ``remote/commands/<name>.py``
as ``run(args) -> int`` and is imported only when that command runs, so
``--help`` stays fast and a missing optional extra only affects its command.

Exit codes (one table, ``remote.errors.ExitCode``): 0 success, 1 the task or check
failed, 2 the environment, configuration or usage failed, 130 aborted (Ctrl-C or SIGTERM). Errors
print ``error: …`` on stderr with what to do; a traceback only with ``--debug``.
Everything printed passes through the same secret masking as the run records.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import sys
import traceback
from collections.abc import Sequence

from remote import __version__
from remote.cli_fleet_parsers import fleet_parsers
from remote.cli_parsers import (
    EXIT_TABLE,
    Formatter,
    agent_parsers,
    device_parsers,
    module_parsers,
    offline_parsers,
    run_parser,
    studio_parser,
)
from remote.errors import ExitCode, RemoteError

MODEL_COMMANDS = ("run", "batch", "submit", "schedule", "worker", "mcp", "flow", "verify")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="remote", formatter_class=Formatter,
        description="Automate an Android phone from one sentence.",
        epilog=f"""examples:
  remote run --device sim "给张三发微信消息说你好"     # the simulated phone, no API key needed
  remote devices
  remote COMMAND --help                             # each command's options and examples

{EXIT_TABLE}""")
    parser.add_argument("--version", action="version", version=f"remote {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument("-v", "--verbose", action="store_true", help="show info logs")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run_parser(sub)
    device_parsers(sub)
    offline_parsers(sub)
    module_parsers(sub)
    agent_parsers(sub)
    studio_parser(sub)
    fleet_parsers(sub)
    return parser


def entry() -> int:
    """The process's entry (`remote`, `python -m remote`): `main`, then every object is frozen out of the
    collector's reach, so the interpreter's exit does not walk them all once more (~0.25 s of a `remote run`'s
    exit, measured: docs/devices.md). Finalizers and atexit handlers run as always; `main` itself, called again
    and again by tests and by Python callers, freezes nothing."""
    code = main()
    gc.freeze()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:   # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    if not args.command:
        parser.print_help()
        return ExitCode.OK
    from remote.commands import _terminal

    _terminal.install(logging.DEBUG if args.debug else logging.INFO if args.verbose else logging.WARNING)
    _terminal.honour_sigint()
    try:
        if args.command in MODEL_COMMANDS:
            _terminal.warn_model_config()
        if args.command == "run":   # a phone another process drives: said before the runner's imports
            from remote.commands._busy import refuse_if_busy

            refuse_if_busy(args)
        command = importlib.import_module(f"remote.commands.{args.command.replace('-', '_')}")
        return int(command.run(args))
    except KeyboardInterrupt:
        _terminal.error("interrupted")
        return _terminal.error_json(args, "interrupted", "", ExitCode.ABORTED, "KeyboardInterrupt")
    except RemoteError as exc:
        if args.debug:
            traceback.print_exc()
        _terminal.error(f"error: {exc.message}" + (f"\n  what to do: {exc.hint}" if exc.hint else ""))
        return _terminal.error_json(args, exc.message, exc.hint, exc.exit_code, type(exc).__name__)
    except OSError as exc:  # files named on the command line, a runs folder that cannot be written
        return _os_error(args, exc)
    except Exception as exc:  # a bug of ours: say so plainly, the record (if any) is already written
        if args.debug:
            traceback.print_exc()
        _terminal.error(f"error: internal error ({type(exc).__name__}: {exc}); please report it with --debug")
        return _terminal.error_json(args, f"internal error ({type(exc).__name__}: {exc})", "",
                                    ExitCode.FAILED, type(exc).__name__)


def _os_error(args: argparse.Namespace, exc: OSError) -> int:
    """A file or folder the command could not use, said in words (nobody reading a closed pipe: nothing)."""
    from remote.commands import _terminal

    if isinstance(exc, BrokenPipeError) and _terminal.stdout_gone():
        return _terminal.leave_closed_stdout()   # `remote modules | head -3`: nobody reads on, say nothing
    if args.debug:
        traceback.print_exc()
    message = str(exc)
    if isinstance(exc, FileExistsError | NotADirectoryError) and exc.filename:   # --runs-dir names a file
        which = "it is" if isinstance(exc, FileExistsError) else "a folder above it is"
        message = f"cannot use {exc.filename} as a folder: {which} a file"
    _terminal.error(f"error: {message}")
    return _terminal.error_json(args, message, "", ExitCode.ENVIRONMENT, type(exc).__name__)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
