"""The runner's frames: one taken beside typing's read-back (`FrameBeside`), what a capture counts
(`CaptureStats`), and frames taken when something reads them (``--frames needed``, the default with cheap trees).

With a resident tree server every step is judged on a fresh tree of the screen after it (`Capture`), and a frame
of that screen costs more than the tree: 24-450 ms on a phone against 5-100 ms (docs/devices.md "Frames"). Most
steps are decided by the tree alone: typing by its read-back, a switch by its state, a tap the next step types
after by the focused field, a tap that changed the tree by the tree. So a screen read as a tree gets its frame
later (`FrameLater`): the first time anything reads its pixels (an image or OCR tier, the pixel comparison when
two trees agree, a vision model, an OCR read of a field), while nothing has changed the screen since its tree was
read; after that it cannot be taken (`FrameGone`). A step whose verdict may compare its screen before against the
one after takes the before's frame before it acts (`needs_pixels_before`), and the screen after a step is taken
with its frame at once when the next step is such a step, beside the read that ends the wait.

The record keeps the frames that were taken: what the run looked at. ``--frames every`` takes one for every screen
(a picture of each step in the report and for `remote replay`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remote.core.device.dump import DumpRecord
from remote.core.device.protocol import Device, DumpReuse
from remote.core.locate.screen import FrameLater
from remote.core.plan.actions import (
    BackToHome,
    Call,
    Finish,
    GoHome,
    InputText,
    LaunchApp,
    OpenUrl,
    PressKey,
    TakeOver,
    Tap,
    Wait,
)
from remote.core.records import StepPlan
from remote.errors import FrameGone

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image


@dataclass(frozen=True, eq=False)
class FrameBeside:
    """A frame taken beside typing's read-back dump once the settle time had run in it: what was captured (the
    frame, whether the screen was secure), when (``taken_at``, `time.monotonic`) and after which action
    (``generation``: the phone's count of screen-changing commands when that dump began)."""

    image: Image.Image | np.ndarray
    secure: bool
    generation: int
    taken_at: float

    def of(self, record: DumpRecord | None) -> bool:
        """Taken beside ``record`` (the phone's last dump, None when something changed the screen since)."""
        return record is not None and record.generation == self.generation


@dataclass
class CaptureStats:
    frames: int = 0
    dumps: int = 0          # dumps this capture asked for
    reused: int = 0         # screens given an earlier tree instead
    failed: int = 0
    waited_ms: float = 0.0  # spent waiting for actions' effects to show (`await_drawn`)
    drawn: int = 0          # waits that ended on the effect shown and held, before the configured time

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 1) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def later_frame(device: Device, frame: Callable[[], tuple[Any, bool]]) -> FrameLater:
    """The frame of the screen now, taken by ``frame`` when first asked for, if nothing that changes the screen
    has been sent since this call; else `FrameGone`."""
    if not isinstance(device, DumpReuse):   # a phone that does not count its commands: taken when asked
        return FrameLater(device.window_size(), frame)
    changes = device.screen_changes()

    def take() -> tuple[Any, bool]:
        if device.screen_changes() != changes:
            raise FrameGone("this screen's frame was not taken before the screen changed",
                            hint="a step that reads a screen's pixels after acting takes them before it acts")
        return frame()

    return FrameLater(device.window_size(), take)


def needs_pixels_before(step: StepPlan | None) -> bool:
    """May the verdict of ``step`` compare the screen before it with the one after on pixels (when the two trees
    agree: a canvas, a WebView)? Not typing (its read-back judges it), a switch (its state in the tree), a launch,
    the way home, a key, link or wait sent blind, the plan's end; None (after the last step: the final check takes
    a frame when it needs one): no. Anything else (a tap, a swipe, a key aimed at a target): yes."""
    if step is None:
        return False
    args = step.args
    if isinstance(args, InputText | LaunchApp | Finish | BackToHome | TakeOver):
        return False
    if isinstance(args, OpenUrl | Call | GoHome | Wait | PressKey) and not step.targets:
        return False
    return not (isinstance(args, Tap) and args.toggle is not None)
