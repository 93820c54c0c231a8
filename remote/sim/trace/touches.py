"""Which recorded inputs a touch repeats: the one the same view would handle.

On a phone a tap goes to the deepest clickable view under the finger; a
recorded tap did too. DroidBot tapped the centre of a view (often a label inside
a clickable row); a runner taps wherever it likes in that row. Both reach the
same handler, so both are the same input to the app. A `Table` therefore groups
a screen's recorded inputs by the view that handled them: each record's view is
found in the screen's saved tree by ``view_str`` (by its box too when several
views share one, as identical list rows do), its centre is the recorded touch
point, and the handler under that point is the key::

    table = Table.build(recording.records(state, "touch"), views, display, "touch")
    table.counts(handler(views, 540, 567, display, "touch"))     # {stop_state: times}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from remote.sim.trace import dump
from remote.sim.trace.recording import Box, Record

View = dump.View


def handler(views: list[View], x: int, y: int, display: tuple[int, int], kind: str) -> View | None:
    """The view that takes a `kind` input at (x, y): the deepest clickable (scrollable for a scroll) one under
    the point, else the deepest view there; None off every view."""
    under = dump.hits(views, x, y, display)
    wanted = ("scrollable",) if kind == "scroll" else ("clickable", "long_clickable")
    return next((v for v in under if any(v.get(flag) for flag in wanted)), under[0] if under else None)


@dataclass
class Table:
    """A screen's recorded inputs of one kind, grouped by handler (and by the view itself, for typing)."""

    by_handler: dict[tuple[int, str], Counter[str]] = field(default_factory=dict)
    by_view: dict[int, Counter[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, records: Iterable[Record], views: list[View], display: tuple[int, int], kind: str) -> Table:
        table = cls()
        shown = [(v, box) for v, box, _ in dump.shown(views, display)]
        for record in records:
            found = _locate(record, shown)
            if found is None:
                continue
            view, (x1, y1, x2, y2) = found
            if view is not None and isinstance(view.get("temp_id"), int):
                table.by_view.setdefault(view["temp_id"], Counter())[record.stop] += 1
            target = handler(views, (x1 + x2) // 2, (y1 + y2) // 2, display, kind)
            if target is not None and isinstance(target.get("temp_id"), int):
                table.by_handler.setdefault((target["temp_id"], record.detail), Counter())[record.stop] += 1
        return table

    def counts(self, target: View | None, detail: str = "") -> Counter[str]:
        if target is None or not isinstance(target.get("temp_id"), int):
            return Counter()
        return self.by_handler.get((target["temp_id"], detail), Counter())


def _locate(record: Record, shown: list[tuple[View, Box]]) -> tuple[View | None, Box] | None:
    """The recorded view in the saved tree and its box; the record's own box when the tree lacks the view."""
    same = [(v, box) for v, box in shown if v.get("view_str") == record.view_str]
    if len(same) > 1 and record.bounds is not None:
        exact = [(v, box) for v, box in same if dump.box_of(v) == record.bounds]
        cx, cy = (record.bounds[0] + record.bounds[2]) // 2, (record.bounds[1] + record.bounds[3]) // 2
        near = [(v, box) for v, box in same if box[0] <= cx < box[2] and box[1] <= cy < box[3]]
        same = exact or near or same
    if same:
        return same[0]
    return (None, record.bounds) if record.bounds is not None else None
