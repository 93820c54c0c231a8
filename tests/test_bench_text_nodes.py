"""The OCR bench's ground truth (``bench/_text_nodes.py``) on real dumps: text the dump lists but the screen
does not draw as that text is left out, each reason a documented fact, and what is drawn beside it is kept
(the data folder's real-zh; skipped with a message where it is absent)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PIL import Image

from remote.core.locate.ui_tree import parse_hierarchy
from tests.support.data import data_path, looked

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _text_nodes import drawn_text_nodes  # noqa: E402

REAL_ZH = data_path("real-zh")


def _nodes(stem):
    image = REAL_ZH / (stem + (".png" if (REAL_ZH / (stem + ".png")).is_file() else ".jpg"))
    if not image.is_file():
        pytest.skip(f"real-zh screens not found at {looked('real-zh')}")
    size = Image.open(image).size
    tree = parse_hierarchy((REAL_ZH / (stem + ".xml")).read_text(encoding="utf-8"), size)
    kept, left_out = drawn_text_nodes(tree, size)
    return {n.text for n in kept}, left_out


def test_launcher3_dock_labels_are_not_drawn_its_workspace_labels_are():
    # Launcher3 hides the label of every icon in its hotseat (CellLayout.addViewToCellLayout).
    kept, left_out = _nodes("GeniusPudding__droidbot_multidevice/states__screen_2021-12-14_021503")
    assert left_out["hotseat"] == 5 and not kept & {"電話", "訊息", "Gmail", "Chrome", "相機"}
    assert {"設定", "相簿", "Instagram"} <= kept


def test_a_toast_drawn_over_the_dock_is_kept():
    kept, left_out = _nodes("llg23456__app-test-automation/bfs_2026-03-30_09-34-21__back_nav_1")
    assert left_out["hotseat"] == 0 and "登录送1500抽，全梦灵免费" in kept


def test_a_notifications_relative_time_is_dumped_long_and_drawn_short():
    kept, left_out = _nodes("GeniusPudding__droidbot_multidevice/states__screen_2022-02-05_094710")
    assert left_out["relative"] == 1 and "17 小時前" not in kept
    assert "輕觸即可下載檔案" in kept
