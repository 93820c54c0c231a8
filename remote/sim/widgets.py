"""Widget trees: the one source of truth for a screen.

A screen is a tree of `Widget`s with pixel bounds. The same tree is drawn into
the screenshot (`render.draw_tree`) and written as the `uiautomator dump` XML
(`render.tree_to_xml`), and `input tap` hit-tests it (`hit_test`). Layout is
done in dp through `Metrics`, so one screen description fits every resolution.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

Bounds = tuple[int, int, int, int]
Color = tuple[int, int, int]

# Drawing hooks get (ImageDraw.ImageDraw, widget, render context); kept untyped here so
# that this module does not import Pillow.
Painter = Callable[..., None]


@dataclass
class Widget:
    cls: str = "android.widget.FrameLayout"
    bounds: Bounds = (0, 0, 0, 0)
    text: str = ""
    desc: str = ""
    rid: str = ""
    package: str = ""
    clickable: bool = False
    focusable: bool = False
    focused: bool = False
    enabled: bool = True
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    on_tap: Callable[[], None] | None = None
    children: list[Widget] = field(default_factory=list)
    # --- how it looks (not part of the dump) ---
    bg: Color | None = None
    fg: Color = (25, 25, 25)
    radius: int = 0                # rounded corners, px
    text_size: int = 0             # px; 0 = no text drawn
    align: str = "left"            # left | center | right (text inside bounds)
    hint: str = ""                 # drawn grey when text is empty (EditText)
    paint: Painter | None = None   # custom drawing (icons, spinner, switch)
    border: Color | None = None
    dim: float = 0.0               # darken what is below (a dialog scrim), 0..1
    dump: bool = True              # False: drawn but not in the app's window dump (status bar)

    def add(self, *children: Widget) -> Widget:
        for child in children:
            if not child.package:
                child.package = self.package
            self.children.append(child)
        return self

    def walk(self) -> Iterator[Widget]:
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    def contains(self, x: int, y: int) -> bool:
        x1, y1, x2, y2 = self.bounds
        return x1 <= x < x2 and y1 <= y < y2


def hit_test(root: Widget, x: int, y: int) -> Widget | None:
    """The topmost clickable widget containing (x, y): later siblings are drawn above earlier ones."""
    found: Widget | None = None
    for widget in root.walk():  # pre-order = drawing order, so the last hit is the topmost
        if widget.clickable and widget.enabled and widget.contains(x, y):
            found = widget
    return found


def find(root: Widget, *, rid: str = "", text: str = "", desc: str = "") -> Widget | None:
    for widget in root.walk():
        if rid and widget.rid != rid:
            continue
        if text and widget.text != text:
            continue
        if desc and widget.desc != desc:
            continue
        return widget
    return None


def focused_widget(root: Widget) -> Widget | None:
    for widget in root.walk():
        if widget.focused:
            return widget
    return None


class Metrics:
    """dp → px for one screen: the width is 360 dp wide, so 1080 px means 3 px per dp.

    >>> m = Metrics(1080, 2400); m.px(48), m.height_dp
    (144, 800.0)
    """

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.density = width / 360.0
        self.height_dp = height / self.density

    def px(self, dp: float) -> int:
        return int(round(dp * self.density))

    def box(self, x: float, y: float, w: float, h: float) -> Bounds:
        """Bounds of a dp box, clipped to the screen."""
        x1, y1 = self.px(x), self.px(y)
        x2, y2 = self.px(x + w), self.px(y + h)
        return max(0, x1), max(0, y1), min(self.width, x2), min(self.height, y2)

    @property
    def status_dp(self) -> float:
        return 24.0

    @property
    def nav_dp(self) -> float:
        return 24.0

    @property
    def content_bottom_dp(self) -> float:
        """Where app content ends (the gesture-navigation strip is below)."""
        return self.height_dp - self.nav_dp
