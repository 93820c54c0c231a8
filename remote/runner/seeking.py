"""Looking again and again: scroll until a target shows, wait until it is there (or gone).

One loop each, for the flow steps (``scroll_until_visible``, ``wait_until``, ``assert_visible``:
`remote.runner.flow_looks`) and the MCP tools (``scroll_to``, ``wait_for``: `remote.mcp.gestures`). A door
gives the loop how it looks (a screen), how it judges a screen (a `Seen`), how it swipes and how time
passes; the rules are here, once:

- **present** means ``Seen.found is True``: at least one place matches the target, whether one or several
  nearly equally well (an ambiguous match is on the screen; choosing among the places is a tap's problem,
  not a look's). ``found is None`` (a secure screen without a UI tree: nothing can tell) is neither present
  nor gone: a wait goes on looking and ends at its timeout.
- **the end of a list** is a swipe after which the list shows the same page (`looking.page_of`: the UI
  tree's texts when the tree can tell, else the picture's pixels), so a scroll stops there instead of
  spending its remaining swipes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from remote.core.locate.screen import Screen
from remote.runner.looking import Seen, page_of


@dataclass(frozen=True)
class Sought:
    """How a scroll or a wait ended: the last look's verdict and screen, how many swipes and looks it took."""

    seen: Seen
    screen: Screen
    swipes: int = 0
    looks: int = 1
    waited_ms: int = 0
    ended: bool = False       # a scroll: the list stopped moving (its end) before the target showed


@dataclass(frozen=True)
class Eyes:
    """How a door looks: ``look(n)`` the screen of its n-th look (0: the first), ``judge`` a screen."""

    look: Callable[[int], Screen]
    judge: Callable[[Screen], Seen]


def scroll_until_visible(eyes: Eyes, swipe: Callable[[], None], max_swipes: int) -> Sought:
    """Swipe until the target is present, at most ``max_swipes`` times, or until the list stops moving."""
    previous: object = None
    swipes = 0
    while True:
        shot = eyes.look(swipes)
        seen = eyes.judge(shot)
        page = page_of(shot)
        ended = previous is not None and page == previous
        if seen.found or ended or swipes >= max_swipes:
            return Sought(seen, shot, swipes, swipes + 1, ended=ended and not seen.found)
        previous = page
        swipe()
        swipes += 1


def wait_until(eyes: Eyes, present: bool, timeout_ms: int, clock: Clock, poll_s: float) -> Sought:
    """Look until the target is present (``present``) or gone, at most ``timeout_ms`` and one more look."""
    start = clock.elapsed()
    looks = 0
    while True:
        shot = eyes.look(looks)
        looks += 1
        seen = eyes.judge(shot)
        waited = int((clock.elapsed() - start) * 1000)
        if holds(seen, present) or waited >= timeout_ms:
            return Sought(seen, shot, looks=looks, waited_ms=waited)
        clock.sleep(min(poll_s, (timeout_ms - waited) / 1000))


class Clock(Protocol):
    """What a wait needs of time: seconds passed, and a sleep (`remote.runner.clock.Clock`, an MCP call's)."""

    def elapsed(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


def holds(seen: Seen, present: bool) -> bool:
    """Whether a look shows the target ``present`` (or, with False, gone); a look that cannot tell: neither."""
    return seen.found is present
