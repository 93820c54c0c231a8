"""`SimPhone`: the simulated phone's state, its input events and its frames.

Everything the shell commands do ends up here: a tap hit-tests the current
widget tree, keys and text go to the focused field, apps navigate between
screens. `frame()` renders the current tree once per state and caches the PNG
and raw bytes, so repeated screenshots cost no Pillow work.

Thread safety: one re-entrant lock guards the state; the adb server calls in
from one thread per connection.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from remote.sim import apps, clipboard
from remote.sim.apps.launch_keys import LAUNCH_KEYS
from remote.sim.device import ADB_IME, KEY_CHARS, LATIN_IME, BasePhone
from remote.sim.render import Shot, draw_tree, tree_to_xml
from remote.sim.scenario import Scenario, make_scenario
from remote.sim.widgets import Metrics, Widget, find, focused_widget, hit_test

log = logging.getLogger(__name__)

__all__ = ["ADB_IME", "DEFAULT_SERIAL", "KEY_CHARS", "LATIN_IME", "Frame", "SimPhone"]
DEFAULT_SERIAL = "remote-sim"


@dataclass
class Frame(Shot):
    """One rendered state: the image (with its encodings made on first use), the tree and its dumps."""

    tree: Widget = field(kw_only=True)
    size: tuple[int, int] = field(kw_only=True)
    _xml: dict[bool, str] = field(default_factory=dict, kw_only=True)

    def xml(self, compressed: bool = False) -> str:
        if compressed not in self._xml:
            self._xml[compressed] = tree_to_xml(self.tree, self.size, compressed=compressed)
        return self._xml[compressed]


class SimPhone(BasePhone):
    """A simulated Android phone. ``SimPhone(resolution="720x1600", ad_popup=True)`` or
    ``SimPhone("scenario.yaml")``; serve it with `remote.sim.serve`."""

    def __init__(self, scenario: Scenario | str | Path | dict[str, Any] | None = None, *,
                 serial: str = DEFAULT_SERIAL, **overrides: Any) -> None:
        scenario = make_scenario(scenario, **overrides)
        super().__init__(scenario, serial, scenario.size)
        self.metrics = Metrics(*self.size)
        self._frame_key: tuple[Any, ...] | None = None
        self._frame: Frame | None = None
        # what the screen still shows while a change is being drawn (`response_ms`, `transition_ms`)
        self._held: Frame | None = None
        self._held_since = self._held_until = 0.0
        # --- what the user sees ---
        self.launcher = apps.launcher_package(self.scenario.layout)
        self.app_state: dict[str, Any] = {}
        self.foreground = self.launcher
        self.stacks: dict[str, list[str]] = {}
        self.launcher_page = 0
        self.fields: dict[str, str] = {}
        self.focus: str | None = None
        self.settle_until = 0.0
        self.launched: set[str] = set()
        self.permission_pending = False
        self.ad_pending = self.scenario.ad_popup
        # --- app data ---
        self.chats: dict[str, list[str]] = {}
        self.settings["nfc"] = False
        self.browser_url: str | None = None
        self.browser_loaded_at = 0.0

    @property
    def density_dpi(self) -> int:
        return int(self.metrics.density * 160)

    def app_packages(self) -> list[str]:
        return [self.launcher, *apps.APPS]

    def keyboard_shown(self) -> bool:
        """A field has the focus and the screen shows it (a loading screen has no field to type into)."""
        return self.focus is not None and not self.loading

    def version_name(self, package: str) -> str | None:
        return apps.version_name(self, package) if package in self.packages() else None

    # ------------------------------------------------------------------ observation

    def snapshot(self) -> dict[str, Any]:
        """What a test checks, JSON-serialisable::

            {"foreground": {"package": "com.tencent.mm", "screen": "chat:张三"}, "focused_text": "你好",
             "chats": {"张三": ["你好"]}, "settings": {"wlan": True, "bluetooth": False, "airplane": False},
             "browser_url": None, "ime": "com.android.adbkeyboard/.AdbIME", "commands": [...]}
        """
        with self.lock:
            focused = self.fields.get(self.focus, "") if self.focus else None
            return {
                "foreground": {"package": self.foreground_package, "screen": self.screen_name},
                "focused_text": focused,
                "chats": {k: list(v) for k, v in self.chats.items() if v},
                "settings": dict(self.settings),
                "browser_url": self.browser_url,
                "ime": self.ime,
                "commands": list(self.commands),
                "launcher_page": self.launcher_page + 1,
                "clipboard": self.clipboard,
                "volume": self.volume,
                "hardware": self.hw.snapshot(), "tree_server": self.tree_server.snapshot(),
            }

    @property
    def foreground_package(self) -> str:
        return self.foreground

    @property
    def screen_name(self) -> str:
        with self.lock:
            if self.loading:
                return "loading"
            if self.foreground == self.launcher:
                return "launcher"
            if self.foreground == apps.WECHAT and self.permission_pending:
                return "permission_dialog"
            screen = self.screen
            if self.foreground == apps.WECHAT and self.ad_pending and screen == "main":
                return "ad_popup"
            if self.foreground == apps.WECHAT and screen == "main":
                return self.fields.get("mm.tab", "chats")
            return screen

    @property
    def screen(self) -> str:
        stack = self.stacks.get(self.foreground)
        return stack[-1] if stack else "main"

    @property
    def loading(self) -> bool:
        return time.monotonic() < self.settle_until

    def launcher_activity(self, package: str) -> str | None:
        """The activity an installed app's launcher icon opens (its first screen's), None for no such app."""
        return apps.activity_of(self, package, "main") if package in apps.APPS and package in self.packages() \
            else None

    def focus_component(self) -> str:
        """``pkg/activity`` of the focused window, as in dumpsys window's mCurrentFocus."""
        with self.lock:
            if self.foreground == apps.WECHAT and self.permission_pending:
                return apps.PERMISSION_COMPONENT
            package = apps.focus_package(self, self.foreground, self.screen)
            return f"{package}/{apps.activity_of(self, self.foreground, self.screen)}"

    # ------------------------------------------------------------------ frames

    def tree(self) -> Widget:
        """The widgets of the state now (what input hits), drawn or not yet."""
        return self._current().tree

    def frame(self) -> Frame:
        """What the screen shows: the state before the last change while that change is being drawn (the
        scenario's `response_ms`, or `transition_ms` for a new screen: remote.sim.realism), else the state now."""
        with self.lock:
            if self._held is not None and time.monotonic() < self._held_until:
                return self._held
            self._held = None
            return self._current()

    def _current(self) -> Frame:
        """The state now, rendered once per state (and again when a timer flips the screen)."""
        with self.lock:
            key = (self._version, self.loading, apps.browser_loading(self))
            if self._frame is None or key != self._frame_key:
                root = apps.compose(self, self.metrics)
                self._frame = Frame(draw_tree(root, self.size), tree=root, size=self.size)
                self._frame_key = key
            return self._frame

    def screencap(self, png: bool) -> bytes:
        frame = self.frame()
        if self.scenario.secure_screen:
            return self._black(png)
        return frame.png() if png else frame.raw()

    def _black(self, png: bool) -> bytes:
        key = ("black", png)
        cached: dict[tuple[str, bool], bytes] = getattr(self, "_black_cache", {})
        if key not in cached:
            black = Frame(Image.new("RGB", self.size, (0, 0, 0)), tree=Widget(), size=self.size)
            cached[key] = black.png() if png else black.raw()
            self._black_cache = cached
        return cached[key]

    def dump_xml(self, compressed: bool = False) -> str:
        return self.frame().xml(compressed)

    # ------------------------------------------------------------------ state changes (used by apps)

    def changed(self) -> None:
        """The state changed: the screen shows it `response_ms` later (an in-place change)."""
        with self.lock:
            super().changed()
            self._hold(self.scenario.response_ms)

    def _hold(self, ms: int) -> None:
        """Keep showing what the screen showed before this change for ``ms`` from its start: the frame drawn of
        the state just before it (nothing is held when that state was never drawn)."""
        if not ms:
            return
        now = time.monotonic()
        if now >= self._held_until:
            shown = self._frame
            if shown is None or self._frame_key is None or self._frame_key[0] != self._version - 1:
                return
            self._held, self._held_since = shown, now
        self._held_until = max(self._held_until, self._held_since + ms / 1000)

    def _drawn_before_input(self) -> None:
        """Draw the state before an input changes it, when changes take time to show (so it can be held)."""
        if self.scenario.response_ms or self.scenario.transition_ms:
            self._current()

    def navigated(self) -> None:
        """A new screen appeared: it is drawn `transition_ms` later, and shows the spinner for `loading_ms`
        before it settles."""
        self.changed()
        self._hold(self.scenario.transition_ms)
        if self.scenario.loading_ms:
            self.settle_until = time.monotonic() + self.scenario.loading_ms / 1000.0

    def launch(self, package: str) -> bool:
        """Bring an app to the front (resuming where it was), like tapping its icon or `monkey -p`."""
        with self.lock:
            self._drawn_before_input()
            if package in apps.LAUNCHERS:
                self.home()
                return package == self.launcher
            if package not in apps.APPS:
                return False
            first = package not in self.launched
            self.launched.add(package)
            self.stacks.setdefault(package, ["main"])
            self.foreground = package
            self.focus = None
            if first and package == apps.WECHAT and self.scenario.wechat_permission_dialog:
                self.permission_pending = True
            self.navigated()
            return True

    def push(self, screen: str, focus: str | None = None) -> None:
        with self.lock:
            self.stacks.setdefault(self.foreground, ["main"]).append(screen)
            self.focus = focus
            self.navigated()

    def home(self) -> None:
        with self.lock:
            self.foreground = self.launcher
            self.launcher_page = 0
            self.focus = None
            self.navigated()

    def back(self) -> None:
        with self.lock:
            if self.foreground == self.launcher:
                self.launcher_page = 0
                self.changed()
                return
            if self.foreground == apps.WECHAT and self.permission_pending:
                self.permission_pending = False  # BACK on a permission dialog = deny
                self.changed()
                return
            if self.foreground == apps.WECHAT and self.ad_pending and self.screen == "main":
                self.ad_pending = False
                self.changed()
                return
            stack = self.stacks.get(self.foreground, ["main"])
            if len(stack) > 1:
                stack.pop()
                self.focus = None
                self.navigated()
            else:
                self.stacks.pop(self.foreground, None)  # BACK at the root finishes the activity
                self.home()

    def force_stop(self, package: str) -> None:
        with self.lock:
            self.stacks.pop(package, None)
            if self.foreground == package:
                self.home()
            self.changed()

    def focus_field(self, key: str) -> None:
        with self.lock:
            self.focus = key
            self.changed()

    def set_field(self, key: str, text: str) -> None:
        with self.lock:
            self.fields[key] = text
            self.changed()

    def open_url(self, url: str) -> None:
        with self.lock:
            self.launch(apps.CHROME)
            apps.chrome.navigate(self, url)

    # ------------------------------------------------------------------ input events

    def tap(self, x: int, y: int) -> None:
        with self.lock:
            if self.loading:
                return
            widget = hit_test(self.tree(), x, y)   # the state now (drawn before the change: it can be held)
            log.debug("tap %s,%s -> %s", x, y, widget and (widget.rid or widget.text or widget.desc))
            if widget is not None and widget.on_tap is not None:
                widget.on_tap()
            self.changed()

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        dx, dy = x2 - x1, y2 - y1
        with self.lock:
            self._drawn_before_input()
            if abs(dx) < 10 and abs(dy) < 10:
                if duration_ms < 400:
                    self.tap(x1, y1)
                return  # a long press: nothing here reacts to one
            if self.foreground == self.launcher and abs(dx) > self.size[0] / 8 and abs(dx) > abs(dy):
                self.launcher_page = min(apps.LAUNCHER_PAGES - 1, self.launcher_page + 1) if dx < 0 \
                    else max(0, self.launcher_page - 1)
            elif self.foreground != self.launcher and abs(dy) > abs(dx):
                apps.on_scroll(self, self.metrics, dy)
            self.changed()

    def type_text(self, text: str) -> bool:
        """Commit text into the focused field (IME commitText / `input text`); False if none is focused."""
        with self.lock:
            if self.focus is None or self.loading:
                return False
            self._drawn_before_input()
            self.fields[self.focus] = self.fields.get(self.focus, "") + text
            self.changed()
            return True

    def clear_text(self) -> None:
        with self.lock:
            if self.focus is not None:
                self.fields[self.focus] = ""
                self.changed()

    def key(self, code: int) -> None:
        with self.lock:
            self._drawn_before_input()
            if code == 3:
                self.home()
            elif code == 4:
                self.back()
            elif code == 66:
                apps.on_enter(self)
            elif code in (67, 112):
                if self.focus is not None:
                    self.fields[self.focus] = self.fields.get(self.focus, "")[:-1]
            elif code == 24:
                self.volume = min(15, self.volume + 1)
            elif code == 25:
                self.volume = max(0, self.volume - 1)
            elif code == clipboard.KEYCODE_PASTE:
                clipboard.paste(self)
            elif code in KEY_CHARS:
                self.type_text(KEY_CHARS[code])
            elif code in LAUNCH_KEYS:      # keys the system turns into an app launch (apps/launch_keys.py)
                self.launch(LAUNCH_KEYS[code])
            self.changed()

    def editor_action(self, code: int) -> None:
        """ADB_EDITOR_CODE: 2 GO, 3 SEARCH, 4 SEND, 5 NEXT, 6 DONE."""
        with self.lock:
            self._drawn_before_input()
            apps.on_editor_action(self, code)
            self.changed()

    # helpers for tests and apps
    def find(self, *, rid: str = "", text: str = "", desc: str = "") -> Widget | None:
        return find(self.tree(), rid=rid, text=text, desc=desc)

    def focused_widget(self) -> Widget | None:
        return focused_widget(self.tree())
