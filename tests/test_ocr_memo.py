"""OCR readings kept by their pixels (`remote.core.locate.ocr_memo`): the same screen read again is answered from
what was read, with real RapidOCR; other pixels, another reading or the memo turned off are read anew."""

from __future__ import annotations

import numpy as np
import pytest

from remote.core.locate import ocr, ocr_memo
from tests.support.images import text_screen

pytestmark = pytest.mark.skipif(not ocr.available(), reason="RapidOCR is part of the base install")


@pytest.fixture(autouse=True)
def _fresh_memo():
    ocr_memo.remember_readings(True)
    yield
    ocr_memo.remember_readings(True)


def test_the_same_pixels_are_read_once_and_other_pixels_anew():
    shot = np.asarray(text_screen([((60, 200), "设置", 48), ((60, 400), "蓝牙", 48)], size=(720, 1600)))
    first: dict[str, float] = {}
    quads: list[np.ndarray] = []
    lines = ocr.read_text(shot, timing=first, quads=quads)
    assert {b.text for b in lines} >= {"设置", "蓝牙"} and "remembered" not in first
    again: dict[str, float] = {}
    quads_again: list[np.ndarray] = []
    assert ocr.read_text(shot.copy(), timing=again, quads=quads_again) == lines   # equal pixels, another array
    assert again["remembered"] == 1 and len(quads_again) == len(quads)
    other = shot.copy()
    other[0, 0] = 254 - other[0, 0] // 2                                          # one pixel differs
    fresh: dict[str, float] = {}
    ocr.read_text(other, timing=fresh)
    assert "remembered" not in fresh
    second: dict[str, float] = {}
    ocr.read_text(shot, reading="second", timing=second)                           # another reading of it
    assert "remembered" not in second


def test_a_benchmark_turns_it_off():
    shot = np.asarray(text_screen([((60, 200), "通讯录", 48)], size=(720, 1600)))
    ocr_memo.remember_readings(False)
    ocr.read_text(shot)
    timing: dict[str, float] = {}
    ocr.read_text(shot, timing=timing)
    assert "remembered" not in timing and timing["det_ms"] > 0
