"""Displays, rotation, focus, power and the keyguard: what a real phone's ``dumpsys`` says (docs/adb.md#real-phones-behaviours-r1-r11).

Pure parsers of the phone's answers, then `ScreenState`, which asks the phone
(through any ``shell``) and wakes or unlocks it:

* R5 two displays: ``dumpsys SurfaceFlinger --display-id`` lists
  ``Display <physical id> (HWC display N): …``; the default display is the one
  ``dumpsys display`` shows as logical ``displayId=0`` (``uniqueId='local:<id>'``),
  else HWC display 0. ``dumpsys window`` prints a focus per display (a Flip's cover
  screen first), so the front app is read in the ``mDisplayId=0`` block.
* R6 sleep and keyguard: ``dumpsys power`` ``mWakefulness=``; ``dumpsys window``'s
  ``KeyguardServiceDelegate`` block (``showing=``, ``secure=``; AOSP
  KeyguardServiceDelegate.dump), older ``mShowingLockscreen=`` / ``mDreamingLockscreen=``,
  and a focus on ``NotificationShade`` / ``StatusBar``.
* R9 rotation: ``orientation=`` of ``dumpsys display``'s default viewport.
* The soft keyboard: ``dumpsys input_method``'s ``mInputShown=true|false`` (what appium-adb's
  ``isSoftKeyboardPresent`` and AndroidX test helpers read); a dump without the line says nothing.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from remote.errors import ScreenLocked

logger = logging.getLogger(__name__)
KEYCODE_WAKEUP = 224
_SF_DISPLAY = re.compile(r"^Display (\d+) \(HWC display (\d+)\)", re.M)
_FOCUS_APP = re.compile(r"([\w.]+)/([\w.$]+)")


def display_ids(surfaceflinger: str) -> list[tuple[str, int]]:
    """``[(physical id, HWC index), ...]`` from ``dumpsys SurfaceFlinger --display-id``.

    >>> display_ids('Display 4619827259835644672 (HWC display 0): port=129 pnpId=SDC displayName="x"')
    [('4619827259835644672', 0)]
    """
    return [(m.group(1), int(m.group(2))) for m in _SF_DISPLAY.finditer(surfaceflinger)]


def default_display(surfaceflinger: str, display_dump: str) -> str | None:
    """The physical id of logical display 0; None when the phone has a single display (no ``-d`` needed)."""
    ids = display_ids(surfaceflinger)
    if len(ids) < 2:
        return None
    known = {pid for pid, _ in ids}
    for viewport in re.findall(r"DisplayViewport\{[^}]*\}", display_dump):
        m = re.search(r"uniqueId='local:(\d+)'", viewport)
        if "displayId=0," in viewport and "isActive=false" not in viewport and m and m.group(1) in known:
            return m.group(1)
    return min(ids, key=lambda item: item[1])[0]


def rotation(display_dump: str) -> int:
    """0-3 from the default viewport's ``orientation=`` (else the first one in the dump)."""
    m = re.search(r"mDefaultViewport=DisplayViewport\{[^}]*?orientation=(\d)", display_dump) \
        or re.search(r"orientation=(\d)", display_dump)
    return int(m.group(1)) % 4 if m else 0


def focus(window_dump: str, display: int = 0) -> tuple[str, str]:
    """(package, activity) in front on ``display``; ("com.android.systemui", what) for the shade or keyguard.

    The per-display blocks (``Display: mDisplayId=N``) come first; the global
    ``mCurrentFocus`` / ``mFocusedApp`` lines are used when there are none.
    """
    text = window_dump
    blocks = re.split(r"(?m)^\s*Display: mDisplayId=", window_dump)
    for block in blocks[1:]:
        if block.split(None, 1)[0] == str(display):
            text = block
            break
    current = re.search(r"mCurrentFocus=Window\{[^}]*?\s(\S+)\}", text)
    if current:
        window = current.group(1)
        m = _FOCUS_APP.fullmatch(window)
        if m:
            return m.group(1), m.group(2)
        if window in ("NotificationShade", "StatusBar", "Keyguard"):
            return "com.android.systemui", window
    m = re.search(r"mFocusedApp=.*?\s([\w.]+)/([\w.$]+)", text)
    return (m.group(1), m.group(2)) if m else ("", "")


def keyboard_shown(input_method_dump: str) -> bool | None:
    """Is an input method's window up (a text field has the focus)? None when the dump does not say."""
    m = re.search(r"\bmInputShown=(true|false)\b", input_method_dump)
    return None if m is None else m.group(1) == "true"


@dataclass(frozen=True)
class Lock:
    awake: bool | None           # None: the phone did not say
    keyguard: bool               # the lock screen shows
    secure: bool                 # it asks for a PIN, pattern or password

    @property
    def ready(self) -> bool:
        return self.awake is not False and not self.keyguard


def lock_state(power_dump: str, window_dump: str) -> Lock:
    """Awake, keyguard showing, keyguard secure: from ``dumpsys power`` and ``dumpsys window``."""
    m = re.search(r"mWakefulness=(\w+)", power_dump)
    awake = None if m is None else m.group(1) == "Awake"
    delegate = window_dump.split("KeyguardServiceDelegate", 1)[1] if "KeyguardServiceDelegate" in window_dump else ""
    showing = re.search(r"\bshowing=(true|false)", delegate)
    if showing is not None:
        keyguard = showing.group(1) == "true" and "occluded=true" not in delegate
    else:
        keyguard = bool(re.search(r"(mShowingLockscreen|mDreamingLockscreen|isKeyguardShowing)=true", window_dump))
    secure = bool(re.search(r"\bsecure=true", delegate))
    return Lock(awake, keyguard, secure)


class Shell(Protocol):
    def shell(self, args: Sequence[object] | str, timeout: float | None = None) -> str: ...


LOCKED_HINT = ("unlock the phone by hand (remote never types a PIN, pattern or password), or for a test phone "
               "set the screen lock to None or Swipe; keep it awake with Developer options > Stay awake")


class ScreenState:
    """Asks the phone about its screen; ``wake_and_unlock()`` makes it ready to use, or says why it cannot."""

    def __init__(self, link: Shell, size: Callable[[], tuple[int, int]], *, serial: str = "",
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.link = link
        self.size = size
        self.serial = serial
        self.sleep = sleep

    def lock(self) -> Lock:
        """Awake, keyguard and its security, now: the two reads side by side (adbd runs each stream apart)."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lock-read") as pool:
            power = pool.submit(self.link.shell, ["dumpsys", "power"])
            window = self.link.shell(["dumpsys", "window"])
            return lock_state(power.result(), window)

    def wake_and_unlock(self) -> list[str]:
        """Wake a sleeping phone, swipe away a lock screen without a PIN; `ScreenLocked` when one asks for it.

        Returns what was done (for the run's notes).
        """
        done: list[str] = []
        state = self.lock()
        if state.awake is False:
            self.link.shell(["input", "keyevent", KEYCODE_WAKEUP])
            self.sleep(0.5)
            done.append("woke the phone (the screen was off)")
            state = self.lock()
        if state.keyguard and state.secure:
            raise ScreenLocked("the phone is locked with a PIN, pattern or password", serial=self.serial,
                               hint=LOCKED_HINT)
        for _ in range(2):
            if not state.keyguard:
                return done
            w, h = self.size()
            self.link.shell(["input", "swipe", w // 2, int(h * 0.85), w // 2, int(h * 0.25), 300])
            self.sleep(0.6)
            state = self.lock()
            if not state.keyguard:
                done.append("swiped away the lock screen (no PIN is set)")
                return done
            if state.secure:
                break
        raise ScreenLocked("the lock screen stays after a swipe: it asks for a PIN, pattern or password",
                           serial=self.serial, hint=LOCKED_HINT)
