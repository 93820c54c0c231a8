"""Where a UI tree comes from: the resident server (`tree_server`) or ``uiautomator dump``, and when to switch.

``--tree auto`` (the default; config ``REMOTE_TREE``) reads trees from uiautomator2's server and falls back to
the dump for the rest of the run when the server cannot serve:

===========================  ==================================================================
launch fails                 the dump (the reason is in the run's record)
"already registered"         the dump; the holder is named (``ps -A``), as a failed dump names it
the server dies              one relaunch; when that fails or it dies again, the dump
===========================  ==================================================================

The server is stopped before any fallback dump: two UiAutomation clients never run at once (the dump
would be refused while the server holds the phone). ``--tree server`` never falls back (a failure is a
`DumpFailed`), ``--tree dump`` never starts the server.

One server per phone and process (`_SHARED`): a ``batch``, ``worker``, ``mcp`` or ``studio`` session that
opens the phone again finds it running and pays no cold start. A tree read that equals the one before
although a screen-changing command ran since is read again (a long-lived UiAutomation can answer a cached
tree: docs/devices.md "Stale trees").
"""

from __future__ import annotations

import atexit
import enum
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from remote.core.device.transport import AdbLink
from remote.core.device.tree_server import TreeServer, TreeServerError, Trouble
from remote.errors import DeviceError

logger = logging.getLogger(__name__)
STALE_REREADS, STALE_PAUSE_S = 2, 0.05
_SHARED: dict[tuple[str, int, str], TreeServer] = {}
_SHARED_LOCK = threading.Lock()


class TreeMode(enum.StrEnum):
    AUTO = "auto"
    SERVER = "server"
    DUMP = "dump"


class TreeState(enum.StrEnum):
    NOT_STARTED = "not_started"
    SERVING = "serving"
    OFF = "off"          # the dump serves the rest of the run


@dataclass
class TreeReport:
    """What the run's record and summary say about the fast tree."""

    mode: str = TreeMode.AUTO.value
    state: str = TreeState.NOT_STARTED.value
    version: str = ""
    cold_start_s: float | None = None     # None: not started by this run (0.0: found running)
    reads: int = 0
    read_seconds: float = 0.0
    relaunches: int = 0
    stale_rereads: int = 0
    shot_failures: int = 0                # screenshots the server could not give (screencap took them)
    fallback: str = ""                    # why the dump serves instead ("" while the server serves)
    trouble: str = ""
    holder: str = ""

    def to_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["read_seconds"] = round(self.read_seconds, 3)
        out["cold_start_s"] = None if self.cold_start_s is None else round(self.cold_start_s, 3)
        return out


def default_mode() -> TreeMode:
    """``REMOTE_TREE`` (the CLI reads it through `remote.config.Settings`, and ``--tree`` wins), else auto."""
    value = (os.environ.get("REMOTE_TREE") or TreeMode.AUTO.value).strip().lower()
    return TreeMode(value) if value in TreeMode.__members__.values() else TreeMode.AUTO


FRAMES_MODES = ("needed", "every")


def default_frames() -> str:
    """``REMOTE_FRAMES`` (the CLI reads it through `remote.config.Settings`, and ``--frames`` wins), else needed:
    with cheap trees a screen's frame is taken when something reads its pixels (docs/devices.md "Frames")."""
    value = (os.environ.get("REMOTE_FRAMES") or FRAMES_MODES[0]).strip().lower()
    return value if value in FRAMES_MODES else FRAMES_MODES[0]


def shared_server(link: AdbLink) -> TreeServer:
    """The process's server for this phone: the running one, else a new one on ``link``."""
    key = (link.host, link.port, link.serial)
    with _SHARED_LOCK:
        server = _SHARED.get(key)
        if server is None or not server.running:
            server = _SHARED[key] = TreeServer(link)
        return server


def release(link: AdbLink) -> None:
    """Stop this process's server on the phone of ``link``, if one runs (a dump is about to run there: a studio
    or an MCP session kept one, and a run in the same process reads by dump)."""
    with _SHARED_LOCK:
        server = _SHARED.get((link.host, link.port, link.serial))
    if server is not None and server.running:
        server.stop()


def _stop_all() -> None:
    for server in list(_SHARED.values()):
        server.stop()


atexit.register(_stop_all)


class FastTree:
    """``read() -> xml`` from the server, or None when the dump is to serve (the server then stopped)."""

    def __init__(self, link: AdbLink, mode: TreeMode | str = TreeMode.AUTO, *,
                 holder_of: Callable[[], str] = lambda: "", clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.link = link
        self.mode = TreeMode(mode)
        self.holder_of = holder_of
        self.clock, self.sleep = clock, sleep
        self.report = TreeReport(mode=self.mode.value)
        self.server: TreeServer | None = None
        self._last: tuple[str, int] | None = None     # the last tree read and the link's count when it was read
        self._warming: threading.Thread | None = None   # a start begun ahead of the first read (`warm`)

    @property
    def state(self) -> TreeState:
        return TreeState(self.report.state)

    @property
    def cheap(self) -> bool:
        """Trees come (or are about to come) from the server, not the dump."""
        return self.mode is not TreeMode.DUMP and self.state is not TreeState.OFF

    @property
    def answering(self) -> bool:
        """The server serves now: a read goes to it at once (none waits for a start under way)."""
        warming = self._warming
        return self.mode is not TreeMode.DUMP and self.state is TreeState.SERVING and \
            (warming is None or not warming.is_alive())

    def warm(self) -> None:
        """Start the server now, beside a run's first commands (the wake check, the app's launch), so that the
        first read finds it answering; a failure is met by that read (the dump then serves, as always)."""
        if self.mode is TreeMode.DUMP or self.state is not TreeState.NOT_STARTED or self._warming is not None:
            return

        def start() -> None:
            try:
                self._start()
            except TreeServerError:      # --tree server: the state is OFF and the first read raises it
                pass
            except DeviceError as exc:   # the link itself: still not started, the first read meets it and says it
                logger.info("the tree server did not start ahead: %s", exc.message)

        self._warming = threading.Thread(target=start, name="u2-start", daemon=True)
        self._warming.start()

    def ready(self, within: float | None = None) -> None:
        """Wait for a server still starting (`warm`): a step's tree waits for it too, so its frame costs nothing
        more by waiting, and a start that fails ends within its own bound; ``within``: at most this long."""
        if self._warming is not None:
            self._warming.join(within)

    def shot(self) -> bytes | None:
        """A JPEG of the screen from the server while it serves (never started for a frame); None: screencap."""
        self.ready()
        server = self.server
        if self.mode is TreeMode.DUMP or self.state is not TreeState.SERVING or server is None or not server.running:
            return None
        try:
            return server.shot()
        except TreeServerError as exc:   # the next read finds out whether the server is gone
            self.report.shot_failures += 1
            logger.info("u2.jar takeScreenshot failed (%s): screencap takes this frame", exc)
            return None

    def read(self) -> str | None:
        self.ready()
        if self.mode is TreeMode.SERVER and self.state is TreeState.OFF:   # never the dump: the same failure again
            raise TreeServerError(Trouble(self.report.trouble), self.report.fallback)
        if self.mode is TreeMode.DUMP or self.state is TreeState.OFF:
            release(self.link)   # never both at once: a server this process left on the phone stops first
            return None
        if self.state is TreeState.NOT_STARTED and not self._start():
            return None
        generation, started = self.link.generation, self.clock()
        try:
            xml = self._read_once()
        except TreeServerError as exc:
            failed: TreeServerError | None = exc
            if exc.trouble is Trouble.DIED and not self.report.relaunches:
                failed = self._relaunch(exc)
            if failed is None:
                try:
                    xml = self._read_once()
                except TreeServerError as again:
                    failed = again
            if failed is not None:
                self._off(failed)
                return None
        xml = self._fresh(xml, generation)
        self.report.read_seconds += self.clock() - started
        self._last = (xml, generation)
        return xml

    def stop(self) -> None:
        """Stop the server (another UiAutomation client is about to run)."""
        if self.server is not None:
            self.server.stop()

    def _read_once(self) -> str:
        assert self.server is not None
        xml = self.server.read()
        self.report.reads += 1
        return xml

    def _fresh(self, xml: str, generation: int) -> str:
        """A tree equal to the last one although the screen may have changed since: read again (stale cache)."""
        last = self._last
        if last is None or last[1] == generation or last[0] != xml:
            return xml
        for _ in range(STALE_REREADS):
            self.sleep(STALE_PAUSE_S)
            self.report.stale_rereads += 1
            try:
                again = self._read_once()
            except TreeServerError:
                return xml
            if again != xml:
                logger.info("u2.jar answered a stale tree; the next read differs")
                return again
        return xml

    def _start(self) -> bool:
        self.server = shared_server(self.link)
        if self.server.running:
            self.report.cold_start_s = 0.0
        else:
            try:
                self.report.cold_start_s = self.server.start()
            except TreeServerError as exc:
                self._off(exc)
                return False
        self.report.version = self.server.version
        self.report.state = TreeState.SERVING.value
        return True

    def _relaunch(self, exc: TreeServerError) -> TreeServerError | None:
        """Stop and start the server once; the error when it does not come back."""
        logger.warning("u2.jar died (%s): relaunching it once", exc)
        self.report.relaunches += 1
        assert self.server is not None
        self.server.stop()
        try:
            self.server.start()
        except TreeServerError as failed:
            return failed
        return None

    def _off(self, exc: TreeServerError) -> None:
        """The dump serves from now on; the server is stopped first (never two UiAutomation clients)."""
        self.stop()
        self.report.state = TreeState.OFF.value
        self.report.trouble = exc.trouble.value
        if exc.trouble is Trouble.HELD:
            self.report.holder = self.holder_of()
        self.report.fallback = fallback_text(exc, self.report.holder, self.mode)
        logger.warning("fast tree off: %s", self.report.fallback)
        if self.mode is TreeMode.SERVER:
            raise TreeServerError(exc.trouble, self.report.fallback, exc.output) from exc


def fallback_text(exc: TreeServerError, holder: str, mode: TreeMode = TreeMode.AUTO) -> str:
    """Why the server gives no tree, and what serves instead, said for people."""
    then = "trees come from uiautomator dump" if mode is TreeMode.AUTO else "--tree server reads no tree"
    if exc.trouble is Trouble.HELD:
        who = holder or "an unnamed UiAutomation client"
        return f"another automation tool holds the phone's UiAutomation ({who}): {then}"
    return f"{exc} ({exc.trouble.value}): {then}"


def describe(report: TreeReport | dict[str, Any]) -> str:
    """One line for the run's summary: ``fast tree: u2.jar 0.4.1, cold start 0.81 s, 9 reads``."""
    data = report.to_dict() if isinstance(report, TreeReport) else report
    if data.get("mode") == TreeMode.DUMP.value:
        return "UI trees: uiautomator dump (--tree dump)"
    if data.get("fallback"):
        return f"UI trees: {data['fallback']}"
    if data.get("state") == TreeState.NOT_STARTED.value:
        return "UI trees: none read"
    cold = data.get("cold_start_s")
    start = "already running" if cold == 0.0 else f"cold start {cold:.2f} s"
    return f"UI trees: u2.jar {data.get('version')} ({start}), {data.get('reads')} reads"
