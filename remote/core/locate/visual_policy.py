"""When the visual tiers trust an off-scale match and when ORB is worth running (pure functions).

Scale prior: a reference cut from a screen of exactly this screen's size (a learned
crop stores its screen size; ``locate_image(..., source_size=)`` passes it) shows the
element at scale 1. A match at another scale on such a screen is most often a
different-size sibling (the bottom bar's larger comment icon for an inline comment
icon, measured at x1.09 on the bench), so its verified score is lowered by
``OFF_SCALE_PENALTY`` before calibration: an off-scale match must verify that much
better to be accepted. With an unknown or different source size the penalty does not apply;
a known source size still makes multiscale search the expected scale (:func:`expected_scale`)
first (a match verified at ``matching.EARLY_STOP`` there ends the search, as after any group),
and a source of another density skips the same-scale template tier (:func:`same_scale_possible`).

ORB gate: ORB finds deformed matches that uniform-scale templates miss, but it never
added a hit on the bench and costs 10-40 ms on every miss. It runs only for a
textured template (``ORB_MIN_EDGES`` strong-gradient pixels, so its keypoints are
not all on a few strokes) and only when the template tiers before it saw something
(a best near-miss with a raw score of at least ``ORB_BAND_LO``); when they saw
nothing at all, the template is absent, not deformed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

SAME_SCALE_TOL = 0.04      # |scale - 1| within this counts as scale 1 (refinement steps are 1.5-3 %)
OFF_SCALE_PENALTY = 0.1    # subtracted from an off-scale match's verified score on a same-size screen
ORB_MIN_EDGES = 0.04       # matching.information()["edges"]: textured enough for ORB
ORB_BAND_LO = 0.5          # best raw score of the tiers before ORB that makes ORB worth a try


def scale_penalty(scale: float, source_size: Sequence[int] | None, screen_size: Sequence[int]) -> float:
    """How much to lower a match's verified score for its scale (0 when the prior does not apply).

    >>> scale_penalty(1.09, (1080, 2340), (1080, 2340))
    0.1
    >>> scale_penalty(1.09, None, (1080, 2340)), scale_penalty(0.75, (1440, 3120), (1080, 2340))
    (0.0, 0.0)
    """
    if source_size is None or tuple(source_size) != tuple(screen_size):
        return 0.0
    return OFF_SCALE_PENALTY if abs(scale - 1.0) > SAME_SCALE_TOL else 0.0


def expected_scale(source_size: Sequence[int] | None, screen_size: Sequence[int]) -> float | None:
    """The scale a reference cut from a ``source_size`` screen most likely has on this screen (ratio
    of the shorter sides: Android lays out in dp, so pixel sizes follow the screen's density), or
    None when unknown. Multiscale searches it first; the other scales are still searched.

    >>> expected_scale((1080, 2340), (1440, 3120))
    1.3333
    """
    if not source_size or min(source_size) <= 0:
        return None
    return round(min(screen_size) / min(source_size), 4)


PRIOR_RANGE = (0.75, 1.4)   # around the expected scale: dpi at one width (400-480) x display size (0.85-1.3)
SCALE_RANGE = (0.5, 1.5)    # without a source size


def scale_range(source_size: Sequence[int] | None, screen_size: Sequence[int]) -> tuple[float, float]:
    """The scales multiscale searches: 0.5-1.5 for a reference of unknown origin; around the expected
    scale when its source screen size is known (:data:`PRIOR_RANGE`).

    >>> scale_range(None, (1080, 2340)), scale_range((1080, 2340), (1080, 2340))
    ((0.5, 1.5), (0.75, 1.4))
    """
    scale = expected_scale(source_size, screen_size)
    if scale is None:
        return SCALE_RANGE
    return round(scale * PRIOR_RANGE[0], 4), round(scale * PRIOR_RANGE[1], 4)


def same_scale_possible(source_size: Sequence[int] | None, screen_size: Sequence[int]) -> bool:
    """False when the reference is known to come from a screen of another density: the same-scale
    template tier is then skipped and multiscale starts at the expected scale (saves 3-4 ms).

    >>> same_scale_possible((1080, 2340), (810, 1755)), same_scale_possible(None, (810, 1755))
    (False, True)
    """
    scale = expected_scale(source_size, screen_size)
    return scale is None or abs(scale - 1.0) <= SAME_SCALE_TOL


def orb_worth_trying(info: dict[str, float], best_raw_before: float | None) -> bool:
    """ORB for a template with ``matching.information`` ``info``, after earlier tiers whose best
    raw score was ``best_raw_before`` (None: no template tier ran before it in this chain)."""
    if info.get("edges", 0.0) < ORB_MIN_EDGES:
        return False
    return best_raw_before is None or best_raw_before >= ORB_BAND_LO


THIN_MIN_RAW = 0.9   # a thin template (image_checks.information low_info, not flat) needs this raw score
RIVAL_MARGIN = 0.1   # visual matches this close (raw) to the best are compared where they differ
APART_MIN = 0.25     # image_checks.tell_apart evidence that makes one place the template and not the other

T = TypeVar("T")


def settle(best: T, rivals: list[T], apart: Callable[[T, T], float | None]) -> tuple[T, list[T]]:
    """The candidate the evidence picks among near-equal matches, and the rivals it cannot tell from it.

    ``apart(a, b)`` is :func:`image_checks.tell_apart` for the two places (None: identical copies).
    A candidate wins when it is told apart (``APART_MIN``) from every other: the key with the right
    symbol among keys of one shape. When none does, the candidates are grouped into copies and a group
    that another group is told apart from (as the worse) drops out: the selected page dot among grey
    ones. One group left with one member wins; otherwise the first group left is the answer with
    every member of the groups left as rivals (true duplicates are refused, not guessed).

    >>> settle("7", ["8", "9"], lambda a, b: 1.0 if a == "7" else -1.0)
    ('7', [])
    >>> settle("a", ["a2"], lambda a, b: None)
    ('a', ['a2'])
    >>> settle("white", ["grey", "grey2"], lambda a, b: None if a != "white" != b else (-1.0 if a == "white" else 1.0))
    ('grey', ['grey2'])
    """
    group = [best, *rivals]
    seen: dict[tuple[int, int], float | None] = {}

    def ev(i: int, j: int) -> float | None:   # antisymmetric: each pair is measured once
        if (j, i) in seen:
            e = seen[(j, i)]
            return None if e is None else -e
        if (i, j) not in seen:
            seen[(i, j)] = apart(group[i], group[j])
        return seen[(i, j)]

    for i in range(len(group)):
        if all((e := ev(i, j)) is not None and e >= APART_MIN for j in range(len(group)) if j != i):
            return group[i], []
    copies: list[list[int]] = []
    for i in range(len(group)):
        home = next((c for c in copies if ev(c[0], i) is None), None)
        if home is None:
            copies.append([i])
        else:
            home.append(i)
    left = [c for c in copies if not any((e := ev(o[0], c[0])) is not None and e >= APART_MIN
                                         for o in copies if o is not c)] or copies
    kept = [group[i] for c in left for i in c]
    return kept[0], kept[1:]


def refusal(info: dict[str, float], raw: float) -> str:
    """Why a match of a template with ``information()`` ``info`` and raw score ``raw`` cannot be
    trusted alone, or "" when it can: ``flat`` (a patch of one colour has no place of its own),
    ``thin`` (a line or a few dots: only a near-exact match, ``THIN_MIN_RAW``, is evidence).

    >>> refusal({"flat": 1.0, "low_info": 1.0}, 1.0), refusal({"flat": 0.0, "low_info": 1.0}, 0.97)
    ('flat', '')
    """
    if info.get("flat"):
        return "flat"
    if info.get("low_info") and raw < THIN_MIN_RAW:
        return "thin"
    return ""
