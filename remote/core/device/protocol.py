"""What the rest of the product needs of a phone, as Protocols (``ADBController`` implements them).

`ScreenSource` is all the locator needs (a screenshot and a UI dump); `Device` is
what the runner needs to act. The small ones after them are what a real phone
adds (`ADBController` has them; a scripted fake need not): frames as arrays, a
dump that can be reused, waking and unlocking. Unit tests may hand in a small scripted fake; users
meet the real `ADBController` against a phone, the simulated phone or the trace phone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from remote.core.device.audio import Volume
from remote.core.device.dump import DumpRecord, DumpStats
from remote.core.device.frames import LinkReport

if TYPE_CHECKING:   # the image libraries load when a frame is first decoded, not with the phone's link
    import numpy as np
    from PIL import Image

# Reads a text field's text (None when it cannot): what typing's read-back uses, and what a caller that can read
# the field on the screen (the runner, by OCR in the field's box) hands to `Device.input_text` for when the UI
# dump fails.
FieldRead = Callable[[], str | None]


@runtime_checkable
class ScreenSource(Protocol):
    def screenshot(self) -> Image.Image: ...
    def dump_hierarchy(self) -> str: ...


@runtime_checkable
class Device(ScreenSource, Protocol):
    @property
    def serial(self) -> str: ...

    def window_size(self) -> tuple[int, int]: ...
    def tap(self, x: float, y: float) -> None: ...
    def long_press(self, x: float, y: float, duration_ms: int = 800) -> None: ...
    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None: ...
    def swipe_direction(self, direction: str, distance: float = 0.5, duration_ms: int = 300) -> None: ...
    def input_text(self, text: str, *, clear: bool = False, verify: bool = False,
                   before: str | None = None, field_reader: FieldRead | None = None) -> bool: ...
    def input_keyevent(self, key: int | str) -> None: ...
    def press_back(self) -> None: ...
    def go_home(self) -> None: ...
    def launch_app(self, package: str) -> None: ...
    def open_url(self, url: str) -> None: ...
    def call(self, number: str) -> None: ...
    def current_app(self) -> dict[str, str]: ...
    def installed_packages(self) -> set[str]: ...
    def app_version(self, package: str) -> str | None: ...
    def volume(self) -> Volume | None: ...


@runtime_checkable
class FrameSource(Protocol):
    """A phone that gives its frame as the BGR array the locator works on (decoded once)."""

    def frame(self, *, allow_uniform: bool = False) -> np.ndarray: ...


@runtime_checkable
class DumpReuse(Protocol):
    """A phone that remembers its last UI dump and knows whether anything that changes the screen ran since."""

    def recent_dump(self, max_age_s: float) -> DumpRecord | None: ...
    def dump_underway(self) -> tuple[int, float] | None: ...


@runtime_checkable
class Wakeable(Protocol):
    """A phone that can be woken and its lock screen (without a PIN) swiped away before a task."""

    def wake_and_unlock(self) -> list[str]: ...


@runtime_checkable
class KeyboardState(Protocol):
    """A phone that says whether its soft keyboard is up (``dumpsys input_method``; None when it cannot) and
    can get its keyboard ready for a text ahead of typing it."""

    def keyboard_shown(self) -> bool | None: ...
    def prepare_typing(self, text: str) -> None: ...


@runtime_checkable
class CheapTree(Protocol):
    """A phone that says whether a fresh UI tree costs tens of milliseconds now (a resident tree server, not
    ``uiautomator dump``): the runner then reads the screen after every action rather than save a tree."""

    def tree_is_cheap(self) -> bool: ...
    def tree_answers_now(self, within: float = 0.0) -> bool: ...
    def warm_session(self) -> None: ...
    def expect(self, packages: Sequence[str], texts: Sequence[str]) -> None: ...


@runtime_checkable
class CostReport(Protocol):
    """A phone that counts what its screenshots and UI dumps cost (for the run record and the bench)."""

    def link_report(self) -> LinkReport: ...
    def dump_stats(self) -> DumpStats: ...
