"""The phone's small in-memory filesystem (files the shell, `uiautomator dump` and `sync:` share)."""

from __future__ import annotations

import posixpath
import stat
import threading
import time
from dataclasses import dataclass

S_DIR = stat.S_IFDIR | 0o771
S_FILE = stat.S_IFREG | 0o660

_DIRS = ("/", "/sdcard", "/sdcard/Download", "/sdcard/DCIM", "/sdcard/Pictures", "/data", "/data/local",
         "/data/local/tmp", "/system", "/system/bin", "/dev", "/proc", "/storage", "/storage/emulated",
         "/storage/emulated/0", "/storage/emulated/0/Download")


@dataclass
class Entry:
    mode: int
    data: bytes = b""
    mtime: int = 0

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


class FakeFS:
    """Paths are normalised; ``/storage/emulated/0`` is the same place as ``/sdcard``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        now = int(time.time())
        self._entries: dict[str, Entry] = {d: Entry(S_DIR, mtime=now) for d in _DIRS}

    @staticmethod
    def norm(path: str) -> str:
        path = posixpath.normpath("/" + path.strip().lstrip("/"))
        if path == "/storage/emulated/0" or path.startswith("/storage/emulated/0/"):
            path = "/sdcard" + path[len("/storage/emulated/0"):]
        if path.startswith("/storage/self/primary"):
            path = "/sdcard" + path[len("/storage/self/primary"):]
        return path

    def get(self, path: str) -> Entry | None:
        with self._lock:
            return self._entries.get(self.norm(path))

    def read(self, path: str) -> bytes:
        """File bytes; raises FileNotFoundError / IsADirectoryError like a real open()."""
        entry = self.get(path)
        if entry is None:
            raise FileNotFoundError(path)
        if entry.is_dir:
            raise IsADirectoryError(path)
        return entry.data

    def write(self, path: str, data: bytes, *, append: bool = False, mode: int = S_FILE) -> None:
        """Raises FileNotFoundError when the parent directory is missing, IsADirectoryError for a dir."""
        path = self.norm(path)
        with self._lock:
            parent = self._entries.get(posixpath.dirname(path))
            if parent is None or not parent.is_dir:
                raise FileNotFoundError(path)
            old = self._entries.get(path)
            if old is not None and old.is_dir:
                raise IsADirectoryError(path)
            if append and old is not None:
                data = old.data + data
            self._entries[path] = Entry(stat.S_IFREG | (mode & 0o7777 or 0o660), data, int(time.time()))

    def remove(self, path: str, *, recursive: bool = False) -> None:
        path = self.norm(path)
        with self._lock:
            entry = self._entries.get(path)
            if entry is None:
                raise FileNotFoundError(path)
            if entry.is_dir:
                if not recursive:
                    raise IsADirectoryError(path)
                for key in [k for k in self._entries if k.startswith(path.rstrip("/") + "/")]:
                    del self._entries[key]
            del self._entries[path]

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        path = self.norm(path)
        with self._lock:
            if path in self._entries:
                if parents and self._entries[path].is_dir:
                    return
                raise FileExistsError(path)
            parent = posixpath.dirname(path)
            if parent not in self._entries and not parents:
                raise FileNotFoundError(path)
            todo = [path]
            while parents and posixpath.dirname(todo[-1]) not in self._entries:
                todo.append(posixpath.dirname(todo[-1]))
            for p in reversed(todo):
                self._entries[p] = Entry(S_DIR, mtime=int(time.time()))

    def listdir(self, path: str) -> list[tuple[str, Entry]]:
        path = self.norm(path)
        prefix = path.rstrip("/") + "/"
        with self._lock:
            if path not in self._entries:
                raise FileNotFoundError(path)
            if not self._entries[path].is_dir:
                raise NotADirectoryError(path)
            return sorted((k[len(prefix):], e) for k, e in self._entries.items()
                          if k.startswith(prefix) and k != path and "/" not in k[len(prefix):])
