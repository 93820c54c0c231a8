"""Touch tools: tap, double tap, long press, drag, scroll, scroll until found, wait for, zoom.

Each acting function checks the app in front against the allow list first,
then resolves its target (`remote.mcp.aim`) and what a touch there reaches on a
tree dumped for this act, asks before a sensitive target (or an unknown one in
an app with sensitive steps), refuses a home-screen icon of an app not allowed,
acts through the gated controller (which checks the app in front again after
the act), and returns one sentence an agent can read: what was done, where in
device pixels and in the screenshot's pixels, and how the target was found.
"""

from __future__ import annotations

import time
from typing import Any

from remote.core.locate.screen import Screen
from remote.core.records import ActionName, LocateResult
from remote.errors import ActionError, LocateError
from remote.mcp import deadline
from remote.mcp.access import LAUNCHERS, AccessDenied, resolve_app
from remote.mcp.aim import Aim, aim, aim_located, require_locatable
from remote.mcp.asking import Asker, confirm_sensitive
from remote.mcp.session import Session
from remote.mcp.shot import encode_jpeg
from remote.runner.looking import Seen, seen_in
from remote.runner.seeking import Eyes, holds, scroll_until_visible, wait_until

DIRECTIONS = ("up", "down", "left", "right")
SCROLL_UNIT = 0.15          # one scroll "click" moves the content by 15 % of the screen
MAX_SWIPE = 0.6             # longest single swipe, as a share of the screen


def front_allowed(session: Session, doing: str) -> str:
    """The package in front, after checking that the agent may act in it."""
    package = session.front().get("package", "")
    session.gate.check(package, doing)
    return package


def _prepare(session: Session, asker: Asker, doing: str, **where: Any) -> tuple[Aim, str]:
    package = front_allowed(session, doing)
    target = aim(session, **where)
    return target, judge(session, asker, target, package, doing)


def judge(session: Session, asker: Asker, target: Aim, package: str, doing: str) -> str:
    """The gate's verdict on touching ``target`` in ``package``: '' or a note for the report; raises
    `AccessDenied` for a home-screen icon of an app not allowed, or a sensitive touch the person refused."""
    touch = target.touch
    if package in LAUNCHERS and touch is not None:
        app = _app_named(session, touch.name)
        if app and not session.gate.allows(app):
            raise AccessDenied(f"{doing} on {touch.name!r} on the home screen would open {app}, which is not in "
                               "this session's allowed apps; refused",
                               hint=f"call request_access(apps=[\"{app}\"]) first, then open_app")
    words = " ".join(w for w in (target.label, touch.words if touch else "") if w)
    return confirm_sensitive(asker, target.reaches if touch is not None else target.label or target.reaches,
                             package, session.registry, doing, words=words,
                             unknown=touch is None, system=session.gate.system)


def _app_named(session: Session, name: str) -> str:
    """The package a home-screen label names ("" when no module knows the name)."""
    try:
        return resolve_app(name, session.registry) if name and " · " not in name else ""
    except ActionError:
        return ""


def _report(verb: str, target: Aim, session: Session, note: str = "") -> str:
    text = f"{verb} {target.describe(session.shot)}"
    return f"{text}; {note}" if note else text


def tap(session: Session, asker: Asker, *, x: float | None = None, y: float | None = None,
        element: int | None = None, target_ref: str | None = None) -> str:
    target, note = _prepare(session, asker, "tap", x=x, y=y, element=element, target_ref=target_ref)
    screen = session.screen_at(target.point)
    session.device.tap(*target.point)
    session.acted()
    session.journal.touched(ActionName.TAP, target.point, target.label, screen, asked=note)
    return _report("tapped", target, session, note)


def double_tap(session: Session, asker: Asker, *, x: float | None = None, y: float | None = None,
               element: int | None = None, target_ref: str | None = None) -> str:
    target, note = _prepare(session, asker, "double-tap", x=x, y=y, element=element, target_ref=target_ref)
    # One shell command, `cmd input` twice 60 ms apart: inside Android's double-tap window (40-300 ms).
    real = session.device.double_tap(*target.point)
    session.acted()
    session.journal.unsaveable()
    if not real:
        note = "; ".join(n for n in (note, "two taps sent, but before Android 11 each starts its own `input` "
                                           "process (0.2-1 s): the app may see two single taps") if n)
    return _report("double-tapped", target, session, note)


def long_press(session: Session, asker: Asker, *, x: float | None = None, y: float | None = None,
               element: int | None = None, target_ref: str | None = None, duration_ms: int = 800) -> str:
    target, note = _prepare(session, asker, "long-press", x=x, y=y, element=element, target_ref=target_ref)
    screen = session.screen_at(target.point)
    held = max(400, min(int(duration_ms), 10_000))
    session.device.long_press(*target.point, duration_ms=held)
    session.acted()
    session.journal.touched(ActionName.LONG_PRESS, target.point, target.label, screen, asked=note,
                            duration_ms=held)
    return _report(f"long-pressed ({duration_ms} ms)", target, session, note)


def drag(session: Session, asker: Asker, start: dict[str, Any], end: dict[str, Any], duration_ms: int = 500) -> str:
    package = front_allowed(session, "drag")
    a = aim(session, **start, what="the start")
    b = aim(session, **end, what="the end")
    notes = [judge(session, asker, a, package, "drag from"), judge(session, asker, b, package, "drop on")]
    note = "; ".join(dict.fromkeys(n for n in notes if n))
    held = max(50, min(int(duration_ms), 10_000))
    session.device.swipe(*a.point, *b.point, duration_ms=held)
    session.acted()
    session.journal.swiped(a.point, b.point, held)
    text = f"dragged from {a.describe(session.shot)} to {b.describe(session.shot)} in {duration_ms} ms"
    return f"{text}; {note}" if note else text


def scroll_vector(direction: str, amount: int, start: tuple[int, int], size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """Finger swipes that scroll the content ``amount`` clicks in ``direction`` (content moves that way,
    so the finger moves the other way), starting at ``start``, kept inside the screen."""
    if direction not in DIRECTIONS:
        raise ActionError(f"unknown direction {direction!r}", hint="use up, down, left or right")
    if not 1 <= amount <= 20:
        raise ActionError(f"amount {amount} is out of range", hint="use 1-20 (one = 15 % of the screen)")
    w, h = size
    vertical = direction in ("up", "down")
    side = h if vertical else w
    sign = -1 if direction in ("down", "right") else 1     # "down": the finger moves up
    total = amount * SCROLL_UNIT * side
    lo, hi = 0.05 * side, 0.95 * side
    swipes = []
    while total > 1:
        step = min(total, MAX_SWIPE * side)
        total -= step
        pos: float = start[1] if vertical else start[0]
        # Start far enough from the edge the finger moves towards to fit the whole swipe.
        pos = max(pos, lo + step) if sign < 0 else min(pos, hi - step)
        stop = pos + sign * step
        if vertical:
            swipes.append((start[0], int(pos), start[0], int(stop)))
        else:
            swipes.append((int(pos), start[1], int(stop), start[1]))
    return swipes


def scroll(session: Session, asker: Asker, direction: str, amount: int = 3, *, x: float | None = None,
           y: float | None = None, element: int | None = None, target_ref: str | None = None) -> str:
    front_allowed(session, "scroll")
    size = session.adb.window_size()
    if x is None and element is None and not target_ref:
        target = Aim((size[0] // 2, size[1] // 2), None, "the middle of the screen")
    else:
        target = aim(session, x=x, y=y, element=element, target_ref=target_ref)
    swipes = scroll_vector(direction, int(amount), target.point, size)
    for sx, sy, ex, ey in swipes:
        session.device.swipe(sx, sy, ex, ey, duration_ms=300)
        session.journal.swiped((sx, sy), (ex, ey), 300)
    session.acted()
    return f"scrolled {direction} by {amount} ({len(swipes)} swipe{'s' * (len(swipes) > 1)}) at " \
           f"{target.describe(session.shot)}"


class _Looking:
    """How the MCP tools look for a target (`remote.runner.seeking`): a fresh screen with its tree, the
    session's locator (every tier the target's form allows), and the last result kept for the reply."""

    def __init__(self, session: Session, target_ref: str) -> None:
        require_locatable(session, target_ref)
        self.session, self.target_ref = session, target_ref
        self.last: tuple[LocateResult, Screen] | None = None
        self.eyes = Eyes(self._look, self._judge)

    def _look(self, n: int) -> Screen:
        deadline.current().check()
        return self.session.live_screen()

    def _judge(self, screen: Screen) -> Seen:
        result = self.session.locator.locate(self.target_ref, screen)
        self.last = (result, screen)
        return seen_in(result, screen, [self.target_ref])

    def aim(self) -> Aim:
        """The aim of the last look (a LocateError when it found several places or none)."""
        assert self.last is not None, "looked at least once"
        return aim_located(self.session, self.target_ref, *self.last)

    def detail(self) -> str:
        try:
            return self.aim().describe(self.session.shot)
        except LocateError as exc:
            return exc.message


class _CallClock:
    """The seconds of one MCP call; its sleeps end with the call's deadline (`remote.mcp.deadline`)."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def sleep(self, seconds: float) -> None:
        deadline.current().sleep(max(0.05, seconds))


def scroll_to(session: Session, asker: Asker, target_ref: str, direction: str = "down", max_swipes: int = 8) -> str:
    """Scroll until ``target_ref`` is on screen; stop at the end of the list (`remote.runner.seeking`)."""
    front_allowed(session, "scroll")
    size = session.adb.window_size()
    looking = _Looking(session, target_ref)

    def swipe() -> None:
        sx, sy, ex, ey = scroll_vector(direction, 3, (size[0] // 2, size[1] // 2), size)[0]
        session.device.swipe(sx, sy, ex, ey, duration_ms=300)
        session.acted()
        deadline.current().sleep(0.3)

    limit = max(0, min(int(max_swipes), 30))
    got = scroll_until_visible(looking.eyes, swipe, limit)
    if got.seen.found:
        found = looking.aim()      # several places nearly equally well: the LocateError says which
        return f"{found.describe(session.shot)} after {got.swipes} scroll{'s' * (got.swipes != 1)} {direction}"
    if got.ended:
        raise LocateError(f"{target_ref} not found: the list ended after {got.swipes} scrolls {direction}",
                          target_ref=target_ref, hint="try the other direction")
    raise LocateError(f"{target_ref} not found after {limit} scrolls {direction}: {looking.detail()}",
                      target_ref=target_ref, hint="raise max_swipes or try the other direction")


def wait_for(session: Session, target_ref: str, gone: bool = False, timeout: float = 10.0,
             interval: float = 0.5) -> str:
    """Poll until ``target_ref`` is present (or, with ``gone``, is not); a LocateError after ``timeout``.

    Present as the flow's ``wait_until`` means it (`remote.runner.seeking`): a place matches, even several
    nearly equally well. The call's deadline stops the polling too (`remote.mcp.deadline`)."""
    limit = max(0.0, min(float(timeout), 300.0, deadline.current().remaining()))
    looking = _Looking(session, target_ref)
    got = wait_until(looking.eyes, not gone, int(limit * 1000), _CallClock(), max(0.05, float(interval)))
    waited = got.waited_ms / 1000
    if holds(got.seen, not gone):
        if gone:
            return f"{target_ref} gone after {waited:.1f} s"
        session.journal.found(target_ref)
        return f"{target_ref} present: {looking.detail()} after {waited:.1f} s"
    deadline.current().check()      # the call's deadline, not the wait's own timeout, ended it
    state = "still there" if gone else "did not appear"
    raise LocateError(f"{target_ref} {state} within {limit:g} s", target_ref=target_ref,
                      hint="take a screenshot to see what the phone shows")


def zoom(session: Session, region: list[float], max_side: int | None = None) -> tuple[bytes, str]:
    """A region of the last screenshot, cut from the native-resolution frame (not upscaled from the JPEG)."""
    shot = session.require_shot()
    box = shot.region_to_device(region)
    front_allowed(session, "show a zoomed region of")    # an app not allowed is not shown
    image, secure = session.capture()
    crop = image.crop(box)
    jpeg, size = encode_jpeg(crop, session.image_side(max_side))
    x1, y1, x2, y2 = box
    note = " (secure screen: black)" if secure else ""
    text = (f"zoom of image region {list(region)} = device ({x1},{y1})-({x2},{y2}), "
            f"{x2 - x1}x{y2 - y1} native pixels shown as {size[0]}x{size[1]}{note}. Coordinates you send "
            "stay in the last screenshot's space.")
    return jpeg, text

