"""What a raw key code does beyond the app in front (pure): the gate's rules for ``input keyevent``.

From Android's own list (developer.android.com/reference/android/view/KeyEvent)
and the code that acts on the keys (AOSP ``PhoneWindowManager``,
``PhoneFallbackEventHandler``):

- **Call keys**: ``KEYCODE_CALL`` (5) opens the dialler when the app in front does
  not take it (``PhoneFallbackEventHandler.startCallActivity``: ``ACTION_CALL_BUTTON``)
  and answers a ringing call; ``KEYCODE_ENDCALL`` (6) hangs up;
  ``KEYCODE_HEADSETHOOK`` (79) "is used to hang up calls and stop media". A call
  needs the person's yes, like the runner's ``call`` step.
- **App keys** start an app whatever is in front: ``PhoneWindowManager``'s
  ``sApplicationLaunchKeyCategories`` map EXPLORER (64) to the browser, ENVELOPE
  (65) to e-mail, CONTACTS (207), CALENDAR (208), MUSIC (209) and CALCULATOR (210)
  to theirs; KeyEvent documents SETTINGS (176) "starts the system settings
  activity", ASSIST (219) and VOICE_ASSIST (231) launch the assistant, CAMERA (27)
  "is used to launch a camera application", SEARCH (84) and its long press open
  search, BOOKMARK (174), TV (170), GUIDE (172), DVR (173) and HELP (259) open
  their TV/app screens, VIDEO_APP_1-8 (289-296), FEATURED_APP_1-4 (297-300) and
  DEMO_APP_1-4 (301-304) launch the apps the device maps to them. These obey the
  allow list: only SETTINGS' app is known here (the system Settings); which app
  the others open depends on the phone, so they are pressed only when every app
  is allowed (``--allow '*'``), and the app in front is checked after any key.
- **Keys that act in the app in front** (text, navigation, editing, volume,
  media, HOME/BACK/MENU, recents and the notification shade, which are system
  surfaces) go to the app after the usual check of the app in front.
- Anything else (a TV tuner key, a stem button, a code past the list) is refused:
  what it does is not known here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class KeyKind(StrEnum):
    IN_APP = "in_app"         # acts in the app in front (or is a system surface: HOME, recents, the shade)
    CALL = "call"             # places, answers or ends a phone call: needs the person's yes
    APP = "app"               # launches an app: obeys the allow list
    UNKNOWN = "unknown"       # not known to be harmless: refused


@dataclass(frozen=True)
class KeyRule:
    code: int
    kind: KeyKind
    name: str
    opens: str = ""                          # what an app key opens ("the browser")
    packages: tuple[str, ...] = ()           # the app it opens, where that is the same on every phone


CALL_KEYS = {5: "CALL", 6: "ENDCALL", 79: "HEADSETHOOK"}
APP_KEYS: dict[int, tuple[str, str, tuple[str, ...]]] = {
    64: ("EXPLORER", "the browser", ()), 65: ("ENVELOPE", "the e-mail app", ()),
    207: ("CONTACTS", "the contacts app", ()), 208: ("CALENDAR", "the calendar", ()),
    209: ("MUSIC", "the music player", ()), 210: ("CALCULATOR", "the calculator", ()),
    176: ("SETTINGS", "the system settings", ("com.android.settings",)),
    219: ("ASSIST", "the assistant", ()), 231: ("VOICE_ASSIST", "the voice assistant", ()),
    27: ("CAMERA", "the camera", ()), 84: ("SEARCH", "search", ()), 174: ("BOOKMARK", "bookmarks", ()),
    170: ("TV", "live TV", ()), 172: ("GUIDE", "the programme guide", ()), 173: ("DVR", "recordings", ()),
    259: ("HELP", "help", ()),
    **{289 + i: (f"VIDEO_APP_{i + 1}", "a video app", ()) for i in range(8)},
    **{297 + i: (f"FEATURED_APP_{i + 1}", "a featured app", ()) for i in range(4)},
    **{301 + i: (f"DEMO_APP_{i + 1}", "a demo app", ()) for i in range(4)},
}
# Keys that act inside the app in front, or on system surfaces the gate always allows.
IN_APP_KEYS: frozenset[int] = frozenset({
    3, 4, *range(7, 27),          # HOME, BACK, digits * #, D-pad, volume, POWER
    *range(29, 64), *range(66, 79), 80, 81, 82, 83,   # letters, punctuation, modifiers, TAB, SPACE, ENTER, DEL, MENU, shade
    *range(85, 92), 92, 93, *range(111, 120), *range(122, 125), 126, 127, 128, 129, 130,
    *range(131, 164), 164, 168, 169, 187, 220, 221, 223, 224, *range(277, 285),
})


def rule(code: int) -> KeyRule:
    """What pressing ``code`` does, as far as the gate is concerned.

    >>> rule(176).kind.value, rule(176).packages, rule(5).kind.value, rule(66).kind.value
    ('app', ('com.android.settings',), 'call', 'in_app')
    """
    if code in CALL_KEYS:
        return KeyRule(code, KeyKind.CALL, CALL_KEYS[code])
    if code in APP_KEYS:
        name, opens, packages = APP_KEYS[code]
        return KeyRule(code, KeyKind.APP, name, opens, packages)
    if code in IN_APP_KEYS:
        return KeyRule(code, KeyKind.IN_APP, str(code))
    return KeyRule(code, KeyKind.UNKNOWN, str(code))
