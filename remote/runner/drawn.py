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
step goes on as after a plain wait. The tree and the frame the step is judged on are read after this, side by
side, as always: the reads here only decide when.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

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


def await_drawn(read: Callable[[], str], wait_s: float, sleep: Callable[[float], None], *,
                before: str | None = None, app: str | None = None) -> tuple[int, bool]:
    """Read trees (``read``) until one shows the effect (its shape differs from ``before``'s, or its package is
    ``app``) and the next agrees, at most ``wait_s`` (`LATE_S` more when nothing had changed by then: an effect
    shown in that time gets its second read too); (the reads made, whether the effect was seen and held). Without
    ``before`` or ``app`` there is nothing to wait for: a plain wait."""
    if before is None and app is None:
        sleep(wait_s)
        return 0, False
    was = None if before is None else shape(before)
    # the time spent: the reads' own, and the pauses asked of ``sleep`` (counted as asked, so that a sleep that
    # skips waits, as the tests' does, never turns this into a busy loop)
    spent, reads, seen, late = 0.0, 0, None, False
    while True:
        begun = time.monotonic()
        try:
            xml = read()
        except DeviceError:   # the step's own read after the wait meets the error and says it
            sleep(max(0.0, wait_s - spent))
            return reads, False
        reads += 1
        took = time.monotonic() - begun
        spent += took
        now = shape(xml)
        arrived = package(xml) == app if app is not None else now != was
        if arrived and now == seen:
            return reads, True
        seen = now if arrived else None
        late = late or (seen is None and spent >= wait_s)   # past the wait with nothing shown: read on a while
        if spent >= wait_s + (LATE_S if late else 0.0):
            return reads, False
        pause = max(0.0, POLL_S - took)
        sleep(pause)
        spent += pause
