"""Waiting for the screen to show an action's effect, when trees are cheap (the resident tree server).

With ``uiautomator dump`` a step sleeps its configured wait (``wait_after``) and then dumps: the dump itself
waits for a second without UI events, and costs 1-3 s, so it cannot be asked often. The resident server answers
in 5-100 ms without waiting for anything, so the step asks it instead (`await_drawn`): the tree is read every
`POLL_S` until it shows the action's effect and a second read agrees (the screen stopped moving), and the wait
ends there, at most the configured wait. What counts as the effect:

- after a tap, a key, a swipe or typing: the tree's shape differs from the screen the step acted on. The shape
  is every node's class, resource id, description, bounds and state (checked, selected, focused, package),
  without its text: a clock or a counter that ticks in the window is no effect of the step;
- after an app's launch: the active window is the app's (its package).

A screen that shows nothing of the kind by the configured wait is read on for up to `LATE_S` more (a phone
slower than the wait: a tree read then would be of the screen before the action, docs/devices.md), and then the
step goes on as after a plain wait.

The step is judged on a tree and a frame of the screen after this wait, read side by side. Given ``beside`` (the
frame), each read that may be the agreeing one (the read before it showed the effect) is made beside a frame:
when it agrees, that read and that frame are the screen after the wait (`Drawn.tree`, `Drawn.beside`), as a tree
and a frame read side by side right after it would be, less one read. When it does not (the screen was still
changing), the frame is waited for and dropped, and the reads go on.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from remote.errors import DeviceError

POLL_S = 0.05      # between the starts of two reads (a read that takes longer is followed at once)
LATE_S = 0.3       # read on this much past the configured wait while the screen shows no change at all
_NODE = re.compile(r"<node\b([^>]*)>")
_ATTR = re.compile(r'\b(class|resource-id|content-desc|bounds|checked|selected|focused|package)="([^"]*)"')
_PACKAGE = re.compile(r'<node\b[^>]*?\bpackage="([^"]*)"')

Shape = tuple[tuple[tuple[str, str], ...], ...]


def shape(xml: str) -> Shape:
    """The tree without its texts: each node's class, id, description, bounds and state, in order."""
    return tuple(tuple(_ATTR.findall(attrs)) for attrs in _NODE.findall(xml))


def package(xml: str) -> str | None:
    """The active window's package: its first node's."""
    found = _PACKAGE.search(xml)
    return found.group(1) if found else None


@dataclass(frozen=True)
class Drawn:
    """How a wait ended: the reads made, whether the effect was seen and held (``shown``), and then the read that
    held it (``tree``) with what ``beside`` gave while that read ran (None: not asked, or it failed)."""

    reads: int
    shown: bool
    tree: str | None = None
    beside: Any = None


def _given(frame: Future[Any] | None) -> Any:
    """What ``frame`` gave, once done (None: not asked, or it raised: the screen's own frame, taken after the
    wait, meets that and says it)."""
    return None if frame is None or frame.exception() is not None else frame.result()


def await_drawn(read: Callable[[], str], wait_s: float, sleep: Callable[[float], None], *,
                before: str | None = None, app: str | None = None,
                beside: Callable[[], Any] | None = None) -> Drawn:
    """Read trees (``read``) until one shows the effect (its shape differs from ``before``'s, or its package is
    ``app``) and the next agrees, at most ``wait_s`` (`LATE_S` more when nothing had changed by then: an effect
    shown in that time gets its second read too). ``beside`` (a frame) is run beside each read that may agree.
    Without ``before`` or ``app`` there is nothing to wait for: a plain wait."""
    if before is None and app is None:
        sleep(wait_s)
        return Drawn(0, False)
    was = None if before is None else shape(before)
    # the time spent: the reads' own, and the pauses asked of ``sleep`` (counted as asked, so that a sleep that
    # skips waits, as the tests' does, never turns this into a busy loop)
    spent, reads, seen, late = 0.0, 0, None, False
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="frame-beside-read") as frames:
        while True:
            begun = time.monotonic()
            frame = frames.submit(beside) if beside is not None and seen is not None else None
            try:
                xml = read()
            except DeviceError:   # the step's own read after the wait meets the error and says it
                _given(frame)
                sleep(max(0.0, wait_s - spent))
                return Drawn(reads, False)
            reads += 1
            now = shape(xml)
            arrived = package(xml) == app if app is not None else now != was
            if arrived and now == seen:
                return Drawn(reads, True, xml, _given(frame))
            _given(frame)   # of a screen still changing: waited for, not the one after the wait
            took = time.monotonic() - begun
            spent += took
            seen = now if arrived else None
            late = late or (seen is None and spent >= wait_s)   # past the wait with nothing shown: read on a while
            if spent >= wait_s + (LATE_S if late else 0.0):
                return Drawn(reads, False)
            pause = max(0.0, POLL_S - took)
            sleep(pause)
            spent += pause
