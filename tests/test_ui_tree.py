"""UI-tree parsing and finders, on hand-written dumps and on real ones (the data folder's real-dev, `tests.support.data`)."""

import csv

import pytest
from PIL import Image

from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.ui_tree import UITreeError, normalize_text, parse_bounds, parse_hierarchy
from remote.errors import LocateError
from tests.support.data import data_path

REAL = data_path("real-dev")

DUMP = (
    "junk from adb\n<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    '<hierarchy rotation="0">'
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.tencent.mm"'
    ' content-desc="" clickable="false" enabled="true" bounds="[0,0][1080,2400]">'
    '<node index="0" text="" resource-id="com.tencent.mm:id/row" class="android.widget.LinearLayout"'
    ' package="com.tencent.mm" content-desc="" clickable="true" enabled="true" bounds="[0,300][1080,420]">'
    '<node index="0" text="张 三" resource-id="com.tencent.mm:id/name" class="android.widget.TextView"'
    ' package="com.tencent.mm" content-desc="" clickable="false" bounds="[40,320][300,400]"/>'
    "</node>"
    '<node index="1" text="张三丰" resource-id="" class="android.widget.TextView" package="com.tencent.mm"'
    ' content-desc="" clickable="true" bounds="[40,500][300,560]"/>'
    '<node index="2" text="" resource-id="com.tencent.mm:id/send" class="android.widget.Button"'
    ' package="com.tencent.mm" content-desc="Send" clickable="true" bounds="[900,2200][1060,2300]"/>'
    '<node index="3" text="Hidden" resource-id="" class="android.widget.TextView" package="com.tencent.mm"'
    ' content-desc="" clickable="true" bounds="[40,2500][300,2600]"/>'
    '<node index="4" text="Zero" resource-id="" class="android.widget.TextView" package="com.tencent.mm"'
    ' content-desc="" clickable="true" bounds="[40,600][40,660]"/>'
    '<node index="5" text="" resource-id="com.tencent.mm:id/input" class="android.widget.EditText"'
    ' package="com.tencent.mm" content-desc="" focused="true" clickable="true" bounds="[40,2200][880,2300]"/>'
    "</node></hierarchy>UI hierchary dumped to: /dev/tty\n"
)


@pytest.fixture()
def tree():
    return parse_hierarchy(DUMP, (1080, 2400))


def test_parses_nodes_with_structure(tree):
    assert len(tree.nodes) == 8
    root = tree.nodes[0]
    assert root.parent is None and root.depth == 0 and root.children == (1, 3, 4, 5, 6, 7)
    name = tree.nodes[2]
    assert name.parent == 1 and tree.nodes[1].children == (2,)
    assert name.resource_id == "com.tencent.mm:id/name" and name.bounds == (40, 320, 300, 400)
    assert name.center == (170, 360)


def test_find_by_text_exact_before_contains_whitespace_insensitive(tree):
    hits = tree.find_by_text("张三")
    assert [h.text for h in hits] == ["张 三", "张三丰"]
    assert [h.text for h in tree.find_by_text("张三", exact=True)] == ["张 三"]
    assert [h.text for h in tree.find_by_text("张三", exact=False)] == ["张三丰"]


def test_text_equal_but_for_an_apps_placeholders_is_an_exact_hit():
    dump = DUMP.replace('text="张三丰"', 'text="382.6K*&amp;*Followers"')
    tree = parse_hierarchy(dump, (1080, 2400))
    assert [h.text for h in tree.find_by_text("382.6K Followers", exact=True)] == ["382.6K*&*Followers"]
    assert tree.find_by_text("382.6 Followers") == [] and tree.find_by_text("*&*", exact=True) == []
    res = HybridLocator().locate("text:382.6K Followers", Image.new("RGB", (1080, 2400)), hierarchy=tree)
    assert res.success and res.element.metadata["match"] == "loose" and res.element.center == (170, 530)


def test_find_by_text_falls_back_to_desc_case_insensitive(tree):
    assert [h.resource_id for h in tree.find_by_text("send")] == ["com.tencent.mm:id/send"]
    assert tree.find_by_text("send", include_desc=False) == []
    assert tree.find_by_desc("SEND")[0].bounds == (900, 2200, 1060, 2300)


def test_offscreen_and_zero_area_nodes_are_not_found(tree):
    assert tree.find_by_text("Hidden") == []
    assert tree.find_by_text("Zero") == []
    assert "Hidden" not in tree.texts()


def test_find_by_id_full_and_short(tree):
    assert len(tree.find_by_id("com.tencent.mm:id/send")) == 1
    assert len(tree.find_by_id("send")) == 1
    assert tree.find_by_id("com.other:id/send") == []


def test_clickable_target_climbs_to_ancestor(tree):
    name = tree.find_by_text("张三", exact=True)[0]
    target = tree.clickable_target(name)
    assert target.resource_id == "com.tencent.mm:id/row" and target.bounds == (0, 300, 1080, 420)
    send = tree.find_by_id("send")[0]
    assert tree.clickable_target(send) is send


def test_find_by_class_and_focused(tree):
    assert tree.find_by_class("EditText")[0].resource_id.endswith("input")
    assert tree.focused_node().resource_id.endswith("input")


@pytest.mark.parametrize("bad", [
    "",
    "ERROR: could not get idle state.",
    DUMP[: len(DUMP) // 2],                       # truncated
    "<?xml version='1.0'?><hierarchy><node bounds='[0,0][1,1]'></hierarchy>",  # corrupt
    "<?xml version='1.0'?><hierarchy><node></hierarchy>",
])
def test_bad_dumps_raise_clear_error(bad):
    with pytest.raises(UITreeError) as info:
        parse_hierarchy(bad)
    assert isinstance(info.value, LocateError)
    assert "dump" in str(info.value)


def test_helpers():
    assert parse_bounds("[0,84][1080,210]") == (0, 84, 1080, 210)
    assert parse_bounds("nonsense") is None
    assert normalize_text(" Send  Now ") == "sendnow"


def test_screen_size_defaults_to_root_bounds():
    assert parse_hierarchy(DUMP).screen_size == (1080, 2600)


@pytest.mark.skipif(not (REAL / "MANIFEST.tsv").is_file(), reason=f"real-dev data not found at {REAL}")
def test_real_dumps_parse_and_find_their_texts():
    rows = list(csv.DictReader((REAL / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))
    found = total = 0
    for row in rows[::10]:
        w, h = map(int, row["image_wxh"].split("x"))
        tree = parse_hierarchy((REAL / row["xml_path"]).read_text(encoding="utf-8"), (w, h))
        assert tree.nodes, row["xml_path"]
        for text in tree.texts()[:5]:
            total += 1
            found += bool(tree.find_by_text(text))
    assert total > 20 and found == total
