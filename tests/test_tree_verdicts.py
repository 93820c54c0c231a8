"""Every step verified by a fresh tree when trees are cheap (issue 35 item 3), on the simulated phone through
the real adbutils client and the runner's own `Judge` and `Capture`.

The negative test: a tap the next step types after that lands on another field (which brings up the keyboard
too) is judged wrong at that step. The soft keyboard alone (the check used with ``uiautomator dump``) cannot
tell: any focused field brings it up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from remote.core.device.adb_controller import ADBController
from remote.core.device.fast_tree import TreeMode
from remote.core.locate.ui_tree import parse_hierarchy
from remote.core.plan.steps import StepPlan
from remote.core.records import ExecutionLevel, LocateResult, StepOutcome, StepResult, UIElement
from remote.runner.capture import Capture
from remote.runner.clock import Clock
from remote.runner.tools import StepTools
from remote.runner.verdicts import Judge

CHROME = "com.android.chrome"


def judge_for(adb: ADBController) -> Judge:
    tools = StepTools(device=adb, locator=None, checks=None, clock=Clock(sleep=lambda s: None),  # type: ignore[arg-type]
                      person=None, capture=Capture(adb), apps=None)  # type: ignore[arg-type]
    return Judge(tools, aimer=None)  # type: ignore[arg-type]


def centre(bounds: tuple[int, int, int, int]) -> tuple[int, int]:
    return (bounds[0] + bounds[2]) // 2, (bounds[1] + bounds[3]) // 2


def tap_then_type(adb: ADBController, aimed_id: str, landed_id: str) -> tuple[Any, Any]:
    """Chrome's new tab page: the step aims at ``aimed_id``, the finger lands on ``landed_id``; its verdict."""
    judge = judge_for(adb)
    adb.launch_app(CHROME)
    before = judge.tools.capture.screen(tree=True, fresh=True)
    nodes = {n.resource_id: n for n in parse_hierarchy(before.xml).nodes}
    aimed, landed = nodes[f"{CHROME}:id/{aimed_id}"], nodes[f"{CHROME}:id/{landed_id}"]
    step = StepPlan(step=1, action="tap", target_ref=f"id:{aimed.resource_id}")
    following = StepPlan(step=2, action="input_text", params={"text": "天气"})
    loc = LocateResult(True, UIElement(element_type="EditText", bbox=aimed.bounds, confidence=1.0))
    keyboard = judge.keyboard_before(step, following)
    # a tap the next step types after: with the dump the keyboard (down) judges it, so it is read before the tap;
    # with cheap trees the tree after the tap judges it, and nothing is read before
    assert keyboard is (None if adb.tree_is_cheap() else False)
    adb.tap(*centre(landed.bounds))
    return judge.after_tap(step, ExecutionLevel.LOCATE_AND_EXECUTE, before, loc, True, StepResult(step), keyboard,
                           following)


@pytest.fixture
def served_adb(sim_server: Any) -> Iterator[ADBController]:
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.AUTO, sleep=lambda s: None).connect()
    yield adb
    adb.close()


def test_a_tap_that_lands_on_another_field_is_judged_wrong_at_that_step(served_adb, sim_phone):
    # the step aims at the page's search box; the finger lands on the address bar, which brings up the keyboard
    after, verdict = tap_then_type(served_adb, "search_box_text", "url_bar")
    assert served_adb.keyboard_shown() is True                # the keyboard check would have passed it
    assert verdict.verified is False and verdict.outcome is StepOutcome.WRONG_PAGE and verdict.method == "focus-tree"
    assert "url_bar" in verdict.change_description and "another field" in verdict.change_description
    assert after.xml is not None and not after.tree_reused    # judged on a tree read after the tap
    assert sim_phone.tree_server.reads >= 2 and not [c for c in sim_phone.commands if "uiautomator dump" in c]


def test_a_tap_that_focuses_the_field_it_aimed_at_is_judged_right_on_the_tree(served_adb):
    after, verdict = tap_then_type(served_adb, "url_bar", "url_bar")
    assert verdict.verified is True and verdict.method == "focus-tree" and "url_bar" in verdict.change_description


def test_with_the_dump_the_keyboard_still_judges_the_tap(sim_server):
    adb = ADBController(sim_server.serial, port=sim_server.port, tree=TreeMode.DUMP, sleep=lambda s: None).connect()
    after, verdict = tap_then_type(adb, "search_box_text", "url_bar")
    adb.close()
    assert verdict.method == "focus" and after is None         # the saving the dump path keeps, and its blind spot
