"""What a model's reply said, typed: read once (:mod:`remote.ai.reader`), used everywhere after.

A reply is read into a :class:`Reading`: the items of its final answer (a box, a
point, an element number, a not-found, or an agent action) with the coordinate
:class:`Convention` they were read in. Nothing here knows about screens; mapping
numbers back to device pixels is :mod:`remote.ai.frames`' job.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from remote.errors import FailureReason, RemoteError


class Scale(enum.StrEnum):
    """What a coordinate's number means."""

    PIXEL = "pixel"           # pixels of the frame the model saw
    NORM1000 = "norm1000"     # 0-1000 of the frame (relative)
    NORM999 = "norm999"       # 0-999 of the frame (relative; Qwen3's mobile agent)
    FRACTION = "fraction"     # 0-1 of the frame (ShowUI)

    @property
    def full(self) -> float | None:
        """The value that means "the far edge" (None for pixels: the frame's size)."""
        return {Scale.NORM1000: 1000.0, Scale.NORM999: 999.0, Scale.FRACTION: 1.0}.get(self)


@dataclass(frozen=True)
class Convention:
    """How a family writes coordinates: the scale, and which comes first in a list (``yx``: Gemini)."""

    scale: Scale
    order: str = "xy"

    def words(self, frame: tuple[int, int] | None = None) -> str:
        """The convention in a sentence a model (and a person) reads: "pixels of this 588x1288 image, x first"."""
        first = "y first: [ymin, xmin, ymax, xmax], [y, x]" if self.order == "yx" else "x first"
        if self.scale is Scale.PIXEL:
            size = f" {frame[0]}x{frame[1]}" if frame else ""
            return f"absolute pixels of this{size} image (0,0 is the top-left corner), {first}"
        if self.scale is Scale.FRACTION:
            return f"fractions 0-1 of the image width and height (0,0 top-left, 1,1 bottom-right), {first}"
        top = int(self.scale.full or 1000)
        return f"a 0-{top} scale of the image (0,0 top-left, {top},{top} bottom-right), {first}"


@dataclass(frozen=True)
class Point:
    """A point, x first (a ``yx`` reply is already swapped), in ``convention``."""

    x: float
    y: float
    convention: Convention


@dataclass(frozen=True)
class Box:
    """A box, x first and ordered (``x1 <= x2``), in ``convention``."""

    x1: float
    y1: float
    x2: float
    y2: float
    convention: Convention

    @property
    def center(self) -> Point:
        return Point((self.x1 + self.x2) / 2, (self.y1 + self.y2) / 2, self.convention)


@dataclass(frozen=True)
class Mark:
    """A set-of-mark answer: the number drawn on the element (1-based)."""

    number: int


@dataclass(frozen=True)
class NotFound:
    reason: str = ""
    suggestion: str = ""


class Verb(enum.StrEnum):
    """What a phone-agent model asked to do, across the AutoGLM, UI-TARS and mobile_use grammars."""

    TAP = "tap"
    DOUBLE_TAP = "double_tap"
    LONG_PRESS = "long_press"
    TYPE = "type"
    SWIPE = "swipe"            # from ``point`` to ``end``, or ``direction`` from ``point``
    LAUNCH = "launch"
    BACK = "back"
    HOME = "home"
    ENTER = "enter"
    WAIT = "wait"
    TAKE_OVER = "take_over"    # the model hands the phone to a person (AutoGLM Take_over, UI-TARS call_user)
    FINISH = "finish"          # the model claims the task is over (finish / finished / terminate)


@dataclass(frozen=True)
class Action:
    """One step a phone-agent model asked for; coordinates in the convention it was read in."""

    verb: Verb
    point: Point | None = None
    end: Point | None = None
    text: str = ""             # TYPE's text, LAUNCH's app, FINISH's / TAKE_OVER's message
    direction: str = ""        # SWIPE by direction (up, down, left, right)
    seconds: float = 0.0       # WAIT, LONG_PRESS
    success: bool | None = None   # FINISH: what the model claims (terminate(status=...)); None: not said
    sensitive: str = ""        # the model flags the step (AutoGLM's Tap(..., message="重要操作"))


Item = Box | Point | Mark | NotFound | Action


@dataclass(frozen=True)
class Reading:
    """A reply, read: the items of its final answer, in order, and how it was written.

    ``items`` has several entries when the final answer lists several (a Qwen list of
    boxes): the caller decides whether they agree. ``data`` is the final answer's JSON
    object when it was one (``confidence``, ``reason``...).
    """

    items: tuple[Item, ...]
    shape: str                                  # json | tokens | call | tool_call | text
    data: dict[str, Any] = field(default_factory=dict)
    thought: str = ""

    @property
    def first(self) -> Item:
        return self.items[0]


class ReplyError(RemoteError, ValueError):
    """The reply holds nothing usable (or not what the caller needs); the message says what was wrong."""

    reason = FailureReason.MODEL
