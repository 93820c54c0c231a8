"""The device shell: a small POSIX-sh subset in front of the phone's commands.

Enough of mksh for what adb clients send: words with '…', "…", \\ escapes and
``$?``/``$VAR``; ``NAME=value cmd``; ``;``, ``&&``, ``||``, ``|``; redirections ``>``, ``>>``, ``<``,
``2>``, ``2>&1``, ``>&2``; ``exit``. Text inside quotes is never executed — that
is what keeps ``input text '"; reboot; echo "'`` harmless. Unknown commands answer
``/system/bin/sh: X: not found`` with status 127, as the real shell does.

`execute(phone, line, write, commands)` executes a line with the given command table
(`remote.sim.commands.run` passes the phone's); `write(fd, data)` receives stdout (1)
and stderr (2) as they are produced.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from remote.sim.device import Phone

log = logging.getLogger(__name__)
Writer = Callable[[int, bytes], None]
SH = "/system/bin/sh"
ENV = {"HOME": "/", "PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/odm/bin",
       "EXTERNAL_STORAGE": "/sdcard", "ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "USER": "shell",
       "TMPDIR": "/data/local/tmp", "SHELL": SH}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPS = ("&&", "||", ">>", ">&", "<&", ";", "|", "&", ">", "<", "(", ")")


class ShellSyntaxError(Exception):
    pass


class ShellExit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


# ---------------------------------------------------------------- tokens

Part = tuple[str, str]   # ("lit", text) or ("var", name)


@dataclass
class Word:
    parts: list[Part] = field(default_factory=list)

    def expand(self, status: int) -> str:
        out = []
        for kind, value in self.parts:
            if kind == "lit":
                out.append(value)
            elif value == "?":
                out.append(str(status))
            elif value == "$":
                out.append("4242")
            else:
                out.append(ENV.get(value, ""))
        return "".join(out)


Token = tuple[str, object]  # ("word", Word) | ("op", str) | ("io", int)


def tokenize(line: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t\r\n":
            if c == "\n":
                tokens.append(("op", ";"))
            i += 1
            continue
        if c == "#":
            break
        op = next((o for o in _OPS if line.startswith(o, i)), None)
        if op:
            tokens.append(("op", op))
            i += len(op)
            continue
        word, i = _read_word(line, i)
        if (i < n and line[i] in "<>" and len(word.parts) == 1 and word.parts[0][0] == "lit"
                and word.parts[0][1].isdigit() and not _quoted_start(line, i, word)):
            tokens.append(("io", int(word.parts[0][1])))
        else:
            tokens.append(("word", word))
    return tokens


def _quoted_start(line: str, end: int, word: Word) -> bool:
    return line[end - len(word.parts[0][1]) - 1:end - len(word.parts[0][1])] in ("'", '"')


def _read_word(line: str, i: int) -> tuple[Word, int]:
    word = Word()
    buf: list[str] = []

    def flush() -> None:
        if buf:
            word.parts.append(("lit", "".join(buf)))
            buf.clear()

    n = len(line)
    while i < n:
        c = line[i]
        if c in " \t\r\n" or any(line.startswith(o, i) for o in _OPS):
            break
        if c == "\\":
            if i + 1 < n and line[i + 1] != "\n":
                buf.append(line[i + 1])
            i += 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("syntax error: unterminated quoted string")
            buf.append(line[i + 1:end])
            i = end + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    raise ShellSyntaxError("syntax error: unterminated quoted string")
                d = line[i]
                if d == '"':
                    i += 1
                    break
                if d == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
                    buf.append(line[i + 1])
                    i += 2
                elif d == "$":
                    i = _read_var(line, i, buf, flush, word)
                else:
                    buf.append(d)
                    i += 1
        elif c == "$":
            i = _read_var(line, i, buf, flush, word)
        else:
            buf.append(c)
            i += 1
    flush()
    if not word.parts:
        word.parts.append(("lit", ""))
    return word, i


def _read_var(line: str, i: int, buf: list[str], flush: Callable[[], None], word: Word) -> int:
    nxt = line[i + 1] if i + 1 < len(line) else ""
    if nxt in ("?", "$"):
        flush()
        word.parts.append(("var", nxt))
        return i + 2
    if nxt == "{":
        end = line.find("}", i)
        if end > 0:
            flush()
            word.parts.append(("var", line[i + 2:end]))
            return end + 1
    j = i + 1
    while j < len(line) and (line[j].isalnum() or line[j] == "_"):
        j += 1
    if j == i + 1:
        buf.append("$")
        return i + 1
    flush()
    word.parts.append(("var", line[i + 1:j]))
    return j


# ---------------------------------------------------------------- parse


@dataclass
class Command:
    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[int, str, Word]] = field(default_factory=list)


def parse(tokens: list[Token]) -> list[tuple[str, list[Command]]]:
    """[(connector, pipeline)] where connector is ';' (or start), '&&' or '||'."""
    seq: list[tuple[str, list[Command]]] = []
    connector, pipeline, cmd = ";", [], Command()
    i = 0

    def end_command() -> None:
        nonlocal cmd
        if not cmd.words and not cmd.redirects:
            raise ShellSyntaxError("syntax error: unexpected operator")
        pipeline.append(cmd)
        cmd = Command()

    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "word":
            cmd.words.append(value)  # type: ignore[arg-type]
        elif kind == "io" or value in (">", ">>", "<", ">&", "<&"):
            redirect, i = _redirect(tokens, i)
            cmd.redirects.append(redirect)
        elif value == "|":
            end_command()
        elif value in (";", "&", "&&", "||"):
            if cmd.words or cmd.redirects:
                end_command()
            elif pipeline or value in ("&&", "||"):
                raise ShellSyntaxError(f"syntax error: '{value}' unexpected")
            if pipeline:
                seq.append((connector, pipeline))
            connector, pipeline = (";" if value == "&" else str(value)), []
        else:
            raise ShellSyntaxError(f"syntax error: '{value}' unexpected")
        i += 1
    if cmd.words or cmd.redirects:
        end_command()
    if pipeline:
        seq.append((connector, pipeline))
    elif connector in ("&&", "||"):
        raise ShellSyntaxError("syntax error: unexpected end of file")
    return seq


def _redirect(tokens: list[Token], i: int) -> tuple[tuple[int, str, Word], int]:
    """The redirection starting at ``tokens[i]`` (``2>&1``, ``> file``, ``< file``): (fd, operator, target) and
    the index of its last token."""
    kind, value = tokens[i]
    fd = value if kind == "io" else None
    if kind == "io":
        i += 1
        if i >= len(tokens) or tokens[i][0] != "op":
            raise ShellSyntaxError("syntax error: bad redirection")
        value = tokens[i][1]
    op = str(value)
    i += 1
    if i >= len(tokens) or tokens[i][0] != "word":
        raise ShellSyntaxError(f"syntax error: '{op}' unexpected")
    default_fd = 0 if op.startswith("<") else 1
    target = tokens[i][1]
    assert isinstance(target, Word)
    return (default_fd if fd is None else int(str(fd)), op, target), i


# ---------------------------------------------------------------- run


@dataclass
class Ctx:
    """What a command gets: its phone, stdin, writers, and an interruptible sleep."""

    phone: Phone
    stdin: bytes
    write: Writer
    stop: threading.Event
    env: dict[str, str] = field(default_factory=dict)   # ``NAME=value cmd``: the command's own variables

    def out(self, text: str | bytes) -> None:
        self.write(1, text.encode() if isinstance(text, str) else text)

    def err(self, text: str | bytes) -> None:
        self.write(2, text.encode() if isinstance(text, str) else text)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.stop.wait(seconds)


CommandFn = Callable[[Ctx, list[str]], int]


def execute(phone: Phone, line: str, write: Writer, commands: dict[str, CommandFn],
            stop: threading.Event | None = None) -> int:
    """Run one shell command line with the commands in ``commands``; returns its exit status."""
    stop = stop or threading.Event()
    try:
        seq = parse(tokenize(line))
    except ShellSyntaxError as exc:
        write(2, f"{SH}: {exc}\n".encode())
        return 1
    status = 0
    try:
        for connector, pipeline in seq:
            if stop.is_set():
                break
            if (connector == "&&" and status != 0) or (connector == "||" and status == 0):
                continue
            status = _run_pipeline(phone, pipeline, write, stop, status, commands)
    except ShellExit as exc:
        status = exc.status
    return status & 0xFF


def _run_pipeline(phone: Phone, pipeline: list[Command], write: Writer, stop: threading.Event, status: int,
                  commands: dict[str, CommandFn]) -> int:
    stdin = b""
    for index, cmd in enumerate(pipeline):
        last = index == len(pipeline) - 1
        captured = bytearray()
        if last:
            sink = write
        else:
            def sink(fd: int, data: bytes, _buf: bytearray = captured) -> None:
                if fd == 1:
                    _buf.extend(data)
                else:
                    write(fd, data)
        status = _run_command(phone, cmd, stdin, sink, stop, status, commands)
        stdin = bytes(captured)
    return status


def _run_command(phone: Phone, cmd: Command, stdin: bytes, write: Writer, stop: threading.Event,
                 status: int, commands: dict[str, CommandFn]) -> int:
    argv = [w.expand(status) for w in cmd.words]
    env: dict[str, str] = {}
    while argv and _ASSIGNMENT.match(argv[0]):         # ``CLASSPATH=/data/local/tmp/u2.jar app_process ...``
        name, _, value = argv.pop(0).partition("=")
        env[name] = value
    targets: dict[int, object] = {1: 1, 2: 2}       # fd -> 1/2 (the stream) or a file path
    files: dict[str, bytearray] = {}
    for fd, op, word in cmd.redirects:
        target = word.expand(status)
        if op in (">&", "<&"):
            if target.isdigit() and int(target) in targets:
                targets[fd] = targets[int(target)]
            continue
        if op == "<":
            try:
                stdin = phone.fs.read(target)
            except OSError:
                write(2, f"{SH}: can't open {target}: No such file or directory\n".encode())
                return 1
            continue
        if target == "/dev/null":
            targets[fd] = None
            continue
        try:
            if op == ">":
                phone.fs.write(target, b"")
            else:
                phone.fs.write(target, b"", append=True)
        except OSError:
            write(2, f"{SH}: can't create {target}: No such file or directory\n".encode())
            return 1
        files.setdefault(target, bytearray())
        targets[fd] = target

    def routed(fd: int, data: bytes) -> None:
        target = targets.get(fd, fd)
        if target is None:
            return
        if isinstance(target, str):
            files[target].extend(data)
        else:
            write(int(target), data)  # type: ignore[call-overload]

    if not argv:
        result = 0
    else:
        fn = commands.get(argv[0].rsplit("/", 1)[-1] if argv[0].startswith("/system/bin/") else argv[0])
        ctx = Ctx(phone, stdin, routed, stop, env)
        if fn is None:
            routed(2, f"{SH}: {argv[0]}: not found\n".encode())
            result = 127
        else:
            try:
                result = fn(ctx, argv)
            except ShellExit:
                raise
            except Exception as exc:  # a crash in the simulation must answer like a crashed process, not hang
                log.exception("sim command %r failed", argv)
                routed(2, f"{argv[0]}: {type(exc).__name__}: {exc}\n".encode())
                result = 255
            finally:
                for path, data in files.items():
                    phone.fs.write(path, bytes(data), append=True)
    return result
