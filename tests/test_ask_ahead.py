"""Facts a run reads once, asked side by side at its start (`remote.core.device.ahead`), and the frame link timed
beside the first step (`FrameGrabber.warm`): each answer is used once, never after a command that could change
it, never when old; a failed ask leaves the caller's own ask; through the real adbutils client against the
simulated phone, whose command log shows each fact read once."""

from __future__ import annotations

import threading
import time

import pytest

from remote.core.device.adb_controller import ADBController
from remote.core.device.ahead import MAX_AGE_S, Ahead
from remote.core.device.fast_tree import TreeMode
from remote.core.device.ime import ADBKEYBOARD_IME
from remote.errors import DeviceCommandError


class Phone:
    """Counts what it is asked; answers the n-th ask of a command with ``<command> #n``."""

    def __init__(self, fail: bool = False) -> None:
        self.asked: list[str] = []
        self.fail = fail
        self.lock = threading.Lock()

    def __call__(self, argv: list[str]) -> str:
        line = " ".join(argv)
        with self.lock:
            self.asked.append(line)
            n = self.asked.count(line)
        if self.fail:
            raise DeviceCommandError("the link dropped", command=line)
        return f"{line} #{n}"


def test_an_answer_asked_ahead_is_given_once_then_the_command_runs_again():
    phone = Phone()
    ahead = Ahead(phone)
    ahead.ask([["wm", "size"], ["getprop"]])
    assert ahead.take(["wm", "size"]) == "wm size #1"
    assert ahead.take(["wm", "size"]) is None            # used once: the next ask is the caller's own
    assert ahead.take(["getprop", "ro.build.version.sdk"]) is None   # only the exact command line
    assert ahead.take("wm size") is None                  # a raw line is never matched
    assert ahead.asked == 2 and ahead.given == 1


def test_a_command_that_can_change_an_answer_drops_it_and_only_what_it_can_change():
    phone = Phone()
    ahead = Ahead(phone)
    ahead.ask([["settings", "get", "secure", "default_input_method"], ["wm", "size"], ["pm", "list", "packages"]])
    assert ahead.take(["ime", "set", ADBKEYBOARD_IME]) is None
    assert ahead.take(["settings", "get", "secure", "default_input_method"]) is None
    assert ahead.take(["wm", "size"]) == "wm size #1"               # the keyboard changes no screen size
    assert ahead.take(["pm", "install", "-r", "/data/local/tmp/x.apk"]) is None
    assert ahead.take(["pm", "list", "packages"]) is None


def test_an_old_answer_is_not_given():
    now = [100.0]
    ahead = Ahead(Phone(), clock=lambda: now[0])
    ahead.ask([["pm", "list", "packages"]])
    now[0] += MAX_AGE_S + 1
    assert ahead.take(["pm", "list", "packages"]) is None


def test_a_failed_ask_leaves_the_callers_own_ask():
    ahead = Ahead(Phone(fail=True))
    ahead.ask([["getprop"]])
    assert ahead.take(["getprop"]) is None and ahead.given == 0


def test_only_reads_are_asked_ahead():
    ahead = Ahead(Phone())
    for command in (["input", "tap", "1", "2"], ["am", "start", "-n", "x/.Y"], ["ime", "set", ADBKEYBOARD_IME],
                    ["settings", "put", "secure", "x", "1"]):
        with pytest.raises(ValueError, match="only reads"):
            ahead.ask([command])


def test_a_session_reads_each_fact_once_and_frames_time_the_link_once(sim_server, sim_phone):
    object.__setattr__(sim_phone.scenario, "link_mb_s", 20.0)    # a raw frame ~0.5 s: the server's shots serve
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    adb.warm_session()
    adb.expect(["com.tencent.mm"], [])
    assert adb.window_size() == sim_phone.size and adb.rom().sdk > 0
    assert "com.tencent.mm" in adb.installed_packages()
    adb.launch_app("com.tencent.mm")
    adb.dump_hierarchy()
    adb.frame()
    adb.frame()
    commands = list(sim_phone.commands)
    for fact in ("wm size", "getprop", "pm list packages", "dumpsys SurfaceFlinger --display-id",
                 "cmd package resolve-activity --brief -a android.intent.action.MAIN -c "
                 "android.intent.category.LAUNCHER com.tencent.mm"):
        assert commands.count(fact) == 1, (fact, commands)
    assert len([c for c in commands if c.startswith("screencap")]) == 1     # the link timed once, beside
    assert adb.link_report().server_shots is True and adb.link_report().shots == 2   # the timed one not counted
    assert adb.ahead.given >= 5
    adb.close()


def test_an_answer_asked_before_ime_set_is_not_the_answer_after_it(sim_server, sim_phone):
    """The keyboard's setting asked ahead is the phone's before the switch; `ime set` drops it, so the check that
    ADBKeyboard became the keyboard reads the phone again, not the answer from before the switch."""
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.DUMP).connect()
    adb.shell(["ime", "enable", ADBKEYBOARD_IME])
    adb.ahead.ask([["settings", "get", "secure", "default_input_method"]])
    adb.shell(["ime", "set", ADBKEYBOARD_IME])
    assert sim_phone.ime == ADBKEYBOARD_IME
    assert adb.typer.current_ime() == ADBKEYBOARD_IME
    adb.close()


def test_a_plan_that_types_gets_the_keyboard_ready_beside_its_first_steps_and_close_puts_it_back(sim_server,
                                                                                               sim_phone):
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    previous = sim_phone.ime
    assert previous != ADBKEYBOARD_IME
    adb.expect([], ["你好"])
    deadline = time.monotonic() + 10
    while sim_phone.ime != ADBKEYBOARD_IME and time.monotonic() < deadline:   # on a thread of its own
        time.sleep(0.02)
    assert sim_phone.ime == ADBKEYBOARD_IME
    adb.prepare_typing("你好")                # the step before typing finds it ready: no second switch
    assert [c for c in sim_phone.commands if c.startswith("ime set")] == [f"ime set {ADBKEYBOARD_IME}"]
    adb.close()
    assert sim_phone.ime == previous


def test_close_right_after_a_plan_that_types_leaves_the_phones_keyboard(sim_server, sim_phone):
    """A run that ends at once (its first step failed) while the keyboard is switched ahead: close waits for
    the switch and puts the keyboard back, never leaving ADBKeyboard behind."""
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    previous = sim_phone.ime
    adb.expect([], ["你好"])
    time.sleep(0.01)
    adb.close()
    time.sleep(0.3)
    assert sim_phone.ime == previous


def test_with_the_dump_the_keyboard_waits_for_the_step_before_typing(sim_server, sim_phone):
    """With ``uiautomator dump`` the launch's wait holds a dump of the new screen, which a keyboard switch
    would make stale: nothing is switched ahead, and the frame link is not timed beside the first step."""
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.DUMP).connect()
    previous = sim_phone.ime
    adb.expect([], ["你好"])
    time.sleep(0.3)
    assert sim_phone.ime == previous and not [c for c in sim_phone.commands if c.startswith(("ime", "screencap"))]
    adb.close()
