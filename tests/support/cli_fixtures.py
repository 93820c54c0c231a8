"""Fixtures for driving ``python -m remote`` as a separate process, as a user's shell or a service manager does.

- ``cli_env``: the environment of such a process: no model configured, ``TMPDIR`` this test's own folder
  (so the per-user private folders, the IME state and the phone locks are this test's), the repo importable.
- ``remote_proc(*args, env=..., cwd=...)``: start one (``Popen``, text pipes); ``remote_cli`` runs one to the end.
- ``wait_for(predicate, timeout)``: poll until something shows (a file, a request), with a bound.
- ``Tail(proc.stderr)``: what a running process has written so far (progress lines end only when a step does).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_VARS = ("LLM_", "CUSTOM_LLM_", "OPENAI_", "DASHSCOPE_", "ZHIPU", "DEEPSEEK", "ANTHROPIC")


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(MODEL_VARS) and k != "XDG_RUNTIME_DIR"}
    env.update(TMPDIR=str(tmp), PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    return env


def remote_proc(*args: str, env: dict[str, str], cwd: Path, **popen: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "remote", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def remote_cli(*args: str, env: dict[str, str], cwd: Path, timeout: float = 180,
               **popen: Any) -> subprocess.CompletedProcess[str]:
    proc = remote_proc(*args, env=env, cwd=cwd, **popen)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"remote {' '.join(args)} did not end in {timeout} s:\n{err[-3000:]}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """The predicate's first true value; AssertionError after ``timeout`` (a bound on a hang, not a speed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"waited {timeout} s for {what or predicate}")


class Tail:
    """Reads a pipe in a thread; ``text`` is everything read so far, ``wait(...)`` waits for a piece of it."""

    def __init__(self, stream: IO[str]) -> None:
        self.parts: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[str]) -> None:
        while chunk := stream.read(1):
            self.parts.append(chunk)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def wait(self, piece: str, timeout: float = 60.0) -> None:
        wait_for(lambda: piece in self.text, timeout, repr(piece))

    def rest(self, timeout: float = 10.0) -> str:
        """Everything, once the pipe has closed (the process ended)."""
        self.thread.join(timeout)
        return self.text
