"""`TracePhone`: a DroidBot recording of a real app, served behind the same ADB server as the simulated phone.

    phone = TracePhone(trace="traces/weibo_bfs_greedy", trace_start="a7dec9")
    with SimServer(phone) as server: ...                     # or remote.sim.serve(trace=..., trace_start=...)
    phone.snapshot()  # {"trace_state": "aa9393…", "visited": [...], "unrecorded_inputs": 0, ...}

``screencap`` returns the current screen's screenshot cropped to the app area
(see `frames`), ``wm size`` that area, ``uiautomator dump`` the saved view tree
in the real dump's format (`dump`), and inputs move between recorded screens
(`machine`). The scenario's link keys (``uiautomator_delay_ms``,
``drop_after_commands``, ``reset_every_commands``, ``secure_screen``,
``adbkeyboard``) apply as on the simulated phone.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from remote.errors import ConfigError
from remote.sim import clipboard
from remote.sim.device import KEY_CHARS, BasePhone
from remote.sim.scenario import Scenario, make_scenario
from remote.sim.trace import dump
from remote.sim.trace.frames import Frames, image_size
from remote.sim.trace.machine import TraceMachine
from remote.sim.trace.recording import Recording

log = logging.getLogger(__name__)

TRACE_SERIAL = "remote-trace"
LONG_PRESS_MS = 400
IGNORED_KEYS = {24, 25, 26, 164, 187, 223, 224}     # volume, power, mute, app switch, sleep, wake: not the app's


class TracePhone(BasePhone):
    """A recorded app as a phone. ``TracePhone("scenario.yaml")`` or ``TracePhone(trace=DIR, trace_start=S)``."""

    product = "trace_phone"
    locale = "en-US"

    def __init__(self, scenario: Scenario | str | Path | dict[str, Any] | None = None, *,
                 serial: str = TRACE_SERIAL, **overrides: Any) -> None:
        scenario = make_scenario(scenario, **overrides)
        if not scenario.trace:
            raise ConfigError("the trace phone needs a recording", hint="pass --trace DIR (or trace: DIR)")
        recording = Recording.load(scenario.trace)
        display = display_size(recording)
        super().__init__(scenario, serial, display)
        info = recording.device_info()
        self.model, self.sdk, self.android_release = info["model"], info["sdk"], info["release"]
        self.recording = recording
        self.machine = TraceMachine(recording, display, scenario.trace_start)
        self.frames = Frames(display)

    # ------------------------------------------------------------------ observation

    def snapshot(self) -> dict[str, Any]:
        """What a test (and run.json's ``device_state``) checks::

            {"trace": "weibo_bfs_greedy", "trace_state": "aa93932e…", "visited": ["a7dec982…", "aa93932e…"],
             "unrecorded_inputs": 0, "foreground": {"package": "com.sina.weibo", "activity": "…LoginActivity"},
             "focused_text": None, "clipboard": None, "commands": [...]}
        """
        with self.lock:
            m = self.machine
            focused = m.typed.get(m.focus, "") if m.focus is not None else None
            package, _, activity = self.focus_component().partition("/")
            return {"trace": self.recording.name, "trace_state": m.state, "visited": list(m.visited),
                    "unrecorded_inputs": m.unrecorded, "foreground": {"package": package, "activity": activity},
                    "focused_text": focused, "clipboard": self.clipboard, "commands": list(self.commands)}

    def app_packages(self) -> list[str]:
        return self.recording.packages()

    def screencap(self, png: bool) -> bytes:
        with self.lock:
            shot = (self.frames.black() if self.scenario.secure_screen
                    else self.frames.get(self.recording.states[self.machine.state].screen_path))
            return shot.png() if png else shot.raw()

    def dump_xml(self, compressed: bool = False) -> str:
        with self.lock:
            m = self.machine
            return dump.to_xml(m.views(), self.size, compressed=compressed, texts=m.typed, focused=m.focus)

    def focus_component(self) -> str:
        with self.lock:
            return self.recording.states[self.machine.state].activity

    def keyboard_shown(self) -> bool:
        return self.machine.focus is not None

    def launcher_activity(self, package: str) -> str | None:
        """Not known: a recording does not say which activity an app's icon opens (it is launched with monkey)."""
        return None

    # ------------------------------------------------------------------ input events

    def tap(self, x: int, y: int) -> None:
        with self.lock:
            self.machine.tap(x, y)
            self.changed()

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        with self.lock:
            if abs(x2 - x1) < 10 and abs(y2 - y1) < 10:
                if duration_ms < LONG_PRESS_MS:
                    self.machine.tap(x1, y1)
                else:
                    self.machine.long_press(x1, y1)
            else:
                self.machine.swipe(x1, y1, x2, y2)
            self.changed()

    def key(self, code: int) -> None:
        with self.lock:
            m = self.machine
            if code == 3:
                m.home()
            elif code == 4:
                m.back()
            elif code in (67, 112):
                m.edit(delete=True)
            elif code in KEY_CHARS:
                m.type_text(KEY_CHARS[code])
            elif code == clipboard.KEYCODE_PASTE:
                clipboard.paste(self)
            elif code not in IGNORED_KEYS:
                m.unrecorded_input()
            self.changed()

    def type_text(self, text: str) -> bool:
        with self.lock:
            typed = self.machine.type_text(text)
            self.changed()
            return typed

    def clear_text(self) -> None:
        with self.lock:
            self.machine.edit(delete=False)
            self.changed()

    def editor_action(self, code: int) -> None:
        with self.lock:
            self.machine.unrecorded_input()

    # ------------------------------------------------------------------ apps

    def launch(self, package: str) -> bool:
        with self.lock:
            launched = self.machine.launch(package)
            self.changed()
            return launched

    def force_stop(self, package: str) -> None:
        with self.lock:
            self.machine.force_stop(package)
            self.changed()

    def open_url(self, url: str) -> None:
        with self.lock:
            log.info("trace phone: no recorded screen for URL %s", url)
            self.machine.unrecorded_input()

    def home(self) -> None:
        with self.lock:
            self.machine.home()
            self.changed()


def display_size(recording: Recording) -> tuple[int, int]:
    """The app area: the first full-width root window at (0, 0) among the first screens (1080x1920 here)."""
    order = [recording.launcher_state, recording.first_app_state]
    order += [s.state_str for s in sorted(recording.states.values(), key=lambda s: s.tag)[:12]]
    fallback = None
    for state in (s for s in order if s):
        shot = image_size(recording.states[state].screen_path)
        fallback = fallback or shot
        views = recording.views(state)
        box = dump.box_of(views[0]) if views else None
        if shot and box and box[:2] == (0, 0) and box[2] == shot[0] and box[2] < box[3] <= shot[1]:
            return box[2], box[3]
    if fallback is None:
        raise ConfigError("no readable screenshot in the recording", path=str(recording.folder))
    return fallback
