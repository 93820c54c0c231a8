"""Waiting for the screen to show an action's effect (issue 35): the simulated phone draws a change some time after
its command (`response_ms`, `transition_ms`, from the sources in remote.sim.realism), and with the resident tree
server the product reads until the tree shows the effect instead of sleeping a fixed wait
(`remote.runner.drawn`). Through the real adbutils client and the CLI against the simulated phone."""

from __future__ import annotations

import time

import pytest

from remote.core.device.adb_controller import ADBController
from remote.core.device.fast_tree import TreeMode
from remote.errors import DeviceError
from remote.runner import drawn
from remote.sim import apps
from tests.test_tree_server import run_cli

NODE = ('<node index="0" text="{text}" resource-id="com.tencent.mm:id/t" class="android.widget.TextView" '
        'package="com.tencent.mm" content-desc="" checked="false" focused="{focused}" selected="false" '
        'bounds="[0,0][100,50]" />')


def tree(text: str = "12:00", focused: str = "false") -> str:
    return f'<?xml version="1.0" ?><hierarchy rotation="0">{NODE.format(text=text, focused=focused)}</hierarchy>'


def test_the_shape_of_a_tree_leaves_its_texts_out_but_not_its_states():
    assert drawn.shape(tree("12:00")) == drawn.shape(tree("12:01"))        # a clock that ticks is no effect
    assert drawn.shape(tree(focused="true")) != drawn.shape(tree())        # a field that took the focus is one
    assert drawn.package(tree()) == "com.tencent.mm"


def test_the_wait_ends_once_the_effect_shows_and_holds():
    answers = iter([tree(), tree(focused="true"), tree(focused="true"), tree()])
    slept: list[float] = []
    seen = drawn.await_drawn(lambda: next(answers), 5.0, slept.append, before=tree())
    assert (seen.reads, seen.shown) == (3, True)     # unchanged, changed, the same again: done, long before 5 s
    assert len(slept) == 2
    assert seen.tree == tree(focused="true") and seen.beside is None   # the read that held; no frame was asked


def test_a_screen_that_never_changes_is_waited_for_its_time_and_a_little_more():
    seen = drawn.await_drawn(lambda: tree("12:0" + str(time.monotonic_ns() % 10)), 0.05, time.sleep,
                             before=tree())
    assert not seen.shown and seen.reads >= 2 and seen.tree is None   # texts changed all along: no effect


def test_a_frame_is_taken_beside_each_read_that_may_hold_and_kept_only_from_the_one_that_held():
    # unchanged, changed (A), changed again (B: the screen still moving), B again: held
    answers = iter([tree(), tree(focused="true"), tree(focused="true").replace("[0,0]", "[0,9]"),
                    tree(focused="true").replace("[0,0]", "[0,9]")])
    frames = iter(["frame beside the read of B", "frame beside the read that held"])
    asked: list[str] = []

    def frame() -> str:
        asked.append(name := next(frames))
        return name

    seen = drawn.await_drawn(lambda: next(answers), 5.0, lambda s: None, before=tree(), beside=frame)
    assert seen.shown and seen.reads == 4
    assert asked == ["frame beside the read of B", "frame beside the read that held"]   # none beside the first two
    assert seen.beside == "frame beside the read that held" and "[0,9]" in (seen.tree or "")

    def broken() -> str:
        raise DeviceError("screencap failed")

    answers = iter([tree(), tree(focused="true"), tree(focused="true")])
    seen = drawn.await_drawn(lambda: next(answers), 5.0, lambda s: None, before=tree(), beside=broken)
    assert seen.shown and seen.beside is None       # held, but no frame: the step takes its screen itself


def test_a_launch_waits_for_the_apps_window_and_a_read_that_fails_leaves_the_wait():
    other = tree().replace("com.tencent.mm", "com.android.launcher3")
    answers = iter([other, tree(), tree()])
    assert drawn.await_drawn(lambda: next(answers), 5.0, lambda s: None, app="com.tencent.mm") == \
        drawn.Drawn(3, True, tree())

    def gone() -> str:
        raise DeviceError("the link dropped")

    slept: list[float] = []
    assert drawn.await_drawn(gone, 0.3, slept.append, before=tree()) == drawn.Drawn(0, False)
    assert slept == [pytest.approx(0.3, abs=0.05)]                   # the rest of the wait, slept
    assert drawn.await_drawn(gone, 0.3, slept.append) == drawn.Drawn(0, False)   # nothing to wait for: a plain wait


@pytest.mark.sim(transition_ms=2000, response_ms=40)
def test_the_simulated_phone_shows_a_new_screen_only_once_it_is_drawn(sim_server, sim_phone):
    """The state changes at the command; the screen (server reads and screencap alike) shows it `transition_ms`
    later, the screen before it until then."""
    sim_phone.launch(apps.WECHAT)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    time.sleep(2.1)
    before = adb.dump_hierarchy()
    node = sim_phone.find(desc="搜索") or sim_phone.find(text="搜索")
    assert node is not None
    x, y = node.center
    tapped = time.monotonic()
    adb.tap(x, y)
    assert sim_phone.screen_name != "chats"                            # the app is on its next screen at once
    held = adb.dump_hierarchy()
    if time.monotonic() - tapped < 1.5:                                 # (a machine this slow proves nothing)
        assert drawn.shape(held) == drawn.shape(before)                # ... the screen still shows the one before
    deadline = time.monotonic() + 10
    while drawn.shape(adb.dump_hierarchy()) == drawn.shape(before):
        assert time.monotonic() < deadline, "the new screen was never drawn"
        time.sleep(0.1)
    assert time.monotonic() - tapped >= 2.0


@pytest.mark.sim(transition_ms=300, response_ms=40, tree_server_shot_ms=150)
def test_the_read_that_holds_is_made_beside_a_frame_and_that_pair_is_the_screen_after(sim_server, sim_phone):
    """After a tap the wait's agreeing read is made beside a frame: the two are the screen after the step (no read
    or frame more), of the new screen; a command sent before the next look drops the pair (it is read again)."""
    from remote.runner.capture import Capture

    sim_phone.launch(apps.WECHAT)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    time.sleep(0.4)
    capture = Capture(adb)
    before = capture.screen(tree=True)
    node = sim_phone.find(desc="搜索") or sim_phone.find(text="搜索")
    assert node is not None and before.xml is not None
    read, shapes = adb.dump_hierarchy, []

    def counted() -> str:
        xml = read()
        shapes.append(drawn.shape(xml))
        return xml

    adb.dump_hierarchy = counted     # type: ignore[method-assign]
    adb.tap(*node.center)
    screen = capture.after_action(2.0, time.sleep)
    frames = capture.stats.frames
    assert screen.xml is not None and drawn.shape(screen.xml) != drawn.shape(before.xml)   # the screen after it
    assert not screen.tree_reused and capture.last is screen and capture.stats.drawn == 1 and frames >= 2
    # the new screen was read twice: seen, then held beside the frame; that read is the step's tree (none after it)
    assert shapes.count(drawn.shape(screen.xml)) == 2 and screen.xml is adb.recent_dump(5.0).xml

    adb.press_back()                                   # a wait that keeps its pair, then a command before the look
    capture.await_drawn(2.0, time.sleep, keep=True)
    assert capture.stats.drawn == 2 and capture.stats.frames >= frames + 1
    reads = sim_phone.tree_server.reads
    adb.input_keyevent("KEYCODE_VOLUME_UP")
    look = capture.screen(tree=True)
    assert sim_phone.tree_server.reads > reads and look.xml is not None   # read again: the pair was dropped


@pytest.mark.sim(tree_server_start_ms=400, transition_ms=100)
def test_a_launch_whose_wait_begins_while_the_server_starts_ends_on_the_apps_window_once_it_answers(sim_server,
                                                                                                   sim_phone):
    """A run's first launch: the server is still starting (`warm_session`) when the launch's wait begins. The wait
    waits for it, within the wait, and its rest ends on the app's window, not slept whole."""
    from remote.runner.capture import Capture

    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    capture = Capture(adb)
    adb.warm_session()
    adb.launch_app(apps.WECHAT)
    assert not adb.tree_answers_now()                 # the wait begins with the server still starting
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    capture.await_drawn(3.0, sleep, app=apps.WECHAT, keep=True)
    assert capture.stats.drawn == 1 and adb.tree_answers_now()           # ended on the app's window, read
    assert sum(slept) < 1.0                                               # not the 3 s slept whole
    screen = capture.screen(tree=True)
    assert screen.xml is not None and drawn.package(screen.xml) == apps.WECHAT


def test_the_finished_screen_is_read_again_and_keeps_the_last_frame_only_when_its_tree_is_the_same(sim_server,
                                                                                                   sim_phone):
    from remote.runner.capture import Capture

    sim_phone.launch(apps.WECHAT)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO).connect()
    capture = Capture(adb)
    last = capture.screen(tree=True)
    reads, frames = sim_phone.tree_server.reads, capture.stats.frames
    finished = capture.last_if_unchanged(last)
    assert finished is not None and finished is not last and finished.source is last.source   # the same frame ...
    assert sim_phone.tree_server.reads == reads + 1 and capture.stats.frames == frames         # ... a tree read now
    assert finished.xml == last.xml and capture.last is finished

    node = sim_phone.find(desc="搜索") or sim_phone.find(text="搜索")
    assert node is not None
    adb.tap(*node.center)        # the screen changed after the last step's look (the sim draws it at once here)
    assert capture.last_if_unchanged(finished) is None                     # its frame does not stand for it
    assert capture.last_if_unchanged(None) is None


@pytest.mark.slow
def test_with_changes_drawn_late_every_step_is_judged_on_its_effect_and_nothing_is_typed_twice(tmp_path, capsys):
    """A phone slower than the configured waits (a new screen drawn 450 ms after the tap, the template waits 300 ms):
    the tree server is read until the screen shows each step's effect, so no step is judged on the screen before
    its action (each tap succeeds on its first try) and no read-back comes before the text was drawn (each text is
    sent once)."""
    code, summary, record = run_cli(tmp_path, capsys, "transition_ms: 450\nresponse_ms: 50\n")
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["chats"] == {"张三": ["你好"]}
    assert [s["retry_count"] for s in record["steps"]] == [0] * len(record["steps"])
    sent = [c for c in record["device_state"]["commands"] if "ADB_INPUT_B64" in c]
    assert len(sent) == 2                                             # 张三 and 你好, each once
    captures = record["device"]["captures"]
    assert captures["drawn"] >= 4                                     # waits ended on the effect, held


@pytest.mark.sim(transition_ms=450, response_ms=50)
def test_each_back_press_is_judged_on_the_screen_it_brought(sim_server, sim_phone, tmp_path):
    """back_to_home on a phone that draws a new screen 450 ms after BACK (the loop waits 300 ms): each press is
    judged once its screen is drawn, so one press leaves the search page (a look at the screen still drawn from
    before would press again, and leave the app)."""
    from remote.apps import APPS_DIR, ModuleRegistry
    from tests.support.runner_fixtures import runner_for
    from tests.test_apps import write_module

    write_module(tmp_path / "mods", "probe", "name: probe\nkeywords: [搜索页]\n", """\
        tasks:
          - name: search_and_back
            patterns: [去搜索页再回来]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}
              - {action: back_to_home}
              - {action: tap, target_ref: "text:搜索"}
              - {action: back_to_home}
            success_check: {app: com.tencent.mm}
        """)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO,
                        state_dir=str(tmp_path / "ime")).connect()
    try:
        runner = runner_for(adb, tmp_path, sleep=time.sleep, device_state=sim_phone.snapshot)
        runner.registry = ModuleRegistry([tmp_path / "mods", APPS_DIR])
        result = runner.run("去搜索页再回来")
    finally:
        adb.close()
    assert result.status.value == "success", result.error_message
    back = result.step_results[3]
    assert back.status.value == "success" and "home after 1 BACK presses" in back.notes
    assert sum(c.endswith("keyevent 4") for c in sim_phone.snapshot()["commands"]) == 1
    assert sim_phone.screen_name == "chats"


@pytest.mark.parametrize("frames", ["needed", "every"])
def test_a_screen_read_as_a_tree_takes_its_frame_when_first_read_and_never_after_a_command(sim_server, sim_phone,
                                                                                          frames):
    """--frames needed: a screen the next step will not compare on pixels is read as a tree alone; its frame is
    taken the first time its pixels are read (the same picture as a frame taken then), and refused once a command
    that may change the screen went in after its tree was read. --frames every: taken with the tree, as before."""
    from remote.errors import FrameGone
    from remote.runner.capture import Capture

    sim_phone.launch(apps.WECHAT)
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO, frames=frames).connect()
    time.sleep(0.4)
    capture = Capture(adb)
    capture.pixels_wanted = False                      # the next step reads no pixels of the screen after this one
    screen = capture.screen(tree=True)
    assert screen.xml is not None and screen.tree() is not None and screen.size == adb.window_size()
    assert screen.frame_taken is (frames == "every") and capture.stats.frames == (frames == "every")
    assert screen.gray.shape == (screen.size[1], screen.size[0])    # read: taken now, once
    assert screen.frame_taken and capture.stats.frames == 1
    assert screen.pil_if_taken() is not None

    chosen = capture.screen(tree=True)
    adb.shell(["ime", "enable", "com.android.adbkeyboard/.AdbIME"])   # the keyboard chosen ahead of typing, on a
    adb.shell(["ime", "set", "com.android.adbkeyboard/.AdbIME"])      # thread of its own in a run (`expect`)
    assert chosen.frame_taken is (frames == "every")
    chosen.take_frame()                                # still this screen's: choosing the keyboard is no step's act
    assert chosen.frame_taken and capture.stats.frames == 2

    later = capture.screen(tree=True)
    adb.input_keyevent("KEYCODE_VOLUME_UP")            # a command that may change the screen
    if frames == "every":
        assert later.frame_taken and later.bgr is not None
        return
    assert not later.frame_taken and later.pil_if_taken() is None and later.tree() is not None
    with pytest.raises(FrameGone):
        later.take_frame()
    assert capture.stats.frames == 2                   # never a picture of another moment
