"""VisionAgent in every family's dialect, through the real openai client and the loopback server.

The server answers as each family does (remote/sim/dialects.py, built from docs/models.md's facts); the
locator gets the answer through the family's frame, snapped to the UI tree's element. What
must hold: native replies (box and point) land on the right element, exactly, at three
resolutions and two send sizes; the hostile-but-real variants too; a reply that cannot be
read, or that points outside the image, is never tapped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from remote.ai.families import family_for
from remote.ai.frames import Frame, send_size
from remote.ai.llm import LLMClient
from remote.ai.vision_agent import VisionAgent, list_learned, snap_to_candidate
from remote.config import get_preset_config
from remote.core.locate.assets import AssetsManager
from remote.core.records import UIElement
from remote.sim.dialects import DIALECTS, seen_frame
from remote.sim.model_requests import Fault
from remote.sim.model_server import ModelServer
from tests.support import dialect_cases as dc

FAMILIES = sorted(dc.MODELS)


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as s:
        yield s


@pytest.fixture
def dialect(server: ModelServer) -> Iterator[ModelServer]:
    """The module's server, emptied, answering in the family each test sets."""
    server.requests.clear()
    yield server
    with server._lock:
        server._queues.clear()
    server.family = None


def _ask(server: ModelServer, family: str, size: tuple[int, int], reply: dict, side: int = 1280, **kw):
    server.family, server.screen = family, size
    server.script("locate", reply)
    return dc.locate(server.url, family, size, side, **kw)


@pytest.mark.parametrize("kind", ["box", "point"])
@pytest.mark.parametrize("side", dc.SEND_SIDES)
@pytest.mark.parametrize("size", dc.RESOLUTIONS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("family", FAMILIES)
def test_native_replies_land_on_the_right_element(dialect, family, size, side, kind):
    truth = dc.layout(size)[dc.TARGET]
    result = _ask(dialect, family, size, {kind: list(truth) if kind == "box" else dc.centre(truth)}, side)
    assert result.success, result.error
    assert result.element.bbox == truth                      # the element's own box: exact
    assert len(dialect.requests) == 1                        # read at the first answer, no re-ask
    sent = dialect.requests[0].image_sizes()[-1]
    assert sent == send_size(size, side, family_for(dc.MODELS[family]).frame)
    # the family's own resize (the server's, written independently) leaves the image as sent
    assert seen_frame(DIALECTS[family], sent, high_resolution=False) == sent
    meta = result.element.metadata
    if "model_box" in meta:   # the raw mapping, before snapping: within half a unit of the family (+1 px)
        tolerance = dc.quantum(family, size, sent) / 2 + 1
        got = meta["model_box"]
        point = got[2] - got[0] == 1 and got[3] - got[1] == 1     # a family that answers points (UI-TARS, AutoGLM)
        want = [*dc.centre(truth), *dc.centre(truth)] if point else list(truth)
        got = [*got[:2], *got[:2]] if point else got
        assert all(abs(a - b) <= tolerance for a, b in zip(got, want, strict=True)), (got, want, tolerance)
    else:
        assert meta["how"].startswith("set-of-mark") and not family_for(dc.MODELS[family]).trusted


@pytest.mark.parametrize("variant", ["thinking", "corrected", "strings", "fence", "chinese"])
@pytest.mark.parametrize("family", FAMILIES)
def test_hostile_but_real_replies_are_read_right(dialect, family, variant):
    size = (1080, 2400)
    truth = dc.layout(size)[dc.TARGET]
    result = _ask(dialect, family, size, {"box": list(truth), "variant": variant, "decoy": [20, 20, 300, 200]})
    assert result.success, (result.error, dialect.requests[-1].answer)
    assert result.element.bbox == truth and len(dialect.requests) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_an_unreadable_reply_is_asked_again_in_the_familys_convention_then_never_tapped(dialect, family):
    dialect.family = family
    dialect.script("locate", "我看到这个按钮了，就在屏幕中间偏下的位置。", "就是那个蓝色的。")
    result = dc.locate(dialect.url, family, (1080, 2400), 1280)
    assert not result.success and result.element is None
    assert len(dialect.requests) == 2
    fam = family_for(dc.MODELS[family])
    reask = dialect.requests[1].text
    sent = send_size((1080, 2400), 1280, fam.frame)
    if "set-of-mark" in dialect.requests[0].text or "numbered" in dialect.requests[0].text:
        assert '"mark": N' in reask
    else:
        assert fam.convention.words(Frame((1080, 2400), sent).seen) in reask


@pytest.mark.parametrize("family", FAMILIES)
def test_a_reply_outside_the_image_is_never_tapped(dialect, family):
    size = (1080, 2400)
    outside = [1300, 1200, 1500, 1300]          # right of a 1080-wide screen
    dialect.family, dialect.screen = family, size
    dialect.script("locate", {"box": outside}, {"box": outside})
    result = dc.locate(dialect.url, family, size, 1280)
    assert not result.success and "outside the image" in result.error
    assert len(dialect.requests) == 2 and "outside the image" in dialect.requests[1].text


def test_a_not_found_reply_fails_at_once_with_the_models_reason(dialect):
    dialect.script("locate", '<think>看看</think><answer>finish(message="没有找到设置按钮")</answer>')
    result = dc.locate(dialect.url, "autoglm-phone", (1080, 2400), 1280)
    assert not result.success and "没有找到设置按钮" in result.error and len(dialect.requests) == 1
    dialect.script("locate", "```json\n[]\n```")
    result = dc.locate(dialect.url, "qwen2.5-vl", (1080, 2400), 1280)
    assert not result.success and len(dialect.requests) == 3   # an empty list is no answer: asked once more


def test_an_answer_that_disagrees_with_itself_is_settled_by_set_of_mark(dialect):
    size = (1080, 2400)
    boxes = dc.layout(size)
    dialect.family, dialect.screen = "qwen2.5-vl", size
    sent = send_size(size, 1280, family_for("qwen2.5-vl").frame)
    two = [[round(v * sent[i % 2] / size[i % 2]) for i, v in enumerate(boxes[label])] for label in ("发现", "设置")]
    dialect.script("locate", "```json\n" + str([{"bbox_2d": b, "label": "按钮"} for b in two]).replace("'", '"')
                   + "\n```", {"found": True, "mark": 2})
    result = dc.locate(dialect.url, "qwen2.5-vl", size, 1280)
    assert result.success and result.element.bbox == boxes["设置"]
    assert result.element.metadata["how"] == "set-of-mark (answer disagreed)" and len(dialect.requests) == 2
    assert "1. 发现" in dialect.requests[1].text and "2. 设置" in dialect.requests[1].text


def test_a_box_and_a_point_that_disagree_are_not_tapped_without_a_second_look(dialect):
    size = (1080, 2400)
    boxes = dc.layout(size)
    box, point = boxes["设置"], dc.centre(boxes["我"])
    per_mille = [round(v / 1080 * 1000) if i % 2 == 0 else round(v / 2400 * 1000) for i, v in enumerate(box)]
    dot = [round(point[0] / 1080 * 1000), round(point[1] / 2400 * 1000)]
    dialect.script("locate", json.dumps({"bbox_2d": per_mille, "point_2d": dot}), {"found": False, "reason": "看不清"})
    result = dc.locate(dialect.url, "qwen3-vl", size, 1280)
    assert not result.success and len(dialect.requests) == 2 and "看不清" in result.error


def test_an_untrusted_family_without_elements_needs_a_confirming_second_look(dialect):
    size = (1080, 2400)
    truth = dc.layout(size)[dc.TARGET]
    frame = Frame(size, send_size(size, 1280, family_for("gpt-4o-mini").frame))
    first = [round(v * frame.seen[i % 2] / size[i % 2]) for i, v in enumerate(truth)]
    dialect.script("locate", {"found": True, "bbox": first})
    # the zoom crop is 3x the box around it; the second answer is in the crop's own pixels
    dialect.script("locate", '{"found": true, "bbox": [10, 10, 40, 40]}')   # far from the first: disagrees
    result = dc.locate(dialect.url, "gpt", size, 1280, tree=False)
    assert not result.success and "not confirmed" in result.error and len(dialect.requests) == 2
    dialect.requests.clear()
    crop = dialect  # same server
    crop.script("locate", {"found": True, "bbox": first})
    from remote.ai import images as imaging
    region = imaging.zoom_region(truth, size)
    crop_size = (region[2] - region[0], region[3] - region[1])
    seen = send_size(crop_size, 1280, family_for("gpt-4o-mini").frame)
    inner = [truth[0] - region[0], truth[1] - region[1], truth[2] - region[0], truth[3] - region[1]]
    crop.script("locate", {"found": True, "bbox": [round(v * seen[i % 2] / crop_size[i % 2])
                                                   for i, v in enumerate(inner)]})
    result = dc.locate(dialect.url, "gpt", size, 1280, tree=False)
    assert result.success and result.element.metadata["how"] == "coordinates (confirmed by zoom)"
    assert all(abs(a - b) <= 2 for a, b in zip(result.element.bbox, truth, strict=True))


def test_a_trusted_family_on_a_screen_without_a_tree_taps_its_own_box(dialect):
    size = (720, 1600)
    truth = dc.layout(size)[dc.TARGET]
    result = _ask(dialect, "ui-tars-1.5", size, {"point": dc.centre(truth)}, tree=False, zoom=False)
    assert result.success and result.element.metadata["how"] == "coordinates"
    x, y = result.element.center
    assert truth[0] <= x < truth[2] and truth[1] <= y < truth[3]


def test_the_high_resolution_flag_follows_the_host_not_words_in_the_url(dialect):
    """A gateway whose path or query names DashScope is not DashScope: the flag is never sent to it (the positive
    case, a DashScope host, is in test_ai_frames: loopback cannot carry that host name)."""
    size = (1080, 2400)
    truth = dc.layout(size)[dc.TARGET]
    dialect.family, dialect.screen = "qwen2.5-vl", size
    for url in (dialect.url.replace("/v1", "/dashscope.aliyuncs.com/compatible-mode/v1"), dialect.url):
        dialect.script("locate", {"box": list(truth)})
        cfg = dc.config(url, "qwen2.5-vl", 1280)
        result = VisionAgent(cfg, client=LLMClient(cfg, retry=dc.FAST)).find_element(dc.image(size), "设置")
        assert result.success
        assert "vl_high_resolution_images" not in dialect.requests[-1].body


def test_set_of_mark_among_competing_candidates(model_server, llm_client):
    candidates = [UIElement("text", "张三", (40, 300, 1040, 460)), UIElement("text", "李四", (40, 460, 1040, 620)),
                  UIElement("button", "发送", (900, 2250, 1060, 2380))]
    model_server.script("locate", {"found": True, "mark": 9}, {"found": True, "mark": "2"})
    result = VisionAgent(llm_client.config, client=llm_client).find_element(
        Image.new("RGB", (1080, 2400), "white"), "联系人李四", candidates=candidates)
    assert result.success and result.element.bbox == (40, 460, 1040, 620)
    assert result.element.metadata["how"] == "set-of-mark" and result.element.metadata["mark"] == 2
    assert "2. 李四" in model_server.requests[0].text and "not one of the numbers 1-3" in model_server.requests[1].text


def test_snap_prefers_overlap_then_containment():
    boxes = [(0, 0, 500, 500), (100, 100, 200, 200)]
    assert snap_to_candidate((110, 110, 190, 190), boxes) == 1
    assert snap_to_candidate((900, 900, 950, 950), boxes) is None


def test_failures_of_the_call_are_readable(model_server, llm_client):
    model_server.script("locate", *[Fault.server_error(500)] * 3)
    result = VisionAgent(llm_client.config, client=llm_client).find_element(Image.new("RGB", (1080, 2400)), "x")
    assert not result.success and "HTTP 500" in result.error and result.method_used == "vision"


def test_learned_variant_is_saved_and_listed(tmp_path: Path):
    assets = AssetsManager(tmp_path)
    agent = VisionAgent(get_preset_config("openai", api_key="k"), client=None, assets=assets)
    shot = Image.new("RGB", (1080, 2400), "blue")
    path = agent.learn("send_button", shot, (540, 1200, 648, 1440))
    assert path is not None and Image.open(path).size == (108, 240)
    listed = list_learned(assets)
    assert listed[0]["name"] == "send_button" and listed[0]["screen_size"] == [1080, 2400]
    assert list_learned(None) == []


def test_a_family_that_only_speaks_its_own_shapes_chooses_among_candidates_by_its_box(dialect):
    size = (1080, 2400)
    boxes = dc.layout(size)
    candidates = [UIElement("text", label, boxes[label]) for label in ("发现", "设置", "发送")]
    dialect.family, dialect.screen = "ui-tars-1.5", size
    dialect.script("locate", {"point": dc.centre(boxes["设置"])})
    llm = dc.client(dialect.url, "ui-tars-1.5", 1280)
    result = VisionAgent(llm.config, client=llm).find_element(dc.image(size), "设置", candidates=candidates)
    assert result.success and result.element.bbox == boxes["设置"]
    assert result.element.metadata["how"] == "coordinates (snapped to a candidate)"
    assert "numbered" not in dialect.requests[0].text and "click(start_box=" in dialect.requests[0].text


def test_on_a_screen_without_a_tree_the_answer_snaps_to_an_ocr_line(dialect):
    from PIL import ImageDraw, ImageFont

    from remote.core.locate import ocr
    from remote.core.locate.hybrid_locator import HybridLocator
    from remote.core.locate.screen import Screen

    if not ocr.available():
        pytest.skip(f"OCR cannot run here: {ocr.unavailable_reason()}")
    size = (1080, 2400)
    shot = Image.new("RGB", size, "white")
    ImageDraw.Draw(shot).text((300, 1200), "Settings", fill="black", font=ImageFont.load_default(size=64))
    lines = Screen(shot).text_boxes()
    line = next(b for b in lines if "Settings" in b.text)
    dialect.family, dialect.screen = "ui-tars-1.5", size
    dialect.script("locate", {"point": [line.bbox[0] + 20, line.bbox[1] + 10]})   # on the word, off its centre
    llm = dc.client(dialect.url, "ui-tars-1.5", 1280)
    result = HybridLocator(vision=VisionAgent(llm.config, client=llm)).locate("dynamic:Settings", Screen(shot))
    assert result.success and result.element.bbox == line.bbox
    assert result.element.metadata["snapped_to"] == line.text
