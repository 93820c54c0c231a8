"""One process per phone at a time: an advisory lock per phone, held while a command drives it.

Two processes on one phone type into the same field and fail with false causes
(``没有找到联系人 张三`` although the contact exists). ``run``, ``batch``,
``schedule`` (while a firing runs), ``mcp`` and ``worker`` take the phone's lock
first; the second process is told who holds it, and exits 2::

    with PhoneLock.acquire("R58M123", server="127.0.0.1:5037", command="remote run 打开设置"):
        ...   # drive the phone

The lock is ``fcntl.flock`` on ``<private folder>/locks/<server>-<serial>.lock``
(``remote.core.safe_files``): the kernel drops it when the process ends, however it
ends (``kill -9`` included), so a stale lock cannot outlive its holder (a file left
by a killed holder is taken over). The holder removes the file when it lets go. The file
holds the holder's pid and command line, for the message. The key is the adb
server and the serial: the same serial on two adb servers is two phones (two
``remote sim`` farms both call theirs ``remote-sim``). An in-process simulated
phone (``--device sim``) belongs to its process alone and needs no lock.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import time
from pathlib import Path
from types import TracebackType

from remote.core.safe_files import open_private, private_dir, read_private
from remote.errors import ConfigError, DeviceBusy

logger = logging.getLogger(__name__)
MAX_COMMAND_CHARS = 200
MAX_TRIES = 5


def lock_path(serial: str, server: str, folder: Path | None = None) -> Path:
    name = re.sub(r"[^\w.-]", "_", f"{server}-{serial}")[:200]
    return (folder or private_dir("locks")) / f"{name}.lock"


class PhoneLock:
    """A held lock; ``release()`` (or leaving the ``with``) lets the next process in."""

    def __init__(self, fd: int, path: Path, serial: str) -> None:
        self.fd, self.path, self.serial = fd, path, serial

    @classmethod
    def acquire(cls, serial: str, *, server: str, command: str, folder: Path | None = None) -> PhoneLock:
        """Take the phone's lock now, or raise DeviceBusy naming the process that holds it."""
        path = lock_path(serial, server, folder)
        for _ in range(MAX_TRIES):
            fd = _locked(path, serial)
            if fd is not None:
                break
        else:
            raise DeviceBusy(f"phone {serial}: its lock file keeps being replaced ({path})", serial=serial)
        info = {"pid": os.getpid(), "command": command[:MAX_COMMAND_CHARS], "since": time.time()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info, ensure_ascii=False).encode("utf-8"), 0)
        except OSError as exc:   # a full disk: the lock holds all the same, only its holder goes unnamed
            logger.warning("phone lock %s: holder not written (%s)", path, exc.strerror or exc)
        return cls(fd, path, serial)

    def release(self) -> None:
        """Remove the file while still holding it (a process that opened it before sees it gone and tries
        again), then let go: the folder keeps no file per phone ever seen."""
        if self.fd < 0:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(self.fd)   # closing drops the flock
            self.fd = -1

    def __enter__(self) -> PhoneLock:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _locked(path: Path, serial: str) -> int | None:
    """A descriptor holding the lock of the file now at ``path``; None when the file was removed or replaced
    between the open and the lock (its holder let go meanwhile: try again)."""
    try:
        fd = open_private(path)
    except OSError as exc:   # a symlink or someone else's file at the name: refused, never followed
        raise ConfigError(f"cannot take the lock of phone {serial} ({path}): {exc.strerror or exc}",
                          hint="remove that file; it is not one remote made") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held, now = os.fstat(fd), os.lstat(path)
    except BlockingIOError:
        os.close(fd)
        raise DeviceBusy(_busy_message(serial, holder(path)), serial=serial,
                         hint="one process per phone: wait for it to finish, or stop it") from None
    except FileNotFoundError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
        os.close(fd)
        return None
    return fd


def holder(path: Path) -> dict[str, object]:
    """What the lock file says of its holder (pid, command, since); empty when it cannot tell."""
    raw = read_private(path, 4096)
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _busy_message(serial: str, info: dict[str, object]) -> str:
    pid, command = info.get("pid"), info.get("command")
    since = info.get("since")
    who = f"process {pid}" if isinstance(pid, int) else "another process"
    if isinstance(command, str) and command:
        who += f" ({command})"
    if isinstance(since, int | float):
        who += f", since {time.strftime('%H:%M:%S', time.localtime(since))}"
    return f"phone {serial} is in use by {who}"
