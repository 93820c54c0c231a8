"""The `sync:` service: STAT/STA2/LST2, LIST/LIS2, RECV, SEND, QUIT over the phone's filesystem.

Each request is ``ID`` (4 bytes) + u32 length + payload, little-endian::

    -> b"STAT" + u32(len) + b"/sdcard/x"   <- b"STAT" + u32 mode + u32 size + u32 mtime
    -> b"RECV" + u32(len) + path           <- b"DATA" + u32 n + bytes ... b"DONE" + u32 0
    -> b"SEND" + u32(len) + b"path,33188"  -> b"DATA" + ... -> b"DONE" + u32 mtime   <- b"OKAY" + u32 0
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from remote.sim.device import Phone

CHUNK = 64 * 1024
MAX_PATH = 1024
_ST2 = struct.Struct("<IQQIIIIQqqq")   # error, dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime


class SyncClosed(Exception):
    pass


def read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise SyncClosed
        buf.extend(chunk)
    return bytes(buf)


def serve_sync(sock: socket.socket, phone: Phone) -> None:
    """Answer sync requests until QUIT or the client closes."""
    try:
        while True:
            header = read_exact(sock, 8)
            cmd, length = header[:4], struct.unpack("<I", header[4:])[0]
            if cmd == b"QUIT":
                return
            if length > MAX_PATH:
                _fail(sock, "path too long")
                return
            path = read_exact(sock, length).decode("utf-8", "replace")
            if cmd == b"STAT":
                entry = phone.fs.get(path)
                values = (entry.mode, len(entry.data), entry.mtime) if entry else (0, 0, 0)
                sock.sendall(b"STAT" + struct.pack("<III", *values))
            elif cmd in (b"STA2", b"LST2"):
                sock.sendall(cmd + _stat2(phone, path))
            elif cmd in (b"LIST", b"LIS2"):
                _list(sock, phone, path, v2=cmd == b"LIS2")
            elif cmd == b"RECV":
                _recv(sock, phone, path)
            elif cmd == b"SEND":
                _send(sock, phone, path)
            else:
                _fail(sock, f"unknown sync command {cmd.decode('ascii', 'replace')}")
                return
    except (SyncClosed, OSError):
        return


def _fail(sock: socket.socket, message: str) -> None:
    data = message.encode()
    sock.sendall(b"FAIL" + struct.pack("<I", len(data)) + data)


def _stat2(phone: Phone, path: str, name_entry: object = None) -> bytes:
    entry = phone.fs.get(path) if name_entry is None else name_entry
    if entry is None:
        return _ST2.pack(errno.ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    t = entry.mtime  # type: ignore[attr-defined]
    return _ST2.pack(0, 0x10302, abs(hash(path)) % 100000, entry.mode, 1, 2000, 2000,  # type: ignore[attr-defined]
                     len(entry.data), t, t, t)  # type: ignore[attr-defined]


def _list(sock: socket.socket, phone: Phone, path: str, v2: bool) -> None:
    try:
        items = phone.fs.listdir(path)
    except OSError:
        items = []
    out = bytearray()
    for name, entry in [(".", phone.fs.get(path)), ("..", phone.fs.get(os.path.dirname(path) or "/")), *items]:
        if entry is None:
            continue
        raw = name.encode()
        if v2:
            out += b"DNT2" + _stat2(phone, path, entry) + struct.pack("<I", len(raw)) + raw
        else:
            out += b"DENT" + struct.pack("<IIII", entry.mode, len(entry.data), entry.mtime, len(raw)) + raw
    out += b"DONE" + (bytes(_ST2.size + 4) if v2 else bytes(16))
    sock.sendall(bytes(out))


def _recv(sock: socket.socket, phone: Phone, path: str) -> None:
    try:
        data = phone.fs.read(path)
    except IsADirectoryError:
        _fail(sock, "Is a directory")
        return
    except OSError:
        _fail(sock, "No such file or directory")
        return
    view = memoryview(data)
    for start in range(0, len(data), CHUNK):
        piece = view[start:start + CHUNK]
        sock.sendall(b"DATA" + struct.pack("<I", len(piece)))
        sock.sendall(piece)
    sock.sendall(b"DONE" + struct.pack("<I", 0))


def _send(sock: socket.socket, phone: Phone, spec: str) -> None:
    path, _, mode_text = spec.rpartition(",")
    if not path:
        path, mode_text = spec, ""
    try:
        mode = int(mode_text) if mode_text else stat.S_IFREG | 0o644
    except ValueError:
        mode = stat.S_IFREG | 0o644
    data = bytearray()
    while True:
        header = read_exact(sock, 8)
        kind, length = header[:4], struct.unpack("<I", header[4:])[0]
        if kind == b"DATA":
            if length > CHUNK:
                _fail(sock, "data chunk too large")
                raise SyncClosed
            data.extend(read_exact(sock, length))
        elif kind == b"DONE":
            break
        else:
            _fail(sock, f"unexpected {kind!r} while receiving a file")
            raise SyncClosed
    parent = os.path.dirname(path)
    try:
        if parent and phone.fs.get(parent) is None:
            phone.fs.mkdir(parent, parents=True)  # we advertise fixed_push_mkdir
        phone.fs.write(path, bytes(data), mode=mode)
    except OSError as exc:
        _fail(sock, f"couldn't create file: {os.strerror(exc.errno or errno.EISDIR)}")
        return
    sock.sendall(b"OKAY" + struct.pack("<I", 0))
