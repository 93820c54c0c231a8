"""What a real phone's screen adds to the apps' frames: displays, sleep, the keyguard, secure layers, rotation.

Used by ``screencap``, ``uiautomator dump`` and ``dumpsys`` (`remote.sim.android`)
for both phones. The apps draw portrait frames; here they are

* blacked out while the phone sleeps (R6: a screen-off capture is black);
* covered by the lock screen (and its PIN pad) while the keyguard shows (R6);
* black in the app's area, under a visible status bar, for a FLAG_SECURE layer (R8: the exact
  pixels of a real secure layer were not verified; black is what scrcpy#36 describes);
* turned for the display's rotation 1-3 (R9): the scenario's ``rotation`` at start, then what
  ``settings put system accelerometer_rotation|user_rotation`` set (`put_rotation`). The simulation does not lay its apps out in landscape: it
  turns the portrait frame and every bound in the dump, so the frame size, the tap space and
  ``dumpsys display`` behave as on a turned phone, while the picture stays sideways (a real
  app re-lays out; OCR and image matching on the sim's sideways picture find nothing);
* one of two displays (R5): the main one and a Flip-style cover display, each with the
  physical id ``dumpsys SurfaceFlinger --display-id`` lists.
"""

from __future__ import annotations

import re
from typing import Any, TypeAlias

from PIL import Image

from remote.sim.render import Shot, draw_tree, tree_to_xml
from remote.sim.widgets import Metrics, Widget

Phone: TypeAlias = Any   # remote.sim.device.Phone (which imports this module's sibling realism): passed in, not imported

MAIN_ID, COVER_ID = 4619827259835644672, 4619827551948147201   # ids of the kind SurfaceFlinger prints
COVER_SIZE = (720, 748)                                         # a Flip-style cover display
COVER_COMPONENT = "com.android.systemui/com.android.systemui.subscreen.SubHomeActivity"
SHADE_COMPONENT = "NotificationShade"
WARNING = ("[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first "
           "display found, however this default is not guaranteed to be consistent across captures. A display "
           "id should be specified.\nA display ID can be specified with the [-d display-id] option.\n"
           "See \"dumpsys SurfaceFlinger --display-id\" for valid display IDs.\n")   # AOSP A16 screencap.cpp
_BOUNDS = re.compile(r'bounds="\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]"')
_cache: dict[tuple[object, ...], Shot] = {}


def display_ids(phone: Phone) -> list[int]:
    return [MAIN_ID, COVER_ID] if phone.scenario.displays > 1 else [MAIN_ID]


def logical_size(phone: Phone) -> tuple[int, int]:
    """The display's size as turned now (``wm size`` keeps answering the natural, portrait size)."""
    w, h = phone.size
    return (h, w) if phone.hw.rotation % 2 else (w, h)


# The two Settings.System keys a phone is turned with over adb (`settings put system KEY VALUE`), and the values
# SettingsProvider accepts for them: Settings.System.USER_ROTATION ("default screen rotation when no other policy
# applies ... when ACCELEROMETER_ROTATION is zero", one of the Surface.ROTATION_* constants 0-3) and
# ACCELEROMETER_ROTATION (0: the accelerometer does not turn the screen), developer.android.com/reference/android/
# provider/Settings.System; the validators are AOSP frameworks/base SystemSettingsValidators.java
# (ACCELEROMETER_ROTATION: BOOLEAN_VALIDATOR, USER_ROTATION: InclusiveIntegerRangeValidator(0, 3)); a value they
# refuse is SettingsProvider.validateSystemSettingValue's IllegalArgumentException.
ROTATION_SETTINGS = {"user_rotation": ("0", "1", "2", "3"), "accelerometer_rotation": ("0", "1")}


def rotation_settings(phone: Phone) -> dict[str, str]:
    """What ``settings get system user_rotation|accelerometer_rotation`` answer."""
    return {"user_rotation": str(phone.hw.user_rotation), "accelerometer_rotation": str(int(phone.hw.auto_rotate))}


def put_rotation(phone: Phone, key: str, value: str) -> str | None:
    """``settings put system KEY VALUE`` for a `ROTATION_SETTINGS` key: the display follows USER_ROTATION while
    ACCELEROMETER_ROTATION is 0; while it is 1 the sensor decides, and the simulated phone lies still in its
    scenario's pose (the scenario's ``rotation``). The refusal's text for a value SettingsProvider refuses, else None."""
    if value not in ROTATION_SETTINGS[key]:
        return f"java.lang.IllegalArgumentException: Invalid value: {value} for setting: {key}\n"
    hw = phone.hw
    if key == "user_rotation":
        hw.user_rotation = int(value)
    else:
        hw.auto_rotate = value == "1"
    turned = phone.scenario.rotation if hw.auto_rotate else hw.user_rotation
    if turned != hw.rotation:
        hw.rotation = turned
        phone.changed()
    return None


def to_portrait(phone: Phone, x: int, y: int) -> tuple[int, int]:
    """A point in the turned display's space, in the apps' portrait space (inverse of ``_turn``)."""
    w, h = phone.size
    rotation = phone.hw.rotation
    if rotation == 1:
        return w - 1 - y, x
    if rotation == 2:
        return w - 1 - x, h - 1 - y
    if rotation == 3:
        return y, h - 1 - x
    return x, y


# ---------------------------------------------------------------- frames


def frame(phone: Phone, png: bool, display: int | None = None) -> bytes:
    """The bytes ``screencap`` writes for ``display`` (None: the first display)."""
    hw, scenario = phone.hw, phone.scenario
    if display == COVER_ID:
        key: tuple[object, ...] = ("cover",)
        if key not in _cache:
            _cache[key] = Shot(_cover_image())
        return _cache[key].png() if png else _cache[key].raw()
    plain = hw.awake and not hw.locked and not scenario.secure_layer and not hw.rotation
    if plain:
        frame_bytes: bytes = phone.screencap(png)
        return frame_bytes
    base = phone.screencap(False)
    key = (id(base), hw.awake, hw.locked, hw.bouncer, scenario.secure_layer, hw.rotation, phone.size)
    if key not in _cache:
        if len(_cache) > 16:
            _cache.clear()
        _cache[key] = Shot(_composed(phone, base))
    return _cache[key].png() if png else _cache[key].raw()


def _composed(phone: Phone, raw: bytes) -> Image.Image:
    w, h = phone.size
    hw = phone.hw
    if not hw.awake:
        image = Image.new("RGB", (w, h), (0, 0, 0))
    elif hw.locked:
        image = draw_tree(keyguard_tree(phone), (w, h), background=(24, 28, 40))
    else:
        image = Image.frombuffer("RGBA", (w, h), raw[16:], "raw", "RGBA", 0, 1).convert("RGB")
        if phone.scenario.secure_layer:
            top = Metrics(w, h).px(Metrics(w, h).status_dp)
            image.paste((0, 0, 0), (0, top, w, h))
    return _turn(image, phone.hw.rotation)


def _turn(image: Image.Image, rotation: int) -> Image.Image:
    return image.rotate(90 * rotation, expand=True) if rotation else image


def _cover_image() -> Image.Image:
    m = Metrics(*COVER_SIZE)
    root = Widget(bounds=(0, 0, *COVER_SIZE), bg=(0, 0, 0))
    root.add(Widget("android.widget.TextView", m.box(0, 120, 360, 80), text="12:00", text_size=m.px(48),
                    fg=(255, 255, 255), align="center"))
    return draw_tree(root, COVER_SIZE, background=(0, 0, 0))


def keyguard_tree(phone: Phone) -> Widget:
    """SystemUI's lock screen (or its PIN pad) as a widget tree: drawn, and dumped while it shows."""
    w, h = phone.size
    m = Metrics(w, h)
    root = Widget("android.widget.FrameLayout", (0, 0, w, h), package="com.android.systemui",
                  rid="com.android.systemui:id/notification_panel")
    white = (255, 255, 255)
    if phone.hw.bouncer:
        root.add(Widget("android.widget.TextView", m.box(0, 120, 360, 40), text="输入 PIN 码", text_size=m.px(20),
                        fg=white, align="center", rid="com.android.systemui:id/keyguard_message_area"))
        root.add(Widget("android.widget.EditText", m.box(60, 170, 240, 48), password=True, focusable=True,
                        rid="com.android.systemui:id/pinEntry", border=white))
        for i, digit in enumerate("123456789"):
            root.add(Widget("android.widget.TextView", m.box(60 + 80 * (i % 3), 260 + 80 * (i // 3), 80, 72),
                            text=digit, text_size=m.px(28), fg=white, align="center", clickable=True,
                            rid=f"com.android.systemui:id/key{digit}"))
        return root
    root.add(Widget("android.widget.TextClock", m.box(0, 140, 360, 90), text="12:00", text_size=m.px(64),
                    fg=white, align="center", rid="com.android.systemui:id/clock"))
    root.add(Widget("android.widget.TextView", m.box(0, m.content_bottom_dp - 60, 360, 30), text="向上滑动解锁",
                    text_size=m.px(14), fg=white, align="center",
                    rid="com.android.systemui:id/keyguard_indication_text"))
    return root


# ---------------------------------------------------------------- the dump


def dump_xml(phone: Phone, compressed: bool) -> str:
    """The ``uiautomator dump`` of the active window: the keyguard while it shows, else the app; turned."""
    if phone.hw.locked:
        xml = tree_to_xml(keyguard_tree(phone), phone.size, compressed=compressed)
    else:
        xml = phone.dump_xml(compressed)
    rotation = phone.hw.rotation
    if not rotation:
        return xml
    xml = xml.replace('<hierarchy rotation="0">', f'<hierarchy rotation="{rotation}">', 1)
    return _BOUNDS.sub(lambda mo: _turned_bounds(phone, *(int(v) for v in mo.groups())), xml)


def _turned_bounds(phone: Phone, x1: int, y1: int, x2: int, y2: int) -> str:
    w, h = phone.size
    rotation = phone.hw.rotation
    if rotation == 1:
        box = (y1, w - x2, y2, w - x1)
    elif rotation == 2:
        box = (w - x2, h - y2, w - x1, h - y1)
    else:
        box = (h - y2, x1, h - y1, x2)
    return 'bounds="[{},{}][{},{}]"'.format(*box)


# ---------------------------------------------------------------- dumpsys


def surfaceflinger_ids(phone: Phone) -> str:
    names = {MAIN_ID: "Built-in Screen", COVER_ID: "Cover Screen"}
    return "".join(f'Display {d} (HWC display {i}): port={129 + i} pnpId=SDC displayName="{names[d]}"\n'
                   for i, d in enumerate(display_ids(phone)))


def window(phone: Phone) -> str:
    """``dumpsys window``: one block per display (the cover's first, R5), the keyguard, the global focus."""
    w, h = logical_size(phone)
    app = phone.focus_component()
    hw = phone.hw
    main_focus = SHADE_COMPONENT if hw.locked or not hw.awake else app
    blocks = [(0, main_focus, app)]
    if phone.scenario.displays > 1:
        blocks.insert(0, (1, COVER_COMPONENT, COVER_COMPONENT))
    out = ["WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n"]
    for display, focus, focused_app in blocks if len(blocks) > 1 else ():
        out.append(f"  Display: mDisplayId={display} (organized) rootTasks=2\n"
                   f"    init={w}x{h} 440dpi base={w}x{h} 440dpi cur={w}x{h} app={w}x{h}\n"
                   f"    mCurrentFocus=Window{{4f2a9c{display} u0 {focus}}}\n"
                   f"    mFocusedApp=ActivityRecord{{7d3b2e{display} u0 {focused_app} t{12 + display}}}\n")
    top, top_app = blocks[0][1], blocks[0][2]
    out.append("\nWINDOW MANAGER WINDOWS (dumpsys window windows)\n"
               f"  Window #0 Window{{4f2a9c1 u0 {app}}}:\n    mDisplayId=0 mSession=Session{{9a1 u0a123}}\n"
               f"    mFrame=[0,0][{w},{h}]\n"
               f"  mCurrentFocus=Window{{4f2a9c1 u0 {top}}}\n"
               f"  mFocusedApp=ActivityRecord{{7d3b2e0 u0 {top_app} t12}}\n")
    locked = "true" if hw.locked else "false"
    secure = "true" if phone.scenario.keyguard == "pin" else "false"
    out.append("\nWINDOW MANAGER POLICY STATE (dumpsys window policy)\n"
               f"    mShowingDream=false mDreamingLockscreen={locked} mDreamingSleepToken=null\n"
               "    KeyguardServiceDelegate\n"
               f"      showing={locked}\n      inputRestricted={locked}\n      occluded=false\n"
               f"      secure={secure}\n      dreaming=false\n      systemIsReady=true\n"
               f"      deviceHasKeyguard={'true' if phone.scenario.keyguard != 'none' else 'false'}\n"
               f"      interactiveState={'INTERACTIVE_STATE_AWAKE' if hw.awake else 'INTERACTIVE_STATE_SLEEP'}\n")
    return "".join(out)


def display(phone: Phone) -> str:
    """``dumpsys display``: viewports (logical display 0 = the main physical display) and its rotation."""
    w, h = logical_size(phone)
    rotation = phone.hw.rotation
    ports = [f"DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:{MAIN_ID}', "
             f"physicalPort=129, orientation={rotation}, logicalFrame=Rect(0, 0 - {w}, {h}), "
             f"physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}"]
    if phone.scenario.displays > 1:
        cw, ch = COVER_SIZE
        ports.append(f"DisplayViewport{{type=EXTERNAL, valid=true, isActive=true, displayId=1, "
                     f"uniqueId='local:{COVER_ID}', physicalPort=130, orientation=0, logicalFrame=Rect(0, 0 - {cw}, "
                     f"{ch}), physicalFrame=Rect(0, 0 - {cw}, {ch}), deviceWidth={cw}, deviceHeight={ch}}}")
    return ("DISPLAY MANAGER (dumpsys display)\n"
            f"  mViewports=[{', '.join(ports)}]\n"
            f"  mDefaultViewport={ports[0]}\n"
            f"  mBaseDisplayInfo=DisplayInfo{{\"内置屏幕\", displayId 0, real {w} x {h}, rotation {rotation}, "
            f"density {phone.density_dpi}}}\n")


def power(phone: Phone) -> str:
    awake = phone.hw.awake
    return (f"  mWakefulness={'Awake' if awake else 'Asleep'}\n  mWakefulnessChanging=false\n"
            f"  mInteractive={'true' if awake else 'false'}\n"
            f"  mHoldingDisplaySuspendBlocker={'true' if awake else 'false'}\n")
