"""The terminal: secrets masked in everything printed, and log lines that never split a progress line.

``install()`` (called once by ``cli.main``) wraps stdout and stderr so that any
value of a secret-looking variable (``*_API_KEY``, ``*_TOKEN`` ...) is masked in
whatever any command prints, a model's reply that echoes the key included; and
routes log records to stderr through a handler that first ends a half-printed
progress line (``[3/7] tap desc:搜索 ...``).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

from remote.config import mask_all, secret_values


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
