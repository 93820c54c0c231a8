"""Facts a run reads once, asked side by side at its start (`remote.core.device.ahead`), and the frame link timed
beside the first step (`FrameGrabber.warm`): each answer is used once, never after a command that could change
it, never when old; a failed ask leaves the caller's own ask; through the real adbutils client against the
simulated phone, whose command log shows each fact read once."""

from __future__ import annotations

import threading

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


def test_a_command_that_can_change_an_answer_drops_every_answer_not_taken():
    phone = Phone()
    ahead = Ahead(phone)
    ahead.ask([["settings", "get", "secure", "default_input_method"]])
    assert ahead.take(["ime", "set", ADBKEYBOARD_IME]) is None
    assert ahead.take(["settings", "get", "secure", "default_input_method"]) is None


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
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    adb.warm_session()
    adb.expect(["com.tencent.mm"], typing=True)
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
    assert adb.ahead.given >= 5
    adb.close()


def test_the_keyboard_read_after_switching_is_the_phones_answer_then(sim_server, sim_phone):
    """The keyboard's settings asked ahead are the phone's before typing; `ime set` drops them, so the check
    that ADBKeyboard became the keyboard reads the phone again, not the answer from before the switch."""
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.DUMP).connect()
    before = adb.shell(["settings", "get", "secure", "default_input_method"]).strip()
    assert before != ADBKEYBOARD_IME
    adb.shell(["ime", "enable", ADBKEYBOARD_IME])
    adb.expect([], typing=True)
    adb.shell(["ime", "set", ADBKEYBOARD_IME])
    assert sim_phone.ime == ADBKEYBOARD_IME
    assert adb.typer.current_ime() == ADBKEYBOARD_IME
    adb.close()
