"""The terminal: secrets masked in everything printed, and log lines that never split a progress line.

``install()`` (called once by ``cli.main``) wraps stdout and stderr so that any
value of a secret-looking variable (``*_API_KEY``, ``*_TOKEN`` ...) is masked in
whatever any command prints, a model's reply that echoes the key included; and
routes log records to stderr through a handler that first ends a half-printed
progress line (``[3/7] tap desc:搜索 ...``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import select
import signal
import sys
import threading
from typing import Any, TextIO

from remote.config import LLMConfig, mask_all, secret_values
from remote.errors import ExitCode, RemoteError

PIPE_CLOSED = 128 + 13   # what a shell reports for a tool stopped by SIGPIPE (`yes | head`)


class MaskedStream:
    """A text stream that masks secrets in everything written to it."""

    def __init__(self, stream: TextIO, secrets: list[str]) -> None:
        self._stream = stream
        self._secrets = secrets
        self.line_open = False

    def write(self, text: str) -> int:
        text = mask_all(text, self._secrets) if self._secrets else text
        if text:
            self.line_open = not text.endswith("\n")
        return self._stream.write(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class LineAwareHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Logs to stderr on a line of their own, even in the middle of a progress line."""

    def emit(self, record: logging.LogRecord) -> None:
        stream = sys.stderr
        if getattr(stream, "line_open", False):
            stream.write("\n")
        self.stream = stream
        super().emit(record)


def error(message: str) -> None:
    """``error: …`` on stderr, on a line of its own."""
    if getattr(sys.stderr, "line_open", False):
        sys.stderr.write("\n")
    print(message, file=sys.stderr)


def error_json(args: argparse.Namespace, message: str, hint: str, code: int, error_type: str) -> int:
    """With --json, a command that ended in an error still prints one JSON object on stdout (a script reads
    ``status``, ``error`` and ``exit_code`` there, whatever happened); returns ``code``."""
    if getattr(args, "json", False):
        status = "aborted" if code == ExitCode.ABORTED else "error"
        print(json.dumps({"status": status, "task": getattr(args, "task", None), "error": message,
                          "hint": hint or None, "error_type": error_type, "exit_code": int(code)},
                         ensure_ascii=False))
    return int(code)


def warn_model_config() -> None:
    """An unusable model setting (a misspelled LLM_PROVIDER) is said once, up front; template tasks still run,
    and a task that needs the model fails naming it."""
    try:
        problem = LLMConfig.from_env().problem
    except RemoteError:
        return   # a bad value the command itself reports when it reads the configuration
    if problem:
        error(f"warning: {problem}: a task that needs a model will fail; templates still run")


def stdout_gone() -> bool:
    """True when nobody reads stdout any more (``remote modules | head -3`` after head's third line)."""
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        if not hasattr(select, "poll"):
            return True   # no way to ask: a BrokenPipeError at the top is taken to be stdout's
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def leave_closed_stdout() -> int:
    """Point stdout at /dev/null so the interpreter's last flush stays quiet (the Python docs' recipe for
    SIGPIPE), and return the exit status of a tool stopped by SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
    os.close(devnull)
    return PIPE_CLOSED


def honour_sigint() -> None:
    """Stop on SIGINT even when started with it ignored (``remote batch f.yaml &`` in a script: the shell
    sets SIG_IGN for background jobs), as `run` always does."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def install(level: int) -> None:
    secrets = secret_values()
    if not isinstance(sys.stdout, MaskedStream):
        sys.stdout = MaskedStream(sys.stdout, secrets)
    if not isinstance(sys.stderr, MaskedStream):
        sys.stderr = MaskedStream(sys.stderr, secrets)
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, LineAwareHandler):
            root.removeHandler(handler)
    handler = LineAwareHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
