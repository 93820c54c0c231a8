"""The trace phone's state machine: which recorded screen an input leads to.

Rules (each input is looked up on the *current* screen's saved tree, since
``state_str`` ignores positions):

- **tap** at (x, y): a recorded touch of a view under the finger (the deepest,
  up to the clickable view that handles the tap) gives the outcome; else every
  recorded touch that handler took (DroidBot tapped the label, a runner the
  row around it: see `touches`). Several outcomes: the most frequent one with a
  saved screen. An editable view under the point takes input focus.
  On the navigation bar (where the saved tree's ``navigationBarBackground`` is)
  the left third is BACK and the middle third HOME, as on the recording's phone.
- **long press** and **swipe** the same with ``long_touch`` and ``scroll``
  (a swipe's direction in DroidBot's words: a finger moving down scrolls ``UP``).
- **BACK** follows a recorded BACK; **HOME** goes to the recorded launcher and
  remembers where the app was, so launching it again resumes there.
- **launch** of the app in front changes nothing; of an app left with HOME it
  resumes; else it opens the app's recorded first screen.
- **typing** goes into the focused field (shown in the dump) and follows a
  recorded ``set_text`` on that field.

An input with no recorded outcome on a saved screen changes nothing and is
counted in `unrecorded`; `visited` lists every screen entered, in order.
"""

from __future__ import annotations

import logging
from collections import Counter

from remote.sim.trace import dump
from remote.sim.trace.recording import Recording
from remote.sim.trace.touches import Table, handler

log = logging.getLogger(__name__)

NAV_BAR_ID = "android:id/navigationBarBackground"
BACK, HOME = "BACK", "HOME"


class TraceMachine:
    def __init__(self, recording: Recording, display: tuple[int, int], start: str | None = None) -> None:
        self.rec = recording
        self.display = display
        first = recording.launcher_state or recording.first_app_state
        self.state = recording.resolve(start) if start else str(first or next(iter(recording.states)))
        self.visited = [self.state]
        self.unrecorded = 0
        self.focus: int | None = None          # temp_id of the focused editable view
        self.typed: dict[int, str] = {}        # temp_id -> text typed into it on this screen
        self.resume: dict[str, str] = {}       # package -> the screen it was on when HOME was pressed
        self._tables: dict[tuple[str, str], Table] = {}
        self._enter_focus()

    # ------------------------------------------------------------------ state

    @property
    def package(self) -> str:
        return self.rec.states[self.state].package

    def views(self) -> list[dump.View]:
        return self.rec.views(self.state)

    def enter(self, state: str) -> None:
        if state == self.state:
            return
        log.debug("trace: %s -> %s", self.state, state)
        self.state = state
        self.visited.append(state)
        self.resume.pop(self.package, None)
        self.typed = {}
        self._enter_focus()

    def _enter_focus(self) -> None:
        self.focus = next((v.get("temp_id") for v, _, _ in dump.shown(self.views(), self.display)
                           if v.get("focused") and _editable(v)), None)

    def _follow(self, counts: Counter[str] | dict[str, int], what: str) -> bool:
        """Move to the most frequent served outcome; False (counted) when there is none."""
        stop = self.rec.choose(counts)
        if stop is None:
            self.unrecorded += 1
            log.info("trace: no recorded %s here (%s)", what, self.state)
            return False
        self.enter(stop)
        return True

    def table(self, kind: str) -> Table:
        """This screen's recorded inputs of `kind`, grouped by the view that handled them (built once)."""
        key = (self.state, kind)
        if key not in self._tables:
            self._tables[key] = Table.build(self.rec.records(self.state, kind), self.views(), self.display, kind)
        return self._tables[key]

    # ------------------------------------------------------------------ inputs

    def _touched(self, kind: str, x: int, y: int) -> Counter[str]:
        """Outcomes of recorded touches of the view under the finger (the deepest recorded one up to its
        handler), else of every recorded touch its handler took."""
        target = handler(self.views(), x, y, self.display, kind)
        table = self.table(kind)
        for view in dump.hits(self.views(), x, y, self.display):
            if view.get("temp_id") in table.by_view:
                return table.by_view[view["temp_id"]]
            if view is target:
                break
        return table.counts(target)

    def tap(self, x: int, y: int) -> bool:
        counts = self._touched("touch", x, y)
        if not counts and self._on_nav_bar(x, y):
            third = x * 3 // self.display[0]
            return self.back() if third == 0 else self.home() if third == 1 else self._count()
        editable = next((v for v in dump.hits(self.views(), x, y, self.display) if _editable(v)), None)
        if editable is not None and not counts:
            self.focus = editable.get("temp_id")
            return True
        before = self.state
        moved = self._follow(counts, "touch")
        if editable is not None and self.state == before:
            self.focus = editable.get("temp_id")
        return moved

    def long_press(self, x: int, y: int) -> bool:
        return self._follow(self._touched("long_touch", x, y), "long press")

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> bool:
        dx, dy = x2 - x1, y2 - y1
        direction = ("UP" if dy > 0 else "DOWN") if abs(dy) >= abs(dx) else ("LEFT" if dx > 0 else "RIGHT")
        target = handler(self.views(), (x1 + x2) // 2, (y1 + y2) // 2, self.display, "scroll")
        return self._follow(self.table("scroll").counts(target, direction), f"scroll {direction}")

    def back(self) -> bool:
        return self._follow(self.rec.outcomes(self.state, "key", BACK), "BACK")

    def home(self) -> bool:
        launcher = self.rec.launcher_state
        if launcher is None:
            return self._count()
        if self.state != launcher:
            package, state = self.package, self.state
            self.enter(launcher)
            self.resume[package] = state
        return True

    def type_text(self, text: str) -> bool:
        if self.focus is None:
            self._count()
            return False
        view = self._view(self.focus)
        current = self.typed.get(self.focus, (view or {}).get("text") or "") if view else ""
        self.typed[self.focus] = current + text
        stop = self.rec.choose(self.table("set_text").by_view.get(self.focus, {}))
        if stop is not None and stop != self.state:
            self.enter(stop)
        return True

    def edit(self, delete: bool = True) -> None:
        """DEL removes the last typed character; ``delete=False`` clears the field (ADB_CLEAR_TEXT)."""
        if self.focus is None:
            return
        view = self._view(self.focus) or {}
        current = self.typed.get(self.focus, view.get("text") or "")
        self.typed[self.focus] = current[:-1] if delete else ""

    def launch(self, package: str) -> bool:
        if package == self.package:
            return True
        launcher = self.rec.launcher_state
        if launcher is not None and package == self.rec.states[launcher].package:
            return self.home()
        target = self.resume.pop(package, None)
        if target is None:
            target = self.rec.first_app_state if package == self.rec.app_package else self.rec.first_state_of(package)
        if target is None:
            return False
        self.enter(target)
        return True

    def force_stop(self, package: str) -> None:
        self.resume.pop(package, None)
        if package == self.package and self.rec.launcher_state is not None:
            self.enter(self.rec.launcher_state)

    def unrecorded_input(self) -> None:
        """An input the recording cannot answer (ENTER, an editor action, a URL): nothing changes."""
        self._count()

    def _count(self) -> bool:
        self.unrecorded += 1
        return False

    def _on_nav_bar(self, x: int, y: int) -> bool:
        """The system navigation bar: its background view is in the saved tree (never visible to a dump)."""
        for view in self.views():
            box = dump.box_of(view) if view.get("resource_id") == NAV_BAR_ID else None
            if box and box[0] <= x < box[2] and box[1] <= y < box[3]:
                return True
        return False

    def _view(self, temp_id: int) -> dump.View | None:
        views = self.views()
        return views[temp_id] if 0 <= temp_id < len(views) else None


def _editable(view: dump.View) -> bool:
    return bool(view.get("editable")) or str(view.get("class") or "").endswith("EditText")
