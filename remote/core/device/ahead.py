"""Read-only shell commands asked ahead, side by side, while the run does something else.

A run asks a phone a handful of facts once (its size, its ROM, the installed packages, which display
``screencap`` shows, the keyboard's settings, an app's launcher activity), each a shell command of 30-150 ms
on a real phone (docs/devices.md, "Where a run's seconds go"). Asked one after another they add up on the
run's critical path; asked together at the start, beside the wake check and the app's launch, they cost
the longest of them. adbd runs each shell stream as its own process, so answers come side by side.

:class:`Ahead` keeps each answer for the first ask of the *same* command line (waiting for it if it is
still under way) and gives it once. An answer is not given when it is older than `MAX_AGE_S`, or after a
command that could change it ran (``ime`` and ``settings put`` for the keyboard's settings, ``pm install``
for the packages: `CHANGES`). Only commands that read are asked ahead; a failed ask ahead is forgotten, and
the caller's own ask runs (and reports) as if nothing had been asked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

logger = logging.getLogger(__name__)
Key = tuple[str, ...]
MAX_AGE_S = 10.0
WORKERS = 4
# What may be asked ahead: commands that only read (a command line's first words).
READS = (("wm", "size"), ("dumpsys",), ("getprop",), ("pm", "list", "packages"), ("settings", "get"),
         ("cmd", "package", "resolve-activity"))
# Commands that can change what some reads say, and those reads: an answer to them asked ahead is dropped.
_KEYBOARD: tuple[Key, ...] = (("settings", "get"), ("dumpsys", "input_method"))
_PACKAGES: tuple[Key, ...] = (("pm", "list", "packages"), ("cmd", "package", "resolve-activity"),
                              ("dumpsys", "package"))
CHANGES: dict[Key, tuple[Key, ...]] = {
    ("ime",): _KEYBOARD, ("settings", "put"): _KEYBOARD, ("settings", "delete"): _KEYBOARD,
    ("cmd", "input_method"): _KEYBOARD, ("pm", "install"): _PACKAGES, ("pm", "uninstall"): _PACKAGES,
    ("cmd", "package", "install"): _PACKAGES, ("cmd", "package", "uninstall"): _PACKAGES,
}


def _starts(line: Key, prefixes: Iterable[Key]) -> bool:
    return any(line[:len(p)] == p for p in prefixes)


class Ahead:
    """``Ahead(run).ask([["wm", "size"], ["getprop"]])`` now; later ``take(["wm", "size"])`` -> the answer
    (waiting for it), or None when it was not asked, failed, is too old or may have changed."""

    def __init__(self, run: Callable[[list[str]], str], *, clock: Callable[[], float] = time.monotonic) -> None:
        self.run = run
        self.clock = clock
        self._lock = threading.Lock()
        self._answers: dict[Key, tuple[float, Future[str]]] = {}
        self._pool: ThreadPoolExecutor | None = None
        self.asked = self.given = 0

    def ask(self, commands: Iterable[Sequence[str]]) -> None:
        """Start reading each command (a read, `READS`) not already asked; returns at once."""
        with self._lock:
            for command in commands:
                key = tuple(str(a) for a in command)
                if not _starts(key, READS):
                    raise ValueError(f"only reads are asked ahead, not {' '.join(key)!r}")
                if key in self._answers:
                    continue
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="ask-ahead")
                self._answers[key] = (self.clock(), self._pool.submit(self.run, list(key)))
                self.asked += 1

    def take(self, command: Sequence[object] | str) -> str | None:
        """The answer asked ahead for this exact command, once; None: run it now. A command that can change
        what some reads say (`CHANGES`) drops their answers not taken yet."""
        if isinstance(command, str):
            return None
        key = tuple(str(a) for a in command)
        with self._lock:
            changed = [reads for writer, reads in CHANGES.items() if key[:len(writer)] == writer]
            for reads in changed:
                for asked in [k for k in self._answers if _starts(k, reads)]:
                    del self._answers[asked]
            if changed:
                return None
            entry = self._answers.pop(key, None)
        if entry is None:
            return None
        asked_at, answer = entry
        try:
            out = answer.result()
        except Exception as exc:   # the caller's own ask runs and reports it  # noqa: BLE001
            logger.debug("asked ahead, failed (%s): %s", " ".join(key), exc)
            return None
        if self.clock() - asked_at > MAX_AGE_S:
            return None
        self.given += 1
        return out

    def close(self) -> None:
        """Forget every answer; the threads end when their commands do."""
        with self._lock:
            self._answers.clear()
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
