"""What the simulated phone is like: resolution, popups, slowness, faults.

A scenario is a YAML file whose keys are fixed (tests and users share them);
every key is optional::

    resolution: 1080x2400          # or 720x1600, 1440x3200
    adbkeyboard: true              # ADBKeyboard installed
    wechat_permission_dialog: false
    ad_popup: false
    loading_ms: 0
    secure_screen: false
    drop_after_commands: null
    reset_every_commands: null
    uiautomator_delay_ms: 300
    contacts: [张三, 李四, 王五, 文件传输助手]
    versions: {wechat: "8.0.47"}   # an app's simulated release (remote.sim.versions), or random
    rom: aosp                      # aosp | miui | hyperos | coloros | originos | emui | oneui (remote.sim.roms)
    android: 13                    # the Android release: 10 ... 16
    input_refused: false           # `input` answers the INJECT_EVENTS SecurityException (a ROM switch off)
    ime_refused: false             # `ime` answers the WRITE_SECURE_SETTINGS SecurityException
    adbkeyboard_build: v2.5-dev    # v2.5-dev | v2.4-dev | root-2023 (ADBKeyboard's receiver: fixed, late, late)
    keyboard: latin                # latin | adbkeyboard: the keyboard chosen on the phone at start
    device_state: device           # device | unauthorized | offline | no permissions (the adb server's list)
    device_state_polls: null       # the state turns to `device` after this many device-list reads
    trace: null                    # a DroidBot output folder: serve that recording instead (the trace phone)
    trace_start: null              # its state to start in (state_str, a unique prefix, or a capture tag)
    profile: null                  # real-usb | real-wifi: a real phone's timings (remote.sim.realism.PROFILES)
    response_ms: 0                 # the screen shows an in-place change this long after its command (profiles: 33)
    transition_ms: 0               # ... and a new screen (an activity, an app) this long after (profiles: 250)
    tree_server_start_ms: 0        # uiautomator2's u2.jar server: its cold start, its warm read (the profiles set them)
    tree_server_read_ms: 0
    tree_server_shot_ms: 0         # its takeScreenshot: the capture and the JPEG encoding on the phone
    tree_server_one_call: 0        # 1: it answers one call at a time (0: each on a thread of its own, as NanoHTTPD does)
    tree_server_dies_after: []     # the Nth launch of the server dies after this many reads (UiAutomation lost)
    tree_server_empty_reads: 0     # the first reads answer an empty hierarchy
    tree_server_stale_reads: 0     # after each screen change, this many reads answer the tree from before it
    tree_server_crashes: false     # a ROM hook crashes the server at start (uiautomator2#1076)
    automation_holder_refusals: null  # the automation_holder lets go after refusing this many clients

The real-phone keys (``profile``, link speed, dump failures, displays, screen and
keyguard, secure layer, rotation) are described and checked in
`remote.sim.realism`; docs/testing.md lists them with their sources.

A relative ``trace:`` in a file is read from the file's folder. With a trace the
apps keys (resolution, contacts, popups, versions, rom) do not apply; the link keys do.

``Scenario.load(path)`` reads a file, ``Scenario.from_dict(d)`` / ``Scenario(**kw)``
take the same keys; an unknown key or a bad value is a `ConfigError` naming the file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remote.errors import ConfigError, did_you_mean
from remote.sim import realism, roms, tree_server
from remote.sim.versions import check_versions
from remote.yamlfile import line_of_key, load_yaml

DEFAULT_CONTACTS = ("张三", "李四", "王五", "文件传输助手")
ROMS = roms.ROMS
_RESOLUTION = re.compile(r"^\s*(\d{3,4})\s*[xX×*]\s*(\d{3,4})\s*$")


@dataclass(frozen=True)
class Scenario:
    resolution: str = "1080x2400"
    adbkeyboard: bool = True
    wechat_permission_dialog: bool = False
    ad_popup: bool = False
    loading_ms: int = 0
    secure_screen: bool = False
    drop_after_commands: int | None = None
    reset_every_commands: int | None = None
    uiautomator_delay_ms: int = 300
    contacts: tuple[str, ...] = field(default=DEFAULT_CONTACTS)
    versions: Mapping[str, str] = field(default_factory=dict)
    rom: str = "aosp"
    android: int = 13
    input_refused: bool = False
    ime_refused: bool = False
    adbkeyboard_build: str = "v2.5-dev"
    keyboard: str = "latin"
    device_state: str = "device"
    device_state_polls: int | None = None
    trace: str | None = None
    trace_start: str | None = None
    # real-phone behaviours (remote.sim.realism)
    profile: str | None = None
    link_mb_s: float | None = None
    input_ms: int = 0
    cmd_ms: int = 0
    png_ms: int = 0
    screencap_ms: int = 0
    idle_timeout_ms: int = 10000
    dump_failures: tuple[str, ...] = ()
    automation_holder: str | None = None
    displays: int = 1
    screen_off: bool = False
    keyguard: str = "none"
    secure_layer: bool = False
    rotation: int = 0
    response_ms: int = 0           # an in-place change is drawn this long after the command that made it
    transition_ms: int = 0         # a new screen (an activity, an app) is drawn this long after its command
    # uiautomator2's resident tree server (remote.sim.tree_server)
    tree_server_start_ms: int = 0
    tree_server_read_ms: int = 0
    tree_server_shot_ms: int = 0
    tree_server_one_call: int = 0
    tree_server_dies_after: tuple[int, ...] = ()
    tree_server_empty_reads: int = 0
    tree_server_stale_reads: int = 0
    tree_server_crashes: bool = False
    automation_holder_refusals: int | None = None

    def __post_init__(self) -> None:
        self.size  # noqa: B018 - validates the resolution
        realism.settle(self)   # a profile fills the timing keys left at their defaults; checks the keys
        tree_server.check(self)
        self._check_numbers()
        contacts = self.contacts
        if isinstance(contacts, str) or not all(isinstance(c, str) and c.strip() for c in contacts):
            raise ConfigError(f"contacts must be a list of names, not {contacts!r}")
        object.__setattr__(self, "contacts", tuple(c.strip() for c in contacts))
        if not isinstance(self.versions, Mapping):
            raise ConfigError(f"versions must map an app to a version (versions: {{wechat: 8.0.32}}), "
                              f"not {self.versions!r}")
        try:
            object.__setattr__(self, "versions", check_versions(self.versions))
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        roms.check(self)
        self._check_trace()

    def _check_numbers(self) -> None:
        """The timings are whole milliseconds >= 0, the command counts null or >= 1, the switches booleans."""
        for name in ("loading_ms", "uiautomator_delay_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be a whole number of milliseconds >= 0, not {value!r}")
        for name in ("drop_after_commands", "reset_every_commands"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError(f"{name} must be null or a whole number >= 1, not {value!r}")
        for name in ("adbkeyboard", "wechat_permission_dialog", "ad_popup", "secure_screen"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, not {getattr(self, name)!r}")

    def _check_trace(self) -> None:
        """``trace`` and ``trace_start`` are a folder path / state name each (kept as text); a start needs a trace."""
        for name in ("trace", "trace_start"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, str | Path | int)
                                      or not str(value).strip()):
                raise ConfigError(f"{name} must be a folder path / state name, not {value!r}")
            if value is not None:
                object.__setattr__(self, name, str(value).strip())
        if self.trace_start and not self.trace:
            raise ConfigError("trace_start needs trace (the recording to start in)")

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels: ``Scenario(resolution="720x1600").size == (720, 1600)``."""
        m = _RESOLUTION.match(str(self.resolution))
        if not m:
            raise ConfigError(f"resolution must look like 1080x2400, not {self.resolution!r}")
        width, height = int(m.group(1)), int(m.group(2))
        if not (320 <= width <= 2160 and width < height <= 4096):
            raise ConfigError(f"resolution {self.resolution!r} is not a portrait phone screen")
        return width, height

    @property
    def layout(self) -> str:
        """The Settings/launcher layout the apps draw: ``miui`` for MIUI and HyperOS, else ``aosp``."""
        return roms.LAYOUTS[self.rom]

    @property
    def sdk(self) -> int:
        return roms.ANDROID_SDK[self.android]

    def replace(self, **changes: Any) -> Scenario:
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, path: str | None = None) -> Scenario:
        source = data
        data = dict(data or {})
        known = [f.name for f in dataclasses.fields(cls)]
        if "contacts" in data and isinstance(data["contacts"], list):
            data["contacts"] = tuple(data["contacts"])
        try:
            if not set(data) - set(known):
                return cls(**data)
        except ConfigError:
            pass   # find every bad value below, not only the first
        problems = [ConfigError(f"unknown scenario key {str(key)[:40]!r}", path=path, line=line_of_key(source, key),
                                hint=did_you_mean(str(key), sorted(known))) for key in data if key not in known]
        good: dict[str, Any] = {}
        for key in (k for k in known if k in data):   # in field order: trace is checked before trace_start
            try:
                cls(**good, **{key: data[key]})
                good[key] = data[key]
            except ConfigError as exc:
                problems.append(ConfigError(exc.problem, path=exc.path or path, line=line_of_key(source, key),
                                            hint=exc.hint))
        if not problems:   # each value is fine alone, together they are not: the combined error says why
            return cls(**data)
        raise ConfigError.several(problems, "scenario")

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        path = Path(path)
        data = load_yaml(path)   # bounded: size, alias expansion, depth; errors name file and line
        if data is not None and not isinstance(data, dict):
            raise ConfigError("a scenario must be a mapping of keys to values", path=str(path))
        if data and isinstance(data.get("trace"), str) and not Path(data["trace"]).expanduser().is_absolute():
            data["trace"] = str(path.parent / data["trace"])
        return cls.from_dict(data, path=str(path))


def make_scenario(scenario: Scenario | str | Path | Mapping[str, Any] | None = None, **overrides: Any) -> Scenario:
    """A scenario from a file path, a dict, a `Scenario` or nothing, with keyword overrides on top."""
    if scenario is None:
        base = Scenario()
    elif isinstance(scenario, Scenario):
        base = scenario
    elif isinstance(scenario, Mapping):
        base = Scenario.from_dict(scenario)
    else:
        base = Scenario.load(scenario)
    if overrides:
        merged = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
        merged.update(overrides)
        base = Scenario.from_dict(merged)
    return base
