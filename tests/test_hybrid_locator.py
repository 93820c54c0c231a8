"""HybridLocator: tier order per target_ref form, candidates, cache, visibility, strategies."""

import csv

import numpy as np
import pytest
from PIL import Image

from remote.core.locate.assets import AssetsManager
from remote.core.locate.cache import LocateCache
from remote.core.locate.hybrid_locator import HybridLocator, LocateStrategy, parse_target
from remote.core.locate.screen import Screen
from remote.core.records import LocateResult, UIElement
from tests.support.data import data_path
from tests.support.images import icon as _icon

REAL = data_path("real-dev")


def _screen(*placements, size=(400, 800)):
    scr = Image.new("RGB", size, (250, 250, 250))
    for icon, xy in placements:
        scr.paste(icon, xy)
    return scr


XML = ('<?xml version="1.0"?><hierarchy rotation="0">'
       '<node text="" class="android.widget.FrameLayout" clickable="false" bounds="[0,0][400,800]">'
       '<node text="张三" resource-id="app:id/name" class="android.widget.TextView" clickable="true" bounds="[10,100][200,150]"/>'
       '<node text="" content-desc="发送" resource-id="app:id/send" class="android.widget.Button" clickable="true" bounds="[300,700][390,780]"/>'
       '<node text="Edge" class="android.widget.TextView" clickable="true" bounds="[370,300][420,340]"/>'
       '<node text="Tiny" class="android.widget.TextView" clickable="true" bounds="[395,300][430,340]"/>'
       "</node></hierarchy>")


@pytest.fixture()
def assets(tmp_path):
    (tmp_path / "icons").mkdir()
    _icon(1).save(tmp_path / "icons" / "wechat.png")
    _icon(9).save(tmp_path / "icons" / "absent.png")
    (tmp_path / "index.json").write_text('{"icons": {"wechat": {"path": "icons/wechat.png", "aliases": ["微信"]}}}',
                                         encoding="utf-8")
    return AssetsManager(tmp_path)


class FakeVision:
    def __init__(self, bbox=(20, 20, 80, 80)):
        self.calls = []
        self.bbox = bbox

    def find_element(self, screenshot, description, *, candidates=(), elements=()):
        self.calls.append(("desc", description, list(candidates)))
        return LocateResult(True, element=UIElement(description=description, bbox=self.bbox, confidence=0.9))

    def find_element_by_image(self, reference_image, screenshot, *, candidates=(), elements=()):
        self.calls.append(("image", None, list(candidates)))
        return LocateResult(True, element=UIElement(bbox=self.bbox, confidence=0.9))


def test_parse_target_forms():
    assert parse_target("text:张三") == ("text", "张三")
    assert parse_target("id:a:id/b") == ("id", "a:id/b")
    assert parse_target("微信") == ("ref", "微信")
    assert parse_target("xy:540,2280") == ("xy", "540,2280")


def test_reference_by_alias_found_by_template(assets):
    loc = HybridLocator(assets=assets)
    res = loc.locate("微信", _screen((_icon(1), (100, 300))))
    assert res.success and res.method_used == "template" and res.tiers_tried == ["template"]
    assert res.element.bbox == (100, 300, 160, 360) and res.element.center == (130, 330)
    assert res.element.confidence >= 0.9 and res.reliable
    assert res.element.metadata["tier"] == "template" and "raw_score" in res.element.metadata


def test_absent_reference_falls_through_all_visual_tiers_without_vision(assets):
    loc = HybridLocator(assets=assets)
    res = loc.locate("absent", _screen((_icon(1), (100, 300))))
    assert not res.success
    assert res.tiers_tried == ["template", "multiscale", "orb", "vision"]
    assert "no vision model configured" in res.error


def test_vision_is_last_and_gets_candidates(assets):
    vision = FakeVision()
    loc = HybridLocator(assets=assets, vision=vision)
    res = loc.locate("text:不存在的东西", _screen(), hierarchy=XML)
    assert res.success and res.method_used == "vision"
    assert res.tiers_tried[0] == "tree" and res.tiers_tried[-1] == "vision"
    assert vision.calls[0][0] == "desc"


def test_opencv_only_never_calls_vision_and_ai_only_only_vision(assets):
    vision = FakeVision()
    res = HybridLocator(assets=assets, vision=vision, strategy="opencv_only").locate("absent", _screen())
    assert not res.success and vision.calls == [] and "vision" not in res.tiers_tried
    res = HybridLocator(assets=assets, vision=vision, strategy=LocateStrategy.AI_ONLY).locate("微信", _screen())
    assert res.success and res.tiers_tried == ["vision"] and len(vision.calls) == 1


def test_text_id_desc_through_tree(assets):
    loc = HybridLocator(assets=assets)
    scr = _screen()
    res = loc.locate("text:张三", scr, hierarchy=XML)
    assert res.method_used == "tree" and res.element.bbox == (10, 100, 200, 150) and res.element.confidence > 0.9
    assert loc.locate("text:发送", scr, hierarchy=XML).element.bbox == (300, 700, 390, 780)  # falls to desc
    assert loc.locate("id:send", scr, hierarchy=XML).element.center == (345, 740)
    assert loc.locate("desc:发送", scr, hierarchy=XML).success


def test_tree_is_fetched_from_device_only_when_needed(assets):
    scr = _screen((_icon(1), (100, 300)))

    class Dev:
        dumps = 0

        def screenshot(self):
            return scr

        def dump_hierarchy(self):
            Dev.dumps += 1
            return XML

    loc = HybridLocator(Dev(), assets=assets)
    assert loc.locate("wechat").success and Dev.dumps == 0          # an image target: no dump taken
    assert loc.locate("text:张三").success and Dev.dumps == 1       # a tree target: the dump taken with it
    screen = Screen(scr, XML)
    assert loc.locate("text:张三", screen).success and loc.locate("id:name", screen).success
    assert screen.tree() is screen.tree() and Dev.dumps == 1        # a given screen's tree, parsed once


def test_duplicates_give_candidates_not_reliable(assets):
    scr = _screen((_icon(1), (50, 50)), (_icon(1), (250, 600)))
    res = HybridLocator(assets=assets).locate("wechat", scr)
    assert res.success and not res.reliable
    assert {c.bbox for c in res.candidates} == {(50, 50, 110, 110), (250, 600, 310, 660)}


def test_partial_visibility(assets):
    loc = HybridLocator(assets=assets)
    res = loc.locate("text:Edge", _screen(), hierarchy=XML)   # 30 of 50 px visible: tap the visible part
    assert res.success and res.element.center == (385, 320)
    assert res.element.visible_region["can_interact"]
    res = loc.locate("text:Tiny", _screen(), hierarchy=XML)   # 5 of 35 px visible
    assert not res.success and "not interactable" in res.error


def test_fixed_and_xy(assets):
    loc = HybridLocator(assets=assets, fixed_points={"send": (250, 250), "px": {"point": [12, 34], "mode": "pixel"}})
    assert loc.locate("xy:100,200", _screen()).element.center == (100, 200)
    assert loc.locate("fixed:send", _screen()).element.center == (100, 200)   # 0-1000 on 400x800
    assert loc.locate("fixed:px", _screen()).element.center == (12, 34)
    assert not loc.locate("fixed:nope", _screen()).success


def test_cache_hit_expiry_and_invalidation(assets):
    now = [0.0]
    loc = HybridLocator(assets=assets, cache=LocateCache(ttl=30, clock=lambda: now[0]))
    scr = _screen((_icon(1), (100, 300)))
    first = loc.locate("wechat", scr)
    second = loc.locate("wechat", scr.copy())
    assert second.element.metadata.get("cached") and second.element.bbox == first.element.bbox
    assert loc.cache_stats["hits"] == 1
    now[0] = 31.0
    assert not loc.locate("wechat", scr.copy()).element.metadata.get("cached")   # expired
    moved = _screen((_icon(1), (100, 500)))
    res = loc.locate("wechat", moved)   # the screen around the cached box changed
    assert not res.element.metadata.get("cached") and res.element.bbox == (100, 500, 160, 560)
    loc.clear_cache()
    assert not loc.locate("wechat", moved).element.metadata.get("cached")


def test_locate_image_verify_location_and_bad_inputs(assets):
    loc = HybridLocator(assets=assets)
    scr = _screen((_icon(1), (100, 300)))
    res = loc.locate_image(_icon(1), scr)
    assert res.success
    el = res.element
    el.metadata["template"] = _icon(1)
    assert loc.verify_location(el, scr)
    assert not loc.verify_location(el, _screen())
    assert not loc.locate_image(Image.new("RGB", (1000, 1000)), scr).success   # larger than screen
    assert not loc.locate_image(np.zeros((0, 0, 3), np.uint8), scr).success
    with pytest.raises(ValueError):
        loc.locate_with_fallback("wechat", ["nonsense"], scr)


@pytest.mark.skipif(not (REAL / "MANIFEST.tsv").is_file(), reason=f"real-dev data not found at {REAL}")
def test_real_screens_template_and_tree():
    rows = list(csv.DictReader((REAL / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))
    loc = HybridLocator(strategy="opencv_only")
    for row in rows[::40]:
        img = Image.open(REAL / row["image_path"]).convert("RGB")
        xml = (REAL / row["xml_path"]).read_text(encoding="utf-8")
        from remote.core.locate.ui_tree import parse_hierarchy
        tree = parse_hierarchy(xml, img.size)
        for text in tree.texts()[:3]:
            res = loc.locate_with_fallback("text:" + text, ["tree"], img, hierarchy=xml)
            assert res.success, (row["image_path"], text)
        box = (img.width // 4, img.height // 3, img.width // 4 + 120, img.height // 3 + 90)
        res = loc.locate_image(img.crop(box), img)
        if res.success and res.reliable:
            assert res.element.bbox == box
