"""``uiautomator dump`` as real phones answer it: bounded retries on its known errors, timed, counted.

Facts (docs/adb.md#uiautomator-dump, R4): every dump starts an app_process and a UiAutomation
connection and waits for one second without accessibility events (at most ten);
it fails with ``ERROR: could not get idle state.`` (a screen that never settles;
the process still exits 0), ``ERROR: null root node returned by
UiTestAutomationBridge.`` (no active window root, e.g. during a transition; 1 in
5 dumps on some phones), or ``Killed`` / ``UiAutomationService … already
registered!`` when another UiAutomation client (uiautomator2's agent, Appium's
server, a monkey-based tool) holds the phone. The retries:

==============  =============================================================
null root       again after a short pause, up to 4 times (mobile-mcp retries up to 10)
idle            once more with ``--compressed`` (reported to succeed where the full dump did not)
killed, held    ``ps`` names the holder; no retry when one is found (it will not let go)
no XML          once more
==============  =============================================================

A dump that still fails raises `remote.errors.DumpFailed` (its ``kind`` and the ``holder``);
callers degrade (the locator to screenshot tiers, a read-back to OCR).

`UiDumper` also remembers the last good dump with the link's ``generation`` when
it began: while no command that can change the screen has run since, a reader
that needs only the field's text (typing's read-back before typing, `UiDumper.focused_text`) reuses it. One
dump runs at a time (a second UiAutomation client is refused: ``already registered``),
so a dump started beside other work (`remote.runner.capture`) makes the next one wait.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from xml.etree import ElementTree

from remote.errors import DeviceCommandError, DeviceError, DumpFailed

logger = logging.getLogger(__name__)
DUMP_PATH = "/data/local/tmp/remote_uidump.xml"
NULL_ROOT_RETRIES = 4
RETRY_PAUSE_S = 0.3
DUMP_TIMEOUT_S = 30.0        # an idle failure alone takes 10 s on a real phone
FIELD_REUSE_S = 5.0          # a dump this recent, with no screen-changing command since, still shows the field

# Processes that hold UiAutomation, as `ps -A` names them, and what to call them.
HOLDERS: dict[str, str] = {
    "com.github.uiautomator": "uiautomator2 (openatx: its ATX agent / UiAutomator service)",
    "com.wetest.uia2": "uiautomator2 (openatx: its u2.jar server)",
    "io.appium.uiautomator2.server": "Appium's UiAutomator2 server",
    "com.android.commands.monkey": "a monkey-based tool (Fastbot, Maxim)",
    "uiautomator": "another uiautomator process (AndroidViewClient, a test runner)",
}


class DumpKind(enum.StrEnum):
    IDLE = "idle"                  # ERROR: could not get idle state.
    NULL_ROOT = "null_root"        # ERROR: null root node returned by UiTestAutomationBridge.
    KILLED = "killed"              # Killed (another UiAutomation client)
    REGISTERED = "registered"      # UiAutomationService ... already registered!
    NO_XML = "no_xml"              # anything else without a hierarchy


class TreeSource(Protocol):
    """A faster source of trees than the dump (`remote.core.device.fast_tree.FastTree`): None means dump."""

    def read(self) -> str | None: ...


class Shell(Protocol):
    serial: str
    generation: int

    def shell(self, args: Sequence[object] | str, timeout: float | None = None) -> str: ...


def classify(output: str) -> DumpKind | None:
    """What went wrong in a dump's output (None: it holds a whole hierarchy).

    >>> classify("ERROR: null root node returned by UiTestAutomationBridge.")
    <DumpKind.NULL_ROOT: 'null_root'>
    """
    start = output.find("<?xml")
    head = output[: start if start >= 0 else len(output)]
    if "idle state" in head:
        return DumpKind.IDLE
    if "null root node" in head:
        return DumpKind.NULL_ROOT
    if "already registered" in head:
        return DumpKind.REGISTERED
    if "Killed" in head:
        return DumpKind.KILLED
    if start < 0 or "</hierarchy>" not in output[start:]:
        return DumpKind.NO_XML
    return None


def holders_in(ps_output: str) -> list[str]:
    """The UiAutomation holders a ``ps -A`` listing shows (their names for people)."""
    names = {line.split()[-1] for line in ps_output.splitlines()[1:] if line.split()}
    return sorted({label for process, label in HOLDERS.items()
                   if any(n == process or n.startswith(process + ":") or n == process + ".test" for n in names)})


@dataclass
class DumpStats:
    """What the dumps of a session cost: counted by the bench and `remote doctor`."""

    attempts: int = 0
    ok: int = 0
    failed: int = 0
    reused: int = 0
    seconds: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)
    tree: dict[str, object] = field(default_factory=dict)   # the fast tree's report (`fast_tree.TreeReport`)

    def to_dict(self) -> dict[str, object]:
        out = {"attempts": self.attempts, "ok": self.ok, "failed": self.failed, "reused": self.reused,
               "seconds": round(self.seconds, 3), "kinds": dict(self.kinds)}
        return {**out, "tree": dict(self.tree)} if self.tree else out


@dataclass(frozen=True)
class DumpRecord:
    xml: str
    generation: int       # the link's screen-changing commands counted when the dump began
    finished: float       # time.monotonic()
    number: int           # 1, 2, ... in this session
    started: float = 0.0  # time.monotonic() when the attempt that gave it began


class UiDumper:
    """``UiDumper(link).dump() -> xml`` with the retries above; ``recent()`` gives a dump nothing has changed."""

    def __init__(self, link: Shell, *, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.link = link
        self.sleep = sleep
        self.clock = clock
        self.stats = DumpStats()
        self.last: DumpRecord | None = None
        self.holder = ""
        self._one_at_a_time = threading.Lock()
        self.underway: tuple[int, float] | None = None   # the running dump's (generation, start), for a watcher
        self.fast: TreeSource | None = None               # the resident server's trees (`fast_tree.FastTree`)

    def dump(self) -> str:
        """A fresh tree of the active window: from the resident server when `fast` serves (`fast_tree`), else
        ``uiautomator dump``; `DumpFailed` once the retries for its error are spent."""
        with self._one_at_a_time:
            try:
                return self._served() or self._dump()
            finally:
                self.underway = None

    def _served(self) -> str | None:
        """The server's tree (recorded like a dump), or None when the dump is to serve."""
        if self.fast is None:
            return None
        generation, started = self.link.generation, self.clock()
        self.underway = (generation, started)
        try:
            xml = self.fast.read()
        except DeviceError as exc:      # --tree server: no fallback
            self.stats.failed += 1
            raise DumpFailed(f"the tree server failed: {exc}", kind="server", serial=self.link.serial,
                             hint="run with --tree auto (falls back to uiautomator dump) or see `remote doctor`") \
                from exc
        if xml is None:
            return None
        self.stats.ok += 1
        self.last = DumpRecord(xml, generation, self.clock(), self.stats.ok, started)
        return xml

    def _dump(self) -> str:
        compressed, tries = False, 0
        while True:
            # counted before: a screen-changing command sent while it runs leaves a tree that may predate it
            generation, started = self.link.generation, self.clock()
            self.underway = (generation, started)
            out = self._once(compressed)
            kind = classify(out)
            if kind is None:
                xml = out[out.find("<?xml"):]
                self.stats.ok += 1
                self.last = DumpRecord(xml, generation, self.clock(), self.stats.ok, started)
                return xml
            self.stats.kinds[kind.value] = self.stats.kinds.get(kind.value, 0) + 1
            tries += 1
            if kind in (DumpKind.KILLED, DumpKind.REGISTERED):
                self.holder = self.find_holder()
                if self.holder or tries > 1:
                    raise self._failed(kind, out)
            elif kind is DumpKind.IDLE:
                if compressed:
                    raise self._failed(kind, out)
                compressed = True
            elif kind is DumpKind.NULL_ROOT and tries > NULL_ROOT_RETRIES or kind is DumpKind.NO_XML and tries > 1:
                raise self._failed(kind, out)
            logger.info("uiautomator dump failed (%s); retrying (%d)", kind.value, tries)
            self.sleep(RETRY_PAUSE_S)

    def recent(self, max_age_s: float, *, count: bool = True) -> DumpRecord | None:
        """The last dump, when no screen-changing command has run since and it is at most ``max_age_s`` old
        (``count``: the caller uses it, so it counts as reused)."""
        last = self.last
        if last is None or last.generation != self.link.generation or self.clock() - last.finished > max_age_s:
            return None
        self.stats.reused += count
        return last

    def focused_text(self, field_reader: Callable[[], str | None] | None = None) -> str | None:
        """Text of the focused field, read back from the UI dump (None when nothing is focused).

        An empty field's dump shows its hint as its text (``getTextForAccessibility``); when the dump also
        carries the hint (newer Androids), that text is read as empty. A recent dump that nothing has changed
        since is read again; when the dump fails, ``field_reader`` (the caller's reader of the field on the
        screen: OCR in its box) reads it when given and able, else the phone is dumped once more (its retries
        again), and `DumpFailed` is raised when that fails too.
        """
        # a resident server's tree is read, not reused: it is cheap, and one read moments after a command may
        # predate the app's drawing of it (a read-back polls: `text_input.TextTyper._read_back`)
        record = self.recent(FIELD_REUSE_S) if self.fast is None else None
        xml = record.xml if record is not None else None
        if xml is None:
            try:
                xml = self.dump()
            except DumpFailed:
                logger.warning("UI dump failed: reading the field back from the screenshot")
                text = field_reader() if field_reader is not None else None
                if text is not None:
                    return text
                # the field's place is unknown (no tree showed it yet): one more round of dumps, else not read,
                # which is not "nothing focused"
                xml = self.dump()
        root = ElementTree.fromstring(xml.encode("utf-8"))
        focused = [n for n in root.iter("node") if n.get("focused") == "true"]
        if not focused:
            return None
        node = focused[-1]
        text, hint = node.get("text", ""), node.get("hint")
        return "" if hint and text == hint else text

    def _once(self, compressed: bool) -> str:
        flag = " --compressed" if compressed else ""
        started = time.perf_counter()
        self.stats.attempts += 1
        try:
            return self.link.shell(f"rm -f {DUMP_PATH}; uiautomator dump{flag} {DUMP_PATH}; cat {DUMP_PATH}",
                                   timeout=DUMP_TIMEOUT_S)
        finally:
            self.stats.seconds += time.perf_counter() - started

    def find_holder(self) -> str:
        """The UiAutomation holders ``ps -A`` shows, for people ("" when none is known)."""
        try:
            return ", ".join(holders_in(self.link.shell("ps -A 2>/dev/null || ps")))
        except DeviceCommandError:
            return ""

    def _failed(self, kind: DumpKind, out: str) -> DumpFailed:
        self.stats.failed += 1
        message = out.strip().splitlines()[0][:200] if out.strip() else "no output"
        if self.holder:
            hint = (f"another automation tool holds the phone's UiAutomation: {self.holder}. Stop it (close its "
                    "app or server, `adb shell am force-stop` its package) and run again")
        elif kind in (DumpKind.KILLED, DumpKind.REGISTERED):
            hint = ("another UiAutomation client (uiautomator2, Appium, an accessibility test tool) seems to hold the "
                    "phone: stop it and run again")
        elif kind is DumpKind.IDLE:
            hint = "the screen never went idle (an animation, a video, a camera preview): steps use the screenshot"
        else:
            hint = "the phone gave no UI tree: steps use the screenshot"
        return DumpFailed(f"uiautomator dump failed ({kind.value}): {message}", kind=kind.value, holder=self.holder,
                          output=out[:2000], serial=self.link.serial, hint=hint)
