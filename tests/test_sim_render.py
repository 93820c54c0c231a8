"""One widget tree per screen: the screenshot and the uiautomator XML agree, at every resolution."""

from __future__ import annotations

import io
import re
import struct
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from remote.sim import SimPhone
from remote.sim.render import FONT_FILE

RESOLUTIONS = [(720, 1600), (1080, 2400), (1440, 3200)]
ATTRS = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
         "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds"]


def _bounds(node: ElementTree.Element) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = map(int, re.fullmatch(r"\[(\d+),(\d+)\]\[(\d+),(\d+)\]", node.get("bounds", "")).groups())
    return x1, y1, x2, y2


def _screens(phone: SimPhone):
    yield "launcher"
    phone.launch("com.tencent.mm")
    yield "wechat"
    phone.tap(*phone.find(desc="搜索").center)
    phone.type_text("张")
    yield "search"
    result = [w for w in phone.tree().walk() if w.text == "张三" and w.cls == "android.widget.TextView"]
    phone.tap(*result[0].center)
    yield "chat"
    phone.type_text("第一行\n第二行")           # a newline typed through ADBKeyboard is drawn, not a crash
    yield "chat with a two-line draft"
    phone.launch("com.android.settings")
    yield "settings"
    phone.tap(*phone.find(text="搜索设置").center)
    phone.type_text("WLAN")
    yield "settings search"
    phone.open_url("example.com")
    yield "chrome"


@pytest.mark.parametrize(("width", "height"), RESOLUTIONS)
def test_screenshot_and_dump_agree(width, height):
    phone = SimPhone(resolution=f"{width}x{height}")
    for _screen in _screens(phone):
        png = Image.open(io.BytesIO(phone.screencap(png=True)))
        assert png.size == (width, height)
        raw = phone.screencap(png=False)
        assert struct.unpack("<IIII", raw[:16]) == (width, height, 1, 1) and len(raw) == 16 + width * height * 4
        xml = phone.dump_xml()
        assert "\n" not in xml and xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>")
        root = ElementTree.fromstring(xml.encode("utf-8"))
        assert root.tag == "hierarchy" and root.get("rotation") == "0"
        nodes = list(root.iter("node"))
        assert _bounds(nodes[0]) == (0, 0, width, height)
        for node in nodes:
            assert [k for k in node.attrib if k != "NAF"] == ATTRS
            x1, y1, x2, y2 = _bounds(node)
            assert 0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height


def test_tap_targets_scale_with_density():
    sizes = []
    for width, height in RESOLUTIONS:
        phone = SimPhone(resolution=f"{width}x{height}")
        x1, y1, x2, y2 = phone.find(desc="微信").bounds
        sizes.append((x2 - x1) / width)
        assert (y2 - y1) >= 48 * width / 360  # at least 48 dp tall
    assert max(sizes) - min(sizes) < 0.01


def test_launcher_icons_are_distinct():
    phone = SimPhone()
    image = np.asarray(Image.open(io.BytesIO(phone.screencap(png=True))).convert("RGB")).astype(int)
    crops = []
    for name in ("微信", "设置", "Chrome", "相册", "日历", "时钟"):
        x1, y1, x2, _ = phone.find(desc=name).bounds
        cx = (x1 + x2) // 2
        crops.append(image[y1 + 30:y1 + 180, cx - 75:cx + 75])
    for i in range(len(crops)):
        for j in range(i + 1, len(crops)):
            assert np.abs(crops[i] - crops[j]).mean() > 20


def test_chinese_text_is_drawn_with_the_shipped_font():
    assert FONT_FILE.is_file() and (FONT_FILE.parent / "LICENSE-Apache-2.0.txt").is_file()
    phone = SimPhone()
    phone.launch("com.tencent.mm")
    title = phone.find(text="张三")
    x1, y1, x2, y2 = title.bounds
    crop = np.asarray(phone.frame().image)[y1:y2, x1:x2]
    assert (crop.min(axis=2) < 100).sum() > 200  # dark glyph pixels, not an empty box


def test_frames_are_cached_until_the_state_changes():
    phone = SimPhone()
    first = phone.screencap(png=False)
    assert phone.screencap(png=False) is first
    phone.key(4)
    phone.launch("com.android.settings")
    assert phone.screencap(png=False) is not first


def test_secure_screen_is_black_but_the_tree_remains():
    phone = SimPhone(secure_screen=True, resolution="720x1600")
    image = Image.open(io.BytesIO(phone.screencap(png=True)))
    assert image.size == (720, 1600) and image.getextrema() == ((0, 0), (0, 0), (0, 0))
    assert 'content-desc="微信"' in phone.dump_xml()


def test_compressed_dump_drops_plain_containers():
    phone = SimPhone()
    phone.launch("com.tencent.mm")
    assert phone.dump_xml(compressed=True).count("<node") < phone.dump_xml().count("<node")
    assert 'content-desc="搜索"' in phone.dump_xml(compressed=True)
