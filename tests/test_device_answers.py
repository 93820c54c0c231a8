"""What real phones answer, read by the pure parts of the device layer (table-style, no phone)."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest

from remote.core.device import screen_state
from remote.core.device.capture import PNG_MAGIC, png_to_bgr, raw_to_bgr, secure_app_area, strip_warnings
from remote.core.device.dump import DumpKind, UiDumper, classify, holders_in
from remote.core.device.frames import FrameGrabber
from remote.core.device.transport import changes_screen
from remote.errors import DumpFailed

XML = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node /></hierarchy>"


@pytest.mark.parametrize(("output", "kind"), [
    (XML + "UI hierchary dumped to: /data/local/tmp/x.xml", None),
    ("ERROR: could not get idle state.\n", DumpKind.IDLE),
    ("ERROR: null root node returned by UiTestAutomationBridge.\n", DumpKind.NULL_ROOT),
    ("Killed\n", DumpKind.KILLED),
    ("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient"
     "$Stub$Proxy@6b5d2a3already registered!\n", DumpKind.REGISTERED),
    ("cat: /data/local/tmp/x.xml: No such file or directory\n", DumpKind.NO_XML),
    ("<?xml version='1.0' ?><hierarchy rotation=\"0\"><node", DumpKind.NO_XML),   # cut short
])
def test_dump_outputs_are_classified(output, kind):
    assert classify(output) is kind


def test_holders_are_named_from_ps():
    ps = ("USER PID PPID VSZ RSS WCHAN ADDR S NAME\nu0_a201 3 1 1 1 0 0 S com.github.uiautomator\n"
          "u0_a202 4 1 1 1 0 0 S io.appium.uiautomator2.server.test\nshell 5 1 1 1 0 0 S sh\n")
    assert holders_in(ps) == ["Appium's UiAutomator2 server", "uiautomator2 (openatx: its ATX agent / UiAutomator service)"]
    assert holders_in("USER PID NAME\nroot 1 init\n") == []


class ScriptedLink:
    serial, generation = "s", 0

    def __init__(self, answers: list[str]) -> None:
        self.answers, self.sent = answers, []

    def shell(self, args, timeout=None):
        self.sent.append(args if isinstance(args, str) else " ".join(map(str, args)))
        return "USER PID NAME\n" if "ps" in self.sent[-1][:3] else self.answers.pop(0)


def test_null_root_is_retried_four_times_then_fails_with_its_kind():
    link = ScriptedLink(["ERROR: null root node returned by UiTestAutomationBridge."] * 4 + [XML])
    dumper = UiDumper(link, sleep=lambda s: None)
    assert dumper.dump() == XML and dumper.stats.attempts == 5
    link = ScriptedLink(["ERROR: null root node returned by UiTestAutomationBridge."] * 5)
    with pytest.raises(DumpFailed) as err:
        UiDumper(link, sleep=lambda s: None).dump()
    assert err.value.kind == "null_root" and err.value.holder == ""


def test_a_recent_dump_is_reused_only_while_nothing_changed_the_screen():
    link = ScriptedLink([XML])
    now = [100.0]
    dumper = UiDumper(link, sleep=lambda s: None, clock=lambda: now[0])
    dumper.dump()
    assert dumper.recent(3.0) is not None
    now[0] += 5
    assert dumper.recent(3.0) is None          # too old
    now[0] -= 5
    link.generation += 1                        # a tap went out
    assert dumper.recent(3.0) is None


def test_a_dump_during_which_the_screen_changed_is_not_reused():
    class TapDuring(ScriptedLink):
        def shell(self, args, timeout=None):
            self.generation += 1                # a tap sent while the dump ran: the tree may predate it
            return super().shell(args, timeout)

    dumper = UiDumper(TapDuring([XML]), sleep=lambda s: None)
    dumper.dump()
    assert dumper.recent(3.0) is None


def test_dumps_run_one_at_a_time():
    import threading
    import time

    running, overlaps = [0], []

    class Slow(ScriptedLink):
        def shell(self, args, timeout=None):
            running[0] += 1
            overlaps.append(running[0])
            time.sleep(0.05)
            running[0] -= 1
            return XML

    dumper = UiDumper(Slow([]), sleep=lambda s: None)
    threads = [threading.Thread(target=dumper.dump) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == [1, 1, 1] and dumper.stats.ok == 3   # a second UiAutomation client would be refused


@pytest.mark.parametrize(("command", "changes"), [
    ("input tap 1 2", True), ("cmd input tap 1 2", True), ("am broadcast -a ADB_INPUT_B64", True),
    ("monkey -p x 1", True), ("ime set x", True), ("dumpsys window", False), ("getprop ro.x", False),
    ("settings get secure default_input_method", False), ("wm size", False), ("ps -A 2>/dev/null || ps", False),
    ("rm -f /data/local/tmp/remote_uidump.xml; uiautomator dump /data/local/tmp/remote_uidump.xml", False),
])
def test_what_counts_as_a_command_that_changes_the_screen(command, changes):
    assert changes_screen(command) is changes


FLIP_SF = ('Display 4619827259835644672 (HWC display 0): port=129 pnpId=SDC displayName="Built-in Screen"\n'
           'Display 4619827551948147201 (HWC display 1): port=130 pnpId=SDC displayName="Cover Screen"\n')
FOLD_DISPLAY = ("mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=false, displayId=0, "
                "uniqueId='local:4619827259835644672', orientation=0}, DisplayViewport{type=INTERNAL, valid=true, "
                "isActive=true, displayId=0, uniqueId='local:4619827551948147201', orientation=1}]\n")


def test_the_default_display_is_logical_display_0_where_active():
    assert screen_state.default_display(FLIP_SF.splitlines()[0], "") is None      # one display: no -d
    assert screen_state.default_display(FLIP_SF, FOLD_DISPLAY) == "4619827551948147201"
    assert screen_state.default_display(FLIP_SF, "") == "4619827259835644672"      # else HWC display 0
    assert screen_state.rotation(FOLD_DISPLAY) == 0 and screen_state.rotation("orientation=3") == 3


def test_the_front_app_is_read_per_display_and_the_keyguard_reads_as_systemui():
    flip = ("  Display: mDisplayId=1 (organized)\n    mCurrentFocus=Window{a u0 com.android.systemui/com.android."
            "systemui.subscreen.SubHomeActivity}\n  Display: mDisplayId=0 (organized)\n"
            "    mCurrentFocus=Window{b u0 com.tencent.mm/com.tencent.mm.ui.LauncherUI}\n"
            "  mCurrentFocus=Window{a u0 com.android.systemui/com.android.systemui.subscreen.SubHomeActivity}\n")
    assert screen_state.focus(flip) == ("com.tencent.mm", "com.tencent.mm.ui.LauncherUI")
    locked = ("  mCurrentFocus=Window{c u0 NotificationShade}\n"
              "  mFocusedApp=ActivityRecord{d u0 com.tencent.mm/.ui.LauncherUI t3}\n")
    assert screen_state.focus(locked) == ("com.android.systemui", "NotificationShade")


@pytest.mark.parametrize(("power", "window", "expected"), [
    ("mWakefulness=Awake", "KeyguardServiceDelegate\n  showing=false\n  secure=true\n", (True, False, True)),
    ("mWakefulness=Asleep", "KeyguardServiceDelegate\n  showing=true\n  secure=false\n", (False, True, False)),
    ("mWakefulness=Dozing", "mShowingLockscreen=true mShowingDream=false", (False, True, False)),
    ("", "KeyguardServiceDelegate\n  showing=true\n  occluded=true\n  secure=true\n", (None, False, True)),
])
def test_sleep_and_keyguard_states(power, window, expected):
    state = screen_state.lock_state(power, window)
    assert (state.awake, state.keyguard, state.secure) == expected


def test_warning_lines_before_an_image_are_stripped_and_frames_decode_to_bgr():
    ok, png = cv2.imencode(".png", np.full((4, 3, 3), (10, 20, 30), np.uint8))
    data = (b"[Warning] Multiple displays were found, but no display id was specified! ...\n"
            b"A display ID can be specified with the [-d display-id] option.\n"
            b'See "dumpsys SurfaceFlinger --display-id" for valid display IDs.\n') + png.tobytes()
    image, warning = strip_warnings(data)
    assert bytes(image[:8]) == PNG_MAGIC and warning.count("\n") == 2
    assert png_to_bgr(image)[0, 0].tolist() == [10, 20, 30]
    raw = struct.pack("<4I", 1, 1, 1, 1) + bytes([200, 100, 50, 255])      # RGBA
    assert raw_to_bgr(raw)[0, 0].tolist() == [50, 100, 200]


def test_a_secure_layer_is_a_black_app_area_between_the_bars():
    frame = np.zeros((400, 200, 3), np.uint8)
    frame[:16] = 255                       # the status bar
    assert secure_app_area(frame)
    frame[200:210, 100:110] = 255          # something drawn in the app
    assert not secure_app_area(frame)


class PacedLink:
    """A link whose raw frames move at ``mb_s`` and whose PNGs take ``png_s`` (what FrameGrabber measures)."""

    serial = "s"

    def __init__(self, mb_s: float, png_s: float) -> None:
        self.mb_s, self.png_s, self.now = mb_s, png_s, 0.0
        self.raw = struct.pack("<4I", 1080, 2400, 1, 1) + bytes(1080 * 2400 * 4)
        ok, png = cv2.imencode(".png", np.zeros((2400, 1080, 3), np.uint8))
        self.png = png.tobytes()
        self.asked: list[str] = []

    def service(self, service, timeout=None):
        self.asked.append(service)
        png = service.endswith("-p")
        self.now += self.png_s if png else len(self.raw) / (self.mb_s * 1e6)
        return bytearray(self.png if png else self.raw)

    def probe(self, service, nbytes, *, retry=True):
        self.asked.append(service + " (probe)")
        return self.raw[:nbytes], 0.02, self.mb_s * 1e6


@pytest.mark.parametrize(("mb_s", "wire"), [(38.0, "raw"), (5.0, "png"), (0.5, "png")])
def test_the_wire_format_follows_the_links_speed(mb_s, wire):
    link = PacedLink(mb_s, png_s=0.45)
    grabber = FrameGrabber(link, display=lambda: None, clock=lambda: link.now)
    assert grabber.grab().shape == (2400, 1080, 3)
    assert grabber.report.wire == wire
    grabber.grab()
    assert link.asked[-1] == ("exec:screencap" if wire == "raw" else "exec:screencap -p")
