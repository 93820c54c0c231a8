"""`remote doctor`: is this phone ready? One line per check, what was measured, and for each ✗ what to do.

A check is one function ``(Probe) -> Check`` registered with ``@check``; `run` calls them in order.
They share what they read through the `Probe` (ROM, ADBKeyboard build, keyboards: read once), and
use only commands that change nothing on the phone:

* taps: ``input keyevent 0``. KEYCODE_UNKNOWN is a key no app and no system binding reacts to, and
  an injected key passes the same INJECT_EVENTS check as a tap (InputManagerService refuses every
  injected event alike on MIUI: uiautomator2#520 shows a key press refused there), so it is refused
  exactly when taps are. A tap would need a point that hits nothing, and a tap outside every window
  still counts as a touch outside a popup, which dismisses some; a key with no meaning does not.
* keyboard switching: ``ime list -s``. Where switching is refused every ``ime`` subcommand is
  (docs/adb.md#real-phones-behaviours-r1-r11, R2), and listing changes nothing.

The screen's checks (UI dump health and time, displays, rotation, lock and screen, screenshot time and
link speed) are `remote.core.device.screen_checks`'s, one line each. Adding a check is adding one
function here::

    @check
    def dump_time(probe: Probe) -> Check:
        ...
        return Check("UI dump", ok, f"{seconds:.1f} s", steps=(...,) if not ok else ())
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from remote.core.device import adbkeyboard, refusals, screen_checks, states
from remote.core.device import rom as roms
from remote.errors import RemoteError

if TYPE_CHECKING:
    from remote.core.device.adb_controller import ADBController

logger = logging.getLogger(__name__)
TAP_PROBE = ("input", "keyevent", "0")
IME_PROBE = ("ime", "list", "-s")


@dataclass(frozen=True)
class Check:
    """One line of the report: ``✓ tap injection  allowed …`` or ✗ with the steps that fix it."""

    name: str
    ok: bool
    measured: str
    steps: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, object]:
        return {"check": self.name, "ok": self.ok, "measured": self.measured, "steps": list(self.steps)}


class Probe:
    """What the checks share: the connected controller, and what they read once."""

    def __init__(self, adb: ADBController) -> None:
        self.adb = adb

    @functools.cached_property
    def rom(self) -> roms.Rom:
        return self.adb.rom()

    @functools.cached_property
    def build(self) -> adbkeyboard.Build:
        return self.adb.typer.build()

    @functools.cached_property
    def keyboards(self) -> adbkeyboard.Keyboards:
        return self.adb.typer.keyboards()

    @functools.cached_property
    def ime_refusal(self) -> refusals.Refusal | None:
        return self.refusal(IME_PROBE)

    def refusal(self, command: tuple[str, ...]) -> refusals.Refusal | None:
        """Run a harmless command; the phone's refusal of it, or None when it was accepted."""
        return refusals.read(list(command), self.adb.link.shell(list(command)))


CheckFn = Callable[[Probe], Check]
CHECKS: list[CheckFn] = []


def check(fn: CheckFn) -> CheckFn:
    """Register a check (they run in the order they are registered)."""
    CHECKS.append(fn)
    return fn


def run(probe: Probe, checks: list[CheckFn] | None = None) -> list[Check]:
    """Every check's line; a check that cannot be done is a ✗ saying why, never a crash of the others."""
    lines = []
    for fn in checks if checks is not None else CHECKS:
        try:
            lines.append(fn(probe))
        except RemoteError as exc:
            lines.append(Check(fn.__name__.replace("_", " "), False, f"could not check: {exc.message}",
                               (exc.hint,) if exc.hint else ()))
    return lines


def device_state(serial: str, state: str) -> Check:
    """The first line, from the adb server's list (before anything else can talk to the phone)."""
    state = states.normalise(state)
    if state == states.READY:
        return Check("device state", True, "device (USB debugging authorised)")
    return Check("device state", False, f"{state}: the phone {states.message(state)}", states.steps(state))


# ---------------------------------------------------------------- the checks


@check
def android(probe: Probe) -> Check:
    rom = probe.rom
    return Check("Android", True, f"{rom.android or '?'} (SDK {rom.sdk or '?'})")


@check
def rom(probe: Probe) -> Check:
    rom = probe.rom
    who = f" ({rom.manufacturer})" if rom.manufacturer else ""
    return Check("ROM", True, rom.name + (who if rom.family is not roms.RomFamily.OTHER else ""))


@check
def tap_injection(probe: Probe) -> Check:
    refused = probe.refusal(TAP_PROBE)
    if refused is None:
        return Check("tap injection", True, "allowed (`input keyevent 0`, a key nothing reacts to, was accepted)")
    what = f"refused ({refused.permission or refused.line})"
    return Check("tap injection", False, f"{what}: nothing can be tapped, swiped or pressed; apps still open",
                 roms.steps(probe.rom, refused.permission or roms.INJECT_EVENTS))


@check
def keyboard_switching(probe: Probe) -> Check:
    refused = probe.ime_refusal
    if refused is None:
        return Check("keyboard switching", True, "allowed (`ime list -s` answered)")
    what = f"refused ({refused.permission or refused.line})"
    if probe.keyboards.adbkeyboard_current:
        return Check("keyboard switching", True, f"{what}; not needed: ADB Keyboard is the current keyboard, so "
                     "`remote` types with it without switching (keep it selected)")
    return Check("keyboard switching", False, f"{what}: Chinese and other non-ASCII text cannot be typed "
                 "(ASCII still types through `input text`)",
                 roms.steps(probe.rom, refused.permission or roms.WRITE_SECURE_SETTINGS))


@check
def adbkeyboard_build(probe: Probe) -> Check:
    build, keyboards, rom = probe.build, probe.keyboards, probe.rom
    if not build.installed:
        return Check("ADBKeyboard", False, "not installed: only ASCII can be typed (through `input text`)",
                     adbkeyboard.INSTALL_STEPS)
    state = "current keyboard" if keyboards.adbkeyboard_current else "enabled" if keyboards.adbkeyboard_enabled \
        else "installed, not enabled"
    measured = f"{build.describe}; {state}"
    if build.too_old_for(rom.sdk):
        return Check("ADBKeyboard", False, f"{measured}: this build receives nothing on Android {rom.android}",
                     adbkeyboard.INSTALL_STEPS)
    if state == "installed, not enabled" and probe.ime_refusal is not None:
        return Check("ADBKeyboard", False, f"{measured}: `remote` cannot enable it here (switching is refused)",
                     ("enable ADB Keyboard in Settings → language & input → on-screen keyboard "
                      "(choosing it as the keyboard also lets `remote` type without switching)",))
    if build.maybe_unfixed_for(rom.sdk):
        measured += (f"; on Android {rom.android} only {adbkeyboard.FIXED_RELEASE} of these receives text, and its "
                     "version fields are the same as v2.4-dev's: typing reads the field back and says so")
    return Check("ADBKeyboard", True, measured)


# ---------------------------------------------------------------- the screen (remote.core.device.screen_checks)


@check
def ui_dump(probe: Probe) -> Check:
    return Check(*screen_checks.ui_dump(probe.adb))


@check
def fast_tree(probe: Probe) -> Check:
    return Check(*screen_checks.fast_tree(probe.adb))


@check
def displays(probe: Probe) -> Check:
    return Check(*screen_checks.displays(probe.adb))


@check
def rotation(probe: Probe) -> Check:
    return Check(*screen_checks.rotation(probe.adb))


@check
def lock_and_screen(probe: Probe) -> Check:
    return Check(*screen_checks.lock(probe.adb))


@check
def screenshot(probe: Probe) -> Check:
    return Check(*screen_checks.screenshot(probe.adb))
