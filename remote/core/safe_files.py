"""Files we write that must survive a full disk, a kill, and other local users.

Two things, both small:

* ``write_atomic(path, data)``: a record (run.json, report.html, batch.json, a state
  file) is written to a temporary file in the same folder, flushed to the disk
  (``fsync``) and renamed over the old one. A reader sees the old file or the new
  one, never half of one; a full disk leaves the old file as it was (and raises).
* ``private_dir("ime")``: a per-user folder for the fixed names we keep between runs
  (the IME to restore, the MCP teach pictures, the per-phone locks)::

      $XDG_RUNTIME_DIR/remote/ime      when the session has a runtime folder of its own
      $TMPDIR/remote-<uid>/ime         otherwise (/tmp/remote-1000/ime)

  Each level is created with mode 0700; an existing one must be a real folder (not
  a symlink) owned by this user, or it is refused: in a shared /tmp another user can
  create ``/tmp/remote-mcp`` first and plant symlinks in it. Files there are opened
  with ``O_NOFOLLOW`` and checked to be ours (``read_private``, ``open_private``),
  and replaced by rename (``write_atomic(..., private=True)``), which never follows a
  symlink planted at the name.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from pathlib import Path

from remote.errors import ConfigError

PRIVATE_MODE = 0o700
MAX_PRIVATE_READ = 1_000_000   # the state files are a few hundred bytes


def write_atomic(path: str | Path, data: str | bytes, *, private: bool = False, durable: bool = True) -> Path:
    """Write ``data`` to ``path`` all at once: temp file beside it, fsync, rename. Raises OSError (the old
    file, if any, is left whole). ``private``: the file gets mode 0600 instead of the umask's. ``durable=False``
    skips the fsyncs (screenshots: whole or absent still, but a power cut may lose them)."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = _create_temp(path, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
            out.flush()
            if durable:
                os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _sync_dir(path.parent)
    return path


def _create_temp(path: Path, mode: int) -> tuple[int, Path]:
    """An exclusively created, never-followed temp file in ``path``'s folder (the umask applies to ``mode``)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue


def _sync_dir(folder: Path) -> None:
    """The rename itself reaches the disk (best effort: not every file system lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------- per-user private folders
def private_root() -> Path:
    """This user's private folder for ``remote`` (not created here): see the module docstring."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and _owned_private(Path(runtime)):
        return Path(runtime) / "remote"
    return Path(tempfile.gettempdir()) / f"remote-{os.geteuid()}"


def private_dir(name: str, root: Path | None = None) -> Path:
    """``<private root>/<name>``, created 0700 and checked at each level; ConfigError when refused."""
    base = ensure_private(root or private_root())
    return ensure_private(base / name)


def ensure_private(folder: Path) -> Path:
    """Create ``folder`` (mode 0700) or check that it is a real folder of this user's that nobody else can
    enter; a folder of ours with looser bits is tightened. ConfigError when it is a symlink or someone else's."""
    try:
        os.mkdir(folder, PRIVATE_MODE)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ConfigError(f"cannot create the private folder {folder}: {exc.strerror or exc}",
                          hint="set TMPDIR to a folder of yours") from exc
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise ConfigError(f"cannot check the private folder {folder}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"refusing {folder}: it is a symlink or not a folder (someone may have planted it)",
                          hint="remove it, or set TMPDIR to a folder of yours")
    if info.st_uid != os.geteuid():
        raise ConfigError(f"refusing {folder}: it belongs to user id {info.st_uid}, not to you",
                          hint="another local user created it first: remove it, or set TMPDIR to a folder of yours")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, PRIVATE_MODE)
    return folder


def _owned_private(folder: Path) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not stat.S_IMODE(info.st_mode) & 0o077


def open_private(path: Path, flags: int = os.O_RDWR | os.O_CREAT) -> int:
    """A file descriptor on ``path``, never through a symlink, only if the file is a regular file of ours."""
    fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise PermissionError(f"{path} is not a regular file of this user's")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_private(path: Path, limit: int = MAX_PRIVATE_READ) -> bytes | None:
    """The bytes of a private file, or None when it is absent, a symlink, someone else's, or unreadable."""
    try:
        fd = open_private(path, os.O_RDONLY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read(limit)
        except OSError:
            return None
