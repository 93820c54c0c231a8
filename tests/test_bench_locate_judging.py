"""The locator bench judges ``remote`` and Airtest by one rule (issue 40): on a screen with two identical
copies of the target, a tap on the other copy is ``copy`` whoever tapped, a tap on the target ``hit``, a tap
elsewhere ``wrong``; ``remote``'s refusal among the copies is ``dup``; the summary's "copies" column counts
both alike. And the ``moved`` condition's pairing from the UI dumps (``bench/_moved.py``)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from tests.support.images import icon

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _cases import copy_in  # noqa: E402
from _moved import elsewhere  # noqa: E402
from _tally import Tally, inside, judge, judge_tap, summary  # noqa: E402

A, B = (100, 200, 160, 260), (500, 900, 560, 960)     # the target and its identical copy
OTHER = (300, 500, 360, 560)                          # another icon


def _screen() -> np.ndarray:
    rng = np.random.default_rng(1)
    arr = np.full((1280, 720, 3), 250, np.uint8)
    arr[::40] = 200                                   # rules, so the screen is not flat
    arr += rng.integers(0, 3, arr.shape, dtype=np.uint8)
    for box, seed in ((A, 3), (B, 3), (OTHER, 9)):
        arr[box[1]:box[3], box[0]:box[2]] = np.asarray(icon(seed))
    return arr


def _rules(screen: np.ndarray):
    tpl = screen[A[1]:A[3], A[0]:A[2]]
    return (lambda pt: inside(pt, A)), (lambda box: copy_in(tpl, screen, box, 1.0)), tpl


def _centre(box):
    return ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)


def _trusted_at(point):
    """A ``remote`` result that trusts one point, as an Airtest answer does."""
    return SimpleNamespace(success=True, reliable=True, element=SimpleNamespace(center=point, bbox=(*point, *point)),
                           candidates=[])


@pytest.mark.parametrize(("point", "kind"), [(_centre(A), "hit"), (_centre(B), "copy"), (_centre(OTHER), "wrong"),
                                            ((700, 20), "wrong"), (None, "miss")])
def test_a_tap_is_judged_the_same_whichever_matcher_chose_it(point, kind):
    right, same_thing, _ = _rules(_screen())
    assert judge_tap(point, right, same_thing) == kind                       # Airtest's one point
    remote = _trusted_at(point) if point else SimpleNamespace(success=False)
    assert judge(remote, right, same_thing) == kind                          # ours, trusted there


def test_on_two_identical_copies_the_locators_refusal_and_a_tap_on_the_copy_count_alike():
    screen = _screen()
    right, same_thing, tpl = _rules(screen)
    res = HybridLocator(strategy="opencv_only", cache_ttl=0).locate_image(tpl[:, :, ::-1].copy(),
                                                                         Screen(screen[:, :, ::-1].copy()))
    assert res.success and not res.reliable, "two identical icons: the locator refuses to pick one"
    assert {_centre(e.bbox) for e in res.candidates} >= {_centre(A), _centre(B)}
    assert judge(res, right, same_thing) == "dup"
    tally = Tally()
    tally.add("remote", "checking", "same", judge(res, right, same_thing), 1.0)
    tally.add("airtest match_in", "checking", "same", judge_tap(_centre(B), right, same_thing), 1.0)
    ours, theirs = summary(tally, "remote", "checking"), summary(tally, "airtest match_in", "checking")
    for column in ("same", "target", "copies", "wrong"):
        assert ours[column] == theirs[column], column
    assert (ours["same"], ours["target"], ours["copies"], ours["wrong"]) == (100.0, 0.0, 100.0, 0.0)
    tally.add("airtest match_in", "checking", "same", judge_tap(_centre(OTHER), right, same_thing), 1.0)
    assert summary(tally, "airtest match_in", "checking")["wrong"] == 50.0


def test_an_absent_template_claimed_is_wrong_for_a_tap_and_claimed_for_a_refusal():
    _, same_thing, _ = _rules(_screen())
    assert judge_tap(_centre(A), None, same_thing) == judge(_trusted_at(_centre(A)), None, same_thing) == "wrong"
    refused = SimpleNamespace(success=True, reliable=False, element=None, candidates=[])
    assert judge(refused, None, same_thing) == "amb"
    tally = Tally()
    tally.add("remote", "checking", "negative", "amb", 1.0)
    tally.add("airtest match_in", "checking", "negative", "wrong", 1.0)
    assert summary(tally, "remote", "checking")["absent"] == summary(tally, "airtest match_in", "checking")["absent"]


LABEL = ("app:id/row", "Alice")


@pytest.mark.parametrize(("other", "expected"), [
    ({(0, 300, 200, 360): LABEL}, (0, 300, 200, 360)),                                    # moved down
    ({(0, 100, 200, 160): LABEL}, None),                                                  # in place
    ({(0, 300, 200, 360): LABEL, (0, 500, 200, 560): LABEL}, None),                       # which one?
    ({(0, 300, 260, 360): LABEL}, None),                                                  # resized
    ({(0, 300, 200, 360): ("app:id/row", "Bob")}, None),                                  # another element
])
def test_the_moved_condition_takes_the_one_node_that_is_the_element_elsewhere(other, expected):
    assert elsewhere((0, 100, 200, 160), LABEL, other) == expected
