"""VisionAgent: coordinate contracts per preset, set-of-mark, zoom, failures, learned variants."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image

from remote.ai.vision_agent import VisionAgent, list_learned, snap_to_candidate
from remote.config import PRESETS, get_preset_config
from remote.core import coords
from remote.core.locate.assets import AssetsManager
from remote.core.records import UIElement
from remote.sim.model_server import Fault

SCREEN = (1080, 2400)
TRUE_BOX = (540, 1200, 648, 1440)     # device pixels


class Scripted:
    """A scripted ChatModel that records what it was asked."""

    def __init__(self, *replies):
        self.replies, self.calls, self.usage = list(replies), [], None

    def complete(self, messages, *, purpose, images=(), timeout=None):
        self.calls.append({"messages": messages, "purpose": purpose, "images": list(images)})
        return self.replies.pop(0)


def contract_reply(preset: str, max_side: int) -> str:
    """TRUE_BOX written the way this preset's model writes boxes, for an image sent at max_side."""
    p = PRESETS[preset]
    sw, sh = coords.downscale_size(SCREEN, max_side)
    fx = [TRUE_BOX[0] / SCREEN[0], TRUE_BOX[1] / SCREEN[1], TRUE_BOX[2] / SCREEN[0], TRUE_BOX[3] / SCREEN[1]]
    if p.coord_mode in ("pixel", "auto"):
        values = [fx[0] * sw, fx[1] * sh, fx[2] * sw, fx[3] * sh]
    else:
        full = {"norm1000": 1000, "norm999": 999, "fraction": 1}[p.coord_mode]
        values = [v * full for v in fx]
    if p.box_order == "yxyx":
        values = [values[1], values[0], values[3], values[2]]
    return json.dumps({"found": True, "bbox": [round(v, 3) for v in values], "confidence": 0.9})


@pytest.mark.parametrize("max_side", [2400, 1280, 640])
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_contract_round_trips_to_device_pixels(preset, max_side):
    config = get_preset_config(preset, api_key="sk-x", max_image_side=max_side)
    model = Scripted(contract_reply(preset, max_side))
    result = VisionAgent(config, client=model, zoom=False).find_element(Image.new("RGB", SCREEN), "发送按钮")
    if not PRESETS[preset].supports_vision:
        assert not result.success and "cannot see images" in result.error and model.calls == []
        return
    assert result.success, result.error
    assert all(abs(a - b) <= 3 for a, b in zip(result.element.bbox, TRUE_BOX, strict=True)), result.element.bbox
    assert result.method_used == "vision"


def test_set_of_mark_turns_an_imprecise_reply_into_the_exact_box(model_server, llm_client):
    candidates = [UIElement("text", "张三", (40, 300, 1040, 460)), UIElement("text", "李四", (40, 460, 1040, 620)),
                  UIElement("button", "发送", (900, 2250, 1060, 2380))]
    # the model points roughly at 李四's row, not at any exact box
    model_server.script("locate", {"found": True, "bbox": [60, 195, 900, 250], "confidence": 0.7})
    result = VisionAgent(llm_client.config, client=llm_client).find_element(
        Image.new("RGB", SCREEN, "white"), "联系人李四", candidates=candidates)
    assert result.success and result.element.bbox == (40, 460, 1040, 620)
    assert result.element.metadata["how"] == "set-of-mark (snapped)" and result.element.metadata["mark"] == 2
    request = model_server.requests[0]
    assert "2. 李四" in request.text and len(request.image_urls) == 1


def test_set_of_mark_number_reply(model_server, llm_client):
    boxes = [(0, 0, 100, 100), (200, 200, 300, 300)]
    model_server.script("locate", {"found": True, "mark": 9}, {"found": True, "mark": "2"})
    result = VisionAgent(llm_client.config, client=llm_client).find_element_by_image(
        Image.new("RGB", (40, 40), "red"), Image.new("RGB", SCREEN), candidates=boxes)
    assert result.element.bbox == (200, 200, 300, 300) and result.element.metadata["how"] == "set-of-mark"
    assert "not one of the numbers 1-2" in model_server.requests[1].text
    assert len(model_server.requests[0].image_urls) == 2


def test_snap_prefers_overlap_then_containment():
    boxes = [(0, 0, 500, 500), (100, 100, 200, 200)]
    assert snap_to_candidate((110, 110, 190, 190), boxes) == 1
    assert snap_to_candidate((900, 900, 950, 950), boxes) is None


def test_zoom_refines_a_small_target(model_server, llm_client):
    # first estimate: a 40 px box around (540, 1200); the zoom answer is relative to the crop
    model_server.script("locate", {"found": True, "bbox": [490, 495, 510, 505]},
                        {"found": True, "bbox": [500, 500, 600, 600]})
    result = VisionAgent(llm_client.config, client=llm_client).find_element(Image.new("RGB", SCREEN), "小图标")
    region = (380, 1040, 700, 1360)   # zoom_region of the first estimate (320 px around its center)
    assert result.element.metadata["how"] == "coordinates+zoom"
    assert result.element.bbox == (region[0] + 160, region[1] + 160, region[0] + 192, region[1] + 192)
    assert len(model_server.requests) == 2 and "enlarged" in model_server.requests[1].text


@pytest.mark.parametrize("replies, error", [
    ([{"found": False, "reason": "聊天列表为空", "suggestion": "向下滑动"}], "not found: 聊天列表为空; suggestion: 向下滑动"),
    (["I can see it!", "really"], "raw reply: 'really'"),
    ([{"found": True, "bbox": [1200, 1300, 1500, 1600]}] * 2, "not a valid box"),
    ([{"found": True}, {"found": True, "bbox": [1, 2]}], "not a valid box"),
    ([{"box": [1, 2, 3, 4]}] * 2, "boolean 'found'"),
    ([Fault.server_error(500)] * 3, "HTTP 500"),
])
def test_bad_replies_become_readable_failures(model_server, llm_client, replies, error):
    model_server.script("locate", *replies)
    result = VisionAgent(llm_client.config, client=llm_client).find_element(Image.new("RGB", SCREEN), "x")
    assert not result.success and error in result.error and result.method_used == "vision"


def test_downscaled_image_is_what_the_model_sees(model_server, llm_config):
    from remote.ai.llm import LLMClient
    from tests.support.model_fixtures import FAST_RETRY
    config = dataclasses.replace(llm_config, coord_mode="pixel", max_image_side=640)
    client = LLMClient(config, retry=FAST_RETRY)
    model_server.script("locate", {"found": True, "bbox": [144, 320, 172.8, 384]})
    result = VisionAgent(config, client=client, zoom=False).find_element(Image.new("RGB", SCREEN), "x")
    assert client.last_images[0].sent_size == (288, 640)
    assert result.element.bbox == TRUE_BOX


def test_learned_variant_is_saved_and_listed(tmp_path: Path):
    assets = AssetsManager(tmp_path)
    agent = VisionAgent(get_preset_config("openai", api_key="k"), client=Scripted(), assets=assets)
    shot = Image.new("RGB", SCREEN, "blue")
    path = agent.learn("send_button", shot, TRUE_BOX)
    assert path is not None and Image.open(path).size == (108, 240)
    listed = list_learned(assets)
    assert listed[0]["name"] == "send_button" and listed[0]["screen_size"] == [1080, 2400]
    assert list_learned(None) == []


@pytest.mark.parametrize("values, mode, order, expected", [
    ([500, 500, 600, 600], "norm1000", "xyxy", (540, 1200, 648, 1440)),
    ([499.5, 499.5, 599.4, 599.4], "norm999", "xyxy", (540, 1200, 648, 1440)),
    ([0.5, 0.5, 0.6, 0.6], "fraction", "xyxy", (540, 1200, 648, 1440)),
    ([640, 288, 768, 345.6], "pixel", "yxyx", (540, 1200, 648, 1440)),
    ([0.5, 0.5, 0.6, 0.6], "auto", "xyxy", (540, 1200, 648, 1440)),
    ([600, 600, 500, 500], "norm1000", "xyxy", (540, 1200, 648, 1440)),   # corners swapped
    ([900, 500, 1040, 600], "norm1000", "xyxy", (972, 1200, 1080, 1440)),  # clipped within the slack
    ([500, 500, 500, 500], "norm1000", "xyxy", (540, 1200, 541, 1201)),   # a point is 1 px
    ([1200, 1300, 1500, 1600], "norm1000", "xyxy", None),                   # out of range
    ([1, 2, 3], "norm1000", "xyxy", None),
    (["a", 2, 3, 4], "norm1000", "xyxy", None),
    ([float("nan"), 2, 3, 4], "norm1000", "xyxy", None),
])
def test_model_box_to_pixels_table(values, mode, order, expected):
    assert coords.model_box_to_pixels(values, (576, 1280), SCREEN, mode, order) == expected
