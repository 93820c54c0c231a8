"""A locate reply, read against the frame the model saw: device boxes, a mark, or not found (pure).

:func:`read_located` is the ``read`` step of a locate call: it turns the reply into
device pixels through the family's convention and :class:`~remote.ai.frames.Frame`,
or raises ``ValueError`` with a problem that names the family's own convention
(the corrective re-ask repeats it). :func:`agree` says whether several boxes of
one answer mean one element.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from remote.ai.answers import Action, Box, Mark, NotFound, Point, Verb
from remote.ai.families import Family
from remote.ai.frames import Frame
from remote.ai.reader import read_reply

BBox = tuple[int, int, int, int]
POINTING = (Verb.TAP, Verb.LONG_PRESS, Verb.DOUBLE_TAP)
AGREE_SLACK = 0.1     # centres may sit 10 % outside the largest box and still mean the same element


@dataclass(frozen=True)
class Located:
    """What a locate reply says, in device pixels: ``boxes`` (a point is a 1 px box), or ``mark``, or
    ``not_found``; ``values`` are the numbers as the model wrote them (x first), for the record."""

    boxes: tuple[BBox, ...] = ()
    mark: int | None = None
    not_found: NotFound | None = None
    values: tuple[tuple[float, ...], ...] = ()
    shape: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def _numbers(item: Box | Point) -> tuple[float, ...]:
    if isinstance(item, Box):
        return item.x1, item.y1, item.x2, item.y2
    return item.x, item.y


def read_located(raw: str, family: Family, frame: Frame, *, marks: int = 0) -> Located:
    """The reply ``raw`` of ``family`` about ``frame`` -> :class:`Located`; ``ValueError`` naming the problem
    and the convention to answer in. ``marks``: how many numbered boxes were shown (0: none, a number is
    then not an answer)."""
    reading = read_reply(raw, family.convention)
    convention = family.convention.words(frame.seen)
    first = reading.first
    if isinstance(first, NotFound):
        return Located(not_found=first, shape=reading.shape, data=reading.data)
    if isinstance(first, Action) and first.verb is Verb.FINISH:
        return Located(not_found=NotFound(first.text), shape=reading.shape)
    if isinstance(first, Mark):
        if not marks:
            raise ValueError(f"a number ({first.number}) came back, but the element's position was asked: "
                             f"give it as {convention}")
        if not 1 <= first.number <= marks:
            raise ValueError(f"mark {first.number} is not one of the numbers 1-{marks}")
        return Located(mark=first.number, shape=reading.shape, data=reading.data)
    boxes: list[BBox] = []
    values: list[tuple[float, ...]] = []
    for item in reading.items:
        geometry = item.point if isinstance(item, Action) and item.verb in POINTING else item
        if not isinstance(geometry, Box | Point):
            what = item.verb.value if isinstance(item, Action) else type(item).__name__.lower()
            raise ValueError(f"a {what} came back, not the element's position ({convention})")
        values.append(_numbers(geometry))
        if isinstance(geometry, Box):
            box = frame.box(geometry)
        else:
            point = frame.point(geometry)
            box = (point[0], point[1], point[0] + 1, point[1] + 1) if point else None
        if box is None:
            shown = [round(v, 3) for v in _numbers(geometry)]
            raise ValueError(f"{shown} lies outside the image: coordinates must be {convention}")
        boxes.append(box)
    return Located(tuple(boxes), values=tuple(values), shape=reading.shape, data=reading.data)


def _centre(box: BBox) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def agree(boxes: Sequence[BBox]) -> bool:
    """Several boxes of one answer mean one element: every centre lies inside the largest box (10 % slack)."""
    if len(boxes) < 2:
        return True
    big = max(boxes, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
    sx, sy = (big[2] - big[0]) * AGREE_SLACK + 1, (big[3] - big[1]) * AGREE_SLACK + 1
    return all(big[0] - sx <= cx <= big[2] + sx and big[1] - sy <= cy <= big[3] + sy
               for cx, cy in (_centre(b) for b in boxes))


def union(boxes: Sequence[BBox]) -> BBox:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def confirms(first: BBox, second: BBox) -> bool:
    """A second look agrees with the first: its centre lies in the first box (grown by a quarter, 12 px at
    least), or the first's centre in it."""
    gx, gy = max(12.0, (first[2] - first[0]) / 4), max(12.0, (first[3] - first[1]) / 4)
    cx, cy = _centre(second)
    fx, fy = _centre(first)
    return (first[0] - gx <= cx <= first[2] + gx and first[1] - gy <= cy <= first[3] + gy) or \
        (second[0] <= fx <= second[2] and second[1] <= fy <= second[3])
