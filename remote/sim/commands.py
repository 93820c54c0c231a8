"""Shell builtins and small tools (echo, cat, ls, rm, grep, getprop, wm, settings, ...).

The Android services (input, am, ime, dumpsys, screencap, uiautomator, monkey, pm)
live in `remote.sim.android`; `COMMANDS` maps every name to its function and `run`
executes a command line with them.
"""

from __future__ import annotations

import re
import stat
import threading
import time
from typing import TYPE_CHECKING

from remote.sim import android, real_screen, realism, roms
from remote.sim.shell import CommandFn, Ctx, ShellExit, Writer, execute

if TYPE_CHECKING:
    from remote.sim.device import Phone


def echo(ctx: Ctx, argv: list[str]) -> int:
    args, newline = argv[1:], True
    if args and args[0] == "-n":
        args, newline = args[1:], False
    ctx.out(" ".join(args) + ("\n" if newline else ""))
    return 0


def cat(ctx: Ctx, argv: list[str]) -> int:
    paths = [a for a in argv[1:] if a != "-"] or None
    if paths is None:
        ctx.out(ctx.stdin)
        return 0
    status = 0
    for path in paths:
        try:
            ctx.out(ctx.phone.fs.read(path))
        except IsADirectoryError:
            ctx.err(f"cat: {path}: Is a directory\n")
            status = 1
        except OSError:
            ctx.err(f"cat: {path}: No such file or directory\n")
            status = 1
    return status


def rm(ctx: Ctx, argv: list[str]) -> int:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    status = 0
    for path in (a for a in argv[1:] if not a.startswith("-")):
        try:
            ctx.phone.fs.remove(path, recursive="r" in flags or "R" in flags)
        except IsADirectoryError:
            ctx.err(f"rm: {path}: is a directory\n")
            status = 1
        except OSError:
            if "f" not in flags:
                ctx.err(f"rm: {path}: No such file or directory\n")
                status = 1
    return status


def ls(ctx: Ctx, argv: list[str]) -> int:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    paths = [a for a in argv[1:] if not a.startswith("-")] or ["/"]
    status = 0
    for path in paths:
        entry = ctx.phone.fs.get(path)
        if entry is None:
            ctx.err(f"ls: {path}: No such file or directory\n")
            status = 1
            continue
        items = ctx.phone.fs.listdir(path) if entry.is_dir else [(path, entry)]
        for name, e in items:
            if "l" in flags:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.mtime))
                ctx.out(f"{stat.filemode(e.mode)} 1 shell shell {len(e.data):>8} {when} {name}\n")
            else:
                ctx.out(name + "\n")
    return status


def mkdir(ctx: Ctx, argv: list[str]) -> int:
    parents = "-p" in argv
    for path in (a for a in argv[1:] if not a.startswith("-")):
        try:
            ctx.phone.fs.mkdir(path, parents=parents)
        except FileExistsError:
            ctx.err(f"mkdir: '{path}': File exists\n")
            return 1
        except OSError:
            ctx.err(f"mkdir: '{path}': No such file or directory\n")
            return 1
    return 0


def touch(ctx: Ctx, argv: list[str]) -> int:
    for path in (a for a in argv[1:] if not a.startswith("-")):
        try:
            ctx.phone.fs.write(path, b"", append=True)
        except OSError:
            ctx.err(f"touch: '{path}': No such file or directory\n")
            return 1
    return 0


def sleep(ctx: Ctx, argv: list[str]) -> int:
    try:
        seconds = float(argv[1]) if len(argv) > 1 else 0.0
    except ValueError:
        ctx.err(f"sleep: invalid number '{argv[1]}'\n")
        return 1
    ctx.sleep(min(seconds, 600.0))
    return 0


def exit_(ctx: Ctx, argv: list[str]) -> int:
    try:
        raise ShellExit(int(argv[1]) if len(argv) > 1 else 0)
    except ValueError:
        raise ShellExit(2) from None


_GREP_USAGE = "usage: grep [-EFcinoqvwx] [-e PATTERN]... PATTERN [FILE...]\n"


def _bre_to_python(pattern: str) -> str:
    """A basic regular expression (``a\\|b``, ``\\(x\\)``) as Python's: escaped specials become operators."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "|(){}+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + ch if ch in "|(){}+?" else ch)
        i += 1
    return "".join(out)


def _grep_args(argv: list[str]) -> tuple[set[str], list[str], list[str]] | None:
    """(flags, patterns, files) from grep's arguments, as toybox reads them; None on a usage error."""
    flags: set[str] = set()
    patterns: list[str] = []
    rest: list[str] = []
    args, i = argv[1:], 0
    while i < len(args):
        a = args[i]
        if a == "--":
            rest.extend(args[i + 1:])
            break
        if a.startswith("-") and len(a) > 1 and not rest:
            for j, flag in enumerate(a[1:]):
                if flag == "e":
                    value = a[j + 2:] or (args[i + 1] if i + 1 < len(args) else None)
                    if value is None:
                        return None
                    patterns.append(value)
                    i += 0 if a[j + 2:] else 1
                    break
                flags.add(flag)
        else:
            rest.append(a)
        i += 1
    if not patterns:
        if not rest:
            return None
        patterns, rest = [rest[0]], rest[1:]
    return flags, patterns, rest


def _grep_regex(flags: set[str], patterns: list[str]) -> re.Pattern[str]:
    parts = []
    for pattern in patterns:
        for piece in pattern.split("\n"):
            body = re.escape(piece) if "F" in flags else piece if "E" in flags else _bre_to_python(piece)
            if "w" in flags:
                body = rf"(?<!\w)(?:{body})(?!\w)"
            if "x" in flags:
                body = rf"^(?:{body})$"
            parts.append(f"(?:{body})")
    return re.compile("|".join(parts), re.IGNORECASE if "i" in flags else 0)


def grep(ctx: Ctx, argv: list[str]) -> int:
    """toybox grep: -E extended, -F fixed, -i, -v, -o, -c, -q, -n, -w, -x, -e PATTERN; stdin or files."""
    parsed = _grep_args(argv)
    if parsed is None:
        ctx.err(_GREP_USAGE)
        return 2
    flags, patterns, files = parsed
    try:
        rx = _grep_regex(flags, patterns)
    except re.error as exc:
        ctx.err(f"grep: bad regex '{patterns[0]}': {exc}\n")
        return 2
    sources, status = _grep_sources(ctx, files)
    total = 0
    for path, data in sources:
        prefix = f"{path}:" if len(files) > 1 else ""
        count = _grep_text(ctx, rx, flags, data.decode("utf-8", "replace"), prefix)
        if "c" in flags:
            ctx.out(f"{prefix}{count}\n")
        total += count
    return 0 if total else status


def _grep_sources(ctx: Ctx, files: list[str]) -> tuple[list[tuple[str, bytes]], int]:
    """What grep reads: stdin when no file is named, else each file (a missing one: said, status 2)."""
    sources: list[tuple[str, bytes]] = [("", ctx.stdin)] if not files else []
    status = 1
    for path in files:
        try:
            sources.append((path, ctx.phone.fs.read(path)))
        except OSError:
            ctx.err(f"grep: {path}: No such file or directory\n")
            status = 2
    return sources, status


def _grep_text(ctx: Ctx, rx: re.Pattern[str], flags: set[str], text: str, prefix: str) -> int:
    """The matching lines of one source written out as the flags say (-v -o -n -q -c); how many matched."""
    count = 0
    for number, line in enumerate(text.splitlines(), start=1):
        hits = [m.group(0) for m in rx.finditer(line) if m.group(0)] if "o" in flags else []
        found = bool(hits) if "o" in flags else rx.search(line) is not None
        if found == ("v" in flags):
            continue
        count += 1
        if "q" in flags or "c" in flags:
            continue
        lead = prefix + (f"{number}:" if "n" in flags else "")
        if "o" in flags and "v" not in flags:
            ctx.out("".join(f"{lead}{h}\n" for h in hits))
        else:
            ctx.out(f"{lead}{line}\n")
    return count


def head_tail(ctx: Ctx, argv: list[str]) -> int:
    count = 10
    args = argv[1:]
    if args and args[0] == "-n" and len(args) > 1:
        count, args = int(args[1]), args[2:]
    elif args and args[0].startswith("-") and args[0][1:].isdigit():
        count, args = int(args[0][1:]), args[1:]
    lines = ctx.stdin.decode("utf-8", "replace").splitlines(keepends=True)
    ctx.out("".join(lines[:count] if argv[0] == "head" else lines[-count:] if count else []))
    return 0


def getprop(ctx: Ctx, argv: list[str]) -> int:
    props = ctx.phone.properties()
    if len(argv) == 1:
        ctx.out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
    else:
        ctx.out(props.get(argv[1], argv[2] if len(argv) > 2 else "") + "\n")
    return 0


def wm(ctx: Ctx, argv: list[str]) -> int:
    w, h = ctx.phone.size
    sub = argv[1] if len(argv) > 1 else ""
    if sub == "size":
        ctx.out(f"Physical size: {w}x{h}\n")
    elif sub == "density":
        ctx.out(f"Physical density: {ctx.phone.density_dpi}\n")
    else:
        ctx.err("usage: wm [size|density] ...\n")
        return 255 if sub else 0
    return 0


def settings(ctx: Ctx, argv: list[str]) -> int:
    phone = ctx.phone
    if len(argv) < 4 or argv[1] not in ("get", "put", "delete", "list") or \
            argv[2] not in ("system", "secure", "global"):
        ctx.err("Invalid command: " + " ".join(argv[1:]) + "\n")
        return 255
    verb, namespace, key = argv[1], argv[2], argv[3]
    if verb in ("put", "delete") and namespace in ("secure", "global") and phone.scenario.ime_refused:
        ctx.err(roms.executing(verb, roms.SETTINGS_PUT_REFUSED))   # the same switch guards these (roms: R2)
        return 255
    with phone.lock:
        values = {
            "default_input_method": phone.ime,
            "enabled_input_methods": ":".join(phone.imes_enabled),
            "airplane_mode_on": str(int(phone.settings["airplane"])),
            "wifi_on": str(int(phone.settings["wlan"])),
            "bluetooth_on": str(int(phone.settings["bluetooth"])),
            "screen_off_timeout": "60000",
        }
        if namespace == "system":
            values |= real_screen.rotation_settings(phone)
        if verb == "get":
            ctx.out(values.get(key, "null") + "\n")
        elif verb == "put" and len(argv) > 4 and namespace == "system" and key in real_screen.ROTATION_SETTINGS:
            refused = real_screen.put_rotation(phone, key, argv[4])
            if refused:
                ctx.err(roms.executing(verb, refused))
                return 255
        elif verb == "put" and len(argv) > 4:
            value = argv[4]
            if key == "default_input_method":
                phone.ime = value
            elif key in ("airplane_mode_on", "wifi_on", "bluetooth_on"):
                name = {"airplane_mode_on": "airplane", "wifi_on": "wlan", "bluetooth_on": "bluetooth"}[key]
                phone.settings[name] = value == "1"
            phone.changed()
    return 0


def true_(ctx: Ctx, argv: list[str]) -> int:
    return 0


def false_(ctx: Ctx, argv: list[str]) -> int:
    return 1


def fixed(text: str) -> CommandFn:
    def command(ctx: Ctx, argv: list[str]) -> int:
        ctx.out(text)
        return 0
    return command


def logcat(ctx: Ctx, argv: list[str]) -> int:
    if "-c" in argv:
        return 0
    ctx.out("--------- beginning of main\n")
    if "-d" in argv:
        return 0
    while not ctx.stop.is_set():  # streams until the client goes away (the server sets stop)
        ctx.sleep(1.0)
    return 0


COMMANDS: dict[str, CommandFn] = {
    "echo": echo, "cat": cat, "rm": rm, "ls": ls, "mkdir": mkdir, "touch": touch, "sleep": sleep,
    "exit": exit_, "grep": grep, "head": head_tail, "tail": head_tail, "getprop": getprop, "wm": wm,
    "settings": realism.native_tool(settings), "true": true_, "false": false_, ":": true_, "cd": true_, "sync": true_,
    "pwd": fixed("/\n"), "whoami": fixed("shell\n"), "logcat": logcat,
    "id": fixed("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log) context=u:r:shell:s0\n"),
    "uname": fixed("Linux\n"),
    **android.COMMANDS,
}


def run(phone: Phone, line: str, write: Writer, stop: threading.Event | None = None) -> int:
    """Run one shell command line on ``phone``; returns its exit status (``echo hi | grep h`` -> 0)."""
    return execute(phone, line, write, COMMANDS, stop)
