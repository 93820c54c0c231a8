"""AssetsManager: names, aliases, variants, module order, broken entries, learned crops."""

import json
import re

import pytest
from PIL import Image

from remote.core.locate.assets import AssetsManager


def _png(path, color, size=(20, 20)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


@pytest.fixture()
def layout(tmp_path):
    assets = tmp_path / "assets"
    _png(assets / "icons" / "wechat.png", (0, 200, 0))
    _png(assets / "ui" / "actions" / "search_icon.png", (10, 10, 10))
    _png(assets / "ui" / "send_button.png", (0, 0, 255))
    (assets / "index.json").write_text(json.dumps({
        "version": "1.0",
        "icons": {"wechat": {"path": "icons/wechat.png", "aliases": ["微信", "WeChat"]}},
        "ui": {"search_icon": {"path": "ui/actions/search_icon.png", "aliases": ["搜索"]},
               "ghost": {"path": "ui/ghost.png", "exists": True},
               "planned": {"path": "ui/planned.png", "exists": False}},
    }), encoding="utf-8")
    module = tmp_path / "apps" / "wechat"
    _png(module / "images" / "send_button.png", (255, 0, 0))
    _png(module / "images" / "send_button_v2.png", (254, 0, 0))
    _png(module / "images" / "send_button_v3.png", (253, 0, 0))
    (module / "images" / "aliases.yaml").write_text("发送: send_button\n", encoding="utf-8")
    return assets, module


def test_names_aliases_and_module_first(layout):
    assets, module = layout
    am = AssetsManager(assets, module_dirs=[module])
    assert am.resolve_alias("微信") == "wechat" and am.resolve_alias("wechat") == "wechat"
    assert am.resolve_alias("发送") == "send_button"
    assert am.resolve_alias("nope") is None
    assert am.get_image("WeChat").getpixel((0, 0)) == (0, 200, 0)
    # module image before shared asset of the same name
    assert am.get_image("发送").getpixel((0, 0)) == (255, 0, 0)
    assert am.has("搜索") and not am.has("nope") and am.get_image("nope") is None


def test_variants_in_order_without_v1(layout):
    assets, module = layout
    am = AssetsManager(assets, module_dirs=[module])
    reds = [im.getpixel((0, 0))[0] for im in am.get_variants("send_button")]
    assert reds == [255, 254, 253, 0]  # module NAME, _v2, _v3, then the shared one


def test_available_refs_and_aliases(layout):
    assets, module = layout
    refs = AssetsManager(assets, module_dirs=[module]).get_available_refs()
    assert refs["module"] == ["send_button"]
    assert "wechat" in refs["icons"] and "search_icon" in refs["ui"]
    assert AssetsManager(assets).aliases()["微信"] == "wechat"


def test_broken_entries_are_reported_not_raised(layout, tmp_path):
    assets, module = layout
    (module / "images" / "aliases.yaml").write_text("ok: send_button\nbad: [unclosed\n", encoding="utf-8")
    am = AssetsManager(assets, module_dirs=[module])
    problems = "\n".join(am.problems())
    assert re.search(r"aliases\.yaml:\d+: invalid YAML", problems)
    assert "ghost.png is missing" in problems
    assert "planned" not in problems          # exists: false is a plan, not a problem
    (assets / "index.json").write_text("{\n  \"icons\": {,\n}", encoding="utf-8")
    am = AssetsManager(assets)
    assert any("index.json:2: bad JSON" in p for p in am.problems())
    assert am.get_image("send_button") is not None   # folder scan still works


def test_missing_folders_are_fine(tmp_path):
    am = AssetsManager(tmp_path / "none", module_dirs=[tmp_path / "nomodule"])
    assert am.get_available_refs() == {} and am.problems() == []


def test_add_learned_round_trip(layout):
    assets, _ = layout
    am = AssetsManager(assets)
    path = am.add_learned("search box", Image.new("RGB", (30, 10), (1, 2, 3)), (1080, 2400))
    assert path.name == "search_box__1080x2400.png" and path.is_file()
    entry = am.learned()[0]
    assert entry["name"] == "search box" and entry["screen_size"] == [1080, 2400]
    again = AssetsManager(assets)
    assert again.has("search box")
    assert again.get_image("search box").size == (30, 10)
    assert "search box" in again.get_available_refs()["custom"]


def test_reference_source_size_is_read_from_the_png(tmp_path):
    from PIL import PngImagePlugin

    from remote.core.locate.assets import SOURCE_SIZE_KEY, AssetsManager

    images = tmp_path / "mod" / "images"
    images.mkdir(parents=True)
    info = PngImagePlugin.PngInfo()
    info.add_text(SOURCE_SIZE_KEY, "1080x2400")
    Image.new("RGB", (40, 40), (200, 10, 10)).save(images / "tagged.png", pnginfo=info)
    Image.new("RGB", (40, 40), (10, 200, 10)).save(images / "plain.png")
    assets = AssetsManager(tmp_path / "assets", module_dirs=[tmp_path / "mod"])
    assert [s for _, s in assets.variants_with_sources("tagged")] == [(1080, 2400)]
    assert [s for _, s in assets.variants_with_sources("plain")] == [None]
