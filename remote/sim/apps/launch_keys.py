"""Key codes that start an app whatever is in front, as Android handles them (for ``input keyevent``).

- ``PhoneWindowManager.interceptKeyBeforeDispatching`` (AOSP, frameworks/base
  services/core/java/com/android/server/policy) starts
  ``Intent.makeMainSelectorActivity(ACTION_MAIN, category)`` for the keys in its
  ``sApplicationLaunchKeyCategories``: EXPLORER (64) -> APP_BROWSER, ENVELOPE (65)
  -> APP_EMAIL, CONTACTS (207), CALENDAR (208), MUSIC (209), CALCULATOR (210).
- ``PhoneFallbackEventHandler.onKeyUp`` (core/java/com/android/internal/policy):
  a CALL key (5) no app took starts ``ACTION_CALL_BUTTON``, the dialler.
- KeyEvent's reference: SETTINGS (176) "starts the system settings activity"
  (which builds route it is device configuration, ``global_keys.xml``; a report
  on issue 24 of this project saw it open Settings).
- ASSIST (219) starts the assistant: this phone has none, so nothing happens; a
  short CAMERA (27) press does nothing in AOSP's fallback handler ("add short
  press behavior here if desired"), so nothing happens here either.

On a locked or not-yet-set-up phone Android skips these; this phone is neither.
"""

from __future__ import annotations

LAUNCH_KEYS: dict[int, str] = {
    64: "com.android.chrome",          # APP_BROWSER
    65: "com.android.email",           # APP_EMAIL
    207: "com.android.contacts",       # APP_CONTACTS
    208: "com.android.calendar",       # APP_CALENDAR
    209: "com.android.music",          # APP_MUSIC
    210: "com.android.calculator2",    # APP_CALCULATOR
    5: "com.android.dialer",           # ACTION_CALL_BUTTON
    176: "com.android.settings",       # ACTION_SETTINGS
}
