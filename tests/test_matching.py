"""Matching on synthetic screens: exact, multiscale, ORB, candidates, absent templates, bad inputs."""

import numpy as np
import pytest
from PIL import Image

from remote.core.locate import features as F
from remote.core.locate import matching as M
from remote.core.locate import pyramid as P


def _icon(seed: int, size=(60, 60)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    h, w = size
    img = np.full((h, w, 3), 240, np.uint8)
    for _ in range(6):
        x1, y1 = rng.integers(0, w - 10), rng.integers(0, h - 10)
        img[y1:y1 + rng.integers(5, 20), x1:x1 + rng.integers(5, 20)] = rng.integers(0, 255, 3)
    return img


def _screen(*placements, size=(800, 400)) -> np.ndarray:
    h, w = size
    scr = np.full((h, w, 3), 250, np.uint8)
    scr[:, :, 1] = np.linspace(200, 255, w, dtype=np.uint8)[None, :]
    for img, (x, y) in placements:
        scr[y:y + img.shape[0], x:x + img.shape[1]] = img
    return scr


def test_exact_match_finds_the_box():
    icon = _icon(1)
    found = M.find_template(_screen((icon, (100, 300))), icon)
    assert found and found[0].bbox == (100, 300, 160, 360)
    assert found[0].score > 0.95 and found[0].checks["edge"] > 0.95


def test_absent_template_scores_low():
    found = M.find_template(_screen((_icon(1), (100, 300))), _icon(2))
    assert not found or found[0].score < 0.7


def test_duplicates_are_all_returned():
    icon = _icon(3)
    found = M.find_template(_screen((icon, (50, 50)), (icon, (300, 500))), icon)
    good = [m for m in found if m.score > 0.9]
    assert {m.bbox for m in good} == {(50, 50, 110, 110), (300, 500, 360, 560)}


def test_multiscale_finds_rescaled_icon():
    icon = _icon(4, (80, 80))
    big = np.asarray(Image.fromarray(icon).resize((60, 60), Image.Resampling.LANCZOS))
    found = M.find_multiscale(_screen((big, (200, 400))), icon)
    assert found and M.iou(found[0].bbox, (200, 400, 260, 460)) > 0.7
    assert abs(found[0].scale - 0.75) < 0.06


def test_orb_finds_textured_icon():
    icon = np.asarray(Image.fromarray(_icon(5, (120, 120))).resize((120, 120)))
    rng = np.random.default_rng(0)
    icon = np.clip(icon.astype(int) + rng.integers(-60, 60, icon.shape), 0, 255).astype(np.uint8)
    found = F.find_orb(_screen((icon, (200, 300))), icon)
    assert found and abs(found[0].center[0] - 260) < 8 and abs(found[0].center[1] - 360) < 8


def test_input_layouts_gray_rgba_pil():
    icon = _icon(6)
    scr = _screen((icon, (10, 10)))
    gray = M.find_template(scr[:, :, 0], icon[:, :, 0])
    assert gray and gray[0].bbox == (10, 10, 70, 70)
    rgba = np.dstack([scr, np.full(scr.shape[:2], 255, np.uint8)])
    assert M.find_template(rgba, icon)[0].bbox == (10, 10, 70, 70)
    pil = Image.fromarray(scr[:, :, ::-1])
    assert M.find_template(pil, Image.fromarray(icon[:, :, ::-1]))[0].bbox == (10, 10, 70, 70)


def test_bad_inputs():
    with pytest.raises(M.ImageInputError):
        M.find_template(np.zeros((0, 0, 3), np.uint8), _icon(1))
    with pytest.raises(M.ImageInputError):
        M.find_template(None, _icon(1))
    assert M.find_template(_icon(1, (20, 20)), _icon(2, (60, 60))) == []
    assert M.find_multiscale(_icon(1, (20, 20)), _icon(2, (60, 60))) == []


def test_low_information_detected():
    flat = np.full((40, 40, 3), 128, np.uint8)
    assert M.information(flat)["low_info"]
    line = np.full((40, 200, 3), 255, np.uint8)
    line[20] = 0
    assert M.information(line)["low_info"]
    assert not M.information(_icon(7))["low_info"]


def test_nms_keeps_best():
    a = M.Match((0, 0, 10, 10), 0.9, 0.9)
    b = M.Match((1, 1, 11, 11), 0.8, 0.8)
    c = M.Match((50, 50, 60, 60), 0.7, 0.7)
    assert M.nms([b, c, a]) == [a, c]


def test_degenerate_quad_rejected():
    square = np.float32([[0, 0], [10, 0], [10, 10], [0, 10]])
    bowtie = np.float32([[0, 0], [10, 10], [10, 0], [0, 10]])
    assert F._plausible_quad(square, 10, 10)
    assert not F._plausible_quad(bowtie, 10, 10)
    assert not F._plausible_quad(square * 5, 10, 10)   # 25x the area


@pytest.mark.parametrize("scale", [1.13, 0.88])
def test_in_between_scale_is_found_without_a_prior(scale):
    # Not one of the usual density ratios: the first scale group matches it only weakly (its
    # refinement stops 6 % short); the fill-in group must refine the same place again at its own scale.
    icon = _icon(11, (100, 100))
    side = round(100 * scale)
    shown = np.asarray(Image.fromarray(icon).resize((side, side), Image.Resampling.LANCZOS))
    found = M.find_multiscale(_screen((shown, (300, 200)), size=(1200, 700)), icon)
    assert found and M.iou(found[0].bbox, (300, 200, 300 + side, 200 + side)) > 0.85
    assert found[0].score >= M.EARLY_STOP and abs(found[0].scale / scale - 1) < 0.05


def test_a_shared_memo_changes_no_result():
    """One memo per locate serves every tier and reference: coarse peaks and half-level checks are
    reused only for the same template (two references of one target share a memo)."""
    big = np.array(Image.fromarray(_icon(7, (120, 120))).resize((150, 150)))
    scr = _screen((_icon(7, (120, 120)), (40, 60)), (big, (200, 500)), (_icon(8, (120, 120)), (220, 200)))
    memo: dict = {}
    for tpl in (_icon(7, (120, 120)), _icon(8, (120, 120)), _icon(9, (120, 120))):
        for find, kw in ((M.find_template, {}), (M.find_multiscale, {"prior_scale": 1.0})):
            shared = find(scr, tpl, memo=memo, **kw)
            alone = find(scr, tpl, **kw)
            assert [(m.bbox, m.score) for m in shared] == [(m.bbox, m.score) for m in alone]
    assert any(k[0] == "half" for k in memo) and any(k[0] == "coarse" for k in memo)


def test_pyramid_levels_between_powers_of_two_are_built_on_first_use():
    gray = np.random.default_rng(0).integers(0, 255, (2340, 1080), dtype=np.uint8)
    pyr = P.gray_pyramid(gray)
    assert pyr.denominators == [1, 2, 3, 4, 5, 6, 7, 8]
    assert pyr[1] is gray and pyr[8].shape == (293, 135)
    sixth = pyr[6]
    assert sixth.shape == (390, 180) and pyr[6] is sixth           # built once
    small = P.gray_pyramid(gray[:820, :360])                       # 1/8 would drop under 64 px
    assert small.denominators == [1, 2, 3, 4]
    with pytest.raises(KeyError, match="1/8"):
        small[8]


@pytest.mark.parametrize(("side", "min_side", "level"), [
    (100, 12, 8), (84, 12, 7), (66, 12, 5), (50, 12, 4),   # the coarsest level keeping 12 px
    (40, 12, 4), (26, 12, 3), (18, 12, 2),                 # small: 8 px, on 1/4 or finer
    (50, 8, 6),                                            # the fill-in scales: 8 px anywhere
])
def test_coarse_level_keeps_the_template_side(side, min_side, level):
    assert M._level_for(side, [1, 2, 3, 4, 5, 6, 7, 8], min_side) == level


def test_coarse_level_on_a_small_screen_stops_at_its_coarsest_level():
    assert [M._level_for(side, [1, 2, 4]) for side in (100, 26, 18)] == [4, 2, 2]


@pytest.mark.parametrize("side", [66, 84])
def test_a_template_searched_on_an_in_between_level_is_found_exactly(side):
    icon = _icon(12, (side, side))
    found = M.find_template(_screen((icon, (437, 911)), size=(2340, 1080)), icon)
    assert found and found[0].bbox == (437, 911, 437 + side, 911 + side) and found[0].score > 0.95


def test_a_weak_coarse_peak_is_dropped_on_the_quarter_level_before_the_half_level():
    icons = [_icon(seed, (100, 100)) for seed in (64, 65, 66, 67)]   # an absent icon with weak peaks far off
    scr = _screen(*((icon, (60 + 260 * (i % 2), 200 + 600 * (i // 2))) for i, icon in enumerate(icons[1:])),
                  size=(1800, 700))
    memo: dict = {}
    assert not [m for m in M.find_multiscale(scr, icons[0], memo=memo) if m.score >= 0.8]
    quarter = {k[1:] for k in memo if k[0] == "quarter"}
    half = {k[1:] for k in memo if k[0] == "half"}
    assert quarter and quarter - half                 # some peaks checked on 1/4 never reached the half level
    found = M.find_multiscale(scr, icons[2], memo={})  # a present one still passes both
    assert found and found[0].bbox == (320, 200, 420, 300) and found[0].score > 0.95


def test_halving_rounds_up_and_keeps_an_odd_last_column_and_row():
    img = np.zeros((5, 7), np.uint8)
    img[:, -1] = 200   # a template at the screen's right edge keeps its last column on the coarse levels
    img[-1, :] = 100
    half = P._halved(img)
    assert half.shape == (3, 4)
    assert half[0, -1] == 200 and half[-1, 0] == 100 and half[0, 0] == 0


@pytest.mark.parametrize("shown_scale", [1.3333, 1.36])
def test_the_expected_scale_is_matched_exactly_and_a_near_one_still_found(shown_scale):
    # The screen sizes say x1.3333; a phone whose layout rounds differently draws the element 2 % larger.
    icon = _icon(13, (90, 90))
    side = round(90 * shown_scale)
    shown = np.asarray(Image.fromarray(icon).resize((side, side), Image.Resampling.LANCZOS))
    found = M.find_multiscale(_screen((shown, (517, 333)), size=(1600, 900)), icon, 1.0, 1.87, prior_scale=1.3333)
    assert found and M.iou(found[0].bbox, (517, 333, 517 + side, 333 + side)) > 0.9
    assert found[0].score >= M.EARLY_STOP and abs(found[0].scale / shown_scale - 1) < 0.02


def _cards(colours: list[tuple[int, int, int]]) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """One card pattern (bars on white) drawn in each colour, side by side in rows of four."""
    boxes, places = [], []
    for i, colour in enumerate(colours):
        card = np.full((96, 120, 3), 255, np.uint8)
        for y, w in ((12, 90), (36, 60), (60, 100)):
            card[y:y + 14, 10:10 + w] = colour
        x, y = 37 + 143 * (i % 4), 101 + 131 * (i // 4)
        places.append((card, (x, y)))
        boxes.append((x, y, x + 120, y + 96))
    return _screen(*places, size=(900, 640)), boxes


def test_a_card_among_cards_of_other_colours_is_found(monkeypatch):
    # In gray every card is the template (NCC ignores contrast); only colour tells them apart, so the
    # right card can rank below the others on the coarse level. A place alike in gray that fails on
    # colour sends the look-alike sweep over the other coarse peaks, as a verified match does.
    colours = [(200, 60, 60), (60, 160, 60), (60, 60, 200), (160, 120, 30),
               (30, 140, 150), (150, 40, 150), (90, 90, 90), (230, 200, 40)]
    scr, boxes = _cards(colours)

    def verified(k: int) -> list[tuple[int, int, int, int]]:
        tpl = scr[boxes[k][1]:boxes[k][3], boxes[k][0]:boxes[k][2]].copy()
        return [m.bbox for m in M.find_template(scr, tpl) if m.score >= 0.8]

    assert all(verified(k) == [boxes[k]] for k in range(len(colours)))
    monkeypatch.setattr(M, "SWEEP_GRAY", 1.01)   # without it, a card ranked low on the coarse level is lost
    assert [k for k in range(len(colours)) if boxes[k] not in verified(k)]
