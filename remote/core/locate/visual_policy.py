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

from collections.abc import Sequence

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
