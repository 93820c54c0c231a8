"""Blocker rules and change detection (pure, table-style) and the Verifier (free checks, then the server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from remote.ai.verifier import Verifier
from remote.core.plan import blockers as rules
from remote.core.records import BlockerType, StepOutcome, SuggestionAction
from remote.sim.model_requests import Fault
from tests.support.data import data_path

FIXTURES = Path(__file__).parent / "fixtures" / "ai"
REAL_DEV = data_path("real-dev")
SCREEN = (1080, 2400)


def xml(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("fixture, kind, button, bbox", [
    ("permission_dialog.xml", BlockerType.PERMISSION, "text:允许", (120, 1200, 960, 1330)),
    ("ad_popup.xml", BlockerType.AD, "text:关闭", (860, 610, 930, 680)),
    ("splash_skip.xml", BlockerType.AD, "text:跳过 3", (880, 120, 1040, 200)),
    ("update_dialog.xml", BlockerType.DIALOG, "text:以后再说", (120, 1380, 520, 1470)),
])
def test_offline_blockers_on_synthetic_dumps(fixture, kind, button, bbox):
    blocker = rules.detect_blocker_in_tree(xml(fixture), SCREEN)
    assert blocker is not None and blocker.type is kind
    assert blocker.dismiss_suggestion.action == "tap"
    assert blocker.dismiss_suggestion.target_ref == button and blocker.dismiss_suggestion.bbox == bbox


def test_ordinary_page_with_a_cancel_button_is_not_a_blocker():
    assert rules.detect_blocker_in_tree(xml("chat_list.xml"), SCREEN) is None


def test_keyboard_from_the_device_answer():
    blocker = rules.detect_blocker_in_tree(xml("chat_list.xml"), SCREEN, ime_shown=True)
    assert blocker.type is BlockerType.KEYBOARD and blocker.dismiss_suggestion.keycode == 4


def _real(path: str) -> str:
    file = REAL_DEV / path
    if not file.is_file():
        pytest.skip(f"real-device dumps not available at {REAL_DEV}")
    return file.read_text(encoding="utf-8")


def test_real_dialog_dump_is_a_dialog_with_its_cancel_button():
    dump = _real("SageSELab_GuiEvo/Evaluation-Dataset/com.ensoft.imgurviewer/2.1.8-vs-2.1.9/old_xml.xml")
    blocker = rules.detect_blocker_in_tree(dump, (1080, 1920))
    assert blocker is not None and blocker.type is BlockerType.DIALOG
    assert blocker.dismiss_suggestion.bbox == (776, 1498, 978, 1624)
    assert "Grid View Image Scale Type" in blocker.description


def test_real_login_page_with_a_close_link_is_not_an_ad():
    dump = _real("Kqramazov_fdroid_utg/output/weibo_bfs_greedy/states/state_2023-10-24_181553.uia.xml")
    assert rules.detect_blocker_in_tree(dump, (1080, 2340)) is None


def test_real_dumps_rarely_flag_blockers_and_never_crash():
    if not REAL_DEV.is_dir():
        pytest.skip(f"real-device dumps not available at {REAL_DEV}")
    flagged, total = 0, 0
    for path in sorted(REAL_DEV.rglob("*.xml")):
        total += 1
        blocker = rules.detect_blocker_in_tree(path.read_text(encoding="utf-8", errors="replace"))
        if blocker is not None:
            flagged += 1
            hint = blocker.dismiss_suggestion
            # a loading screen is waited out (nothing to tap); every other blocker says where to tap
            assert hint is not None and (hint.bbox or hint.action == "wait")
    assert total > 100 and flagged < total * 0.2


def _screen(colour="white", box=None):
    img = Image.new("RGB", SCREEN, colour)
    if box:
        ImageDraw.Draw(img).rectangle(box, fill="black")
    return img


def test_pixel_change_ignores_the_status_bar():
    a = _screen()
    b = _screen(box=(0, 0, 540, 30))          # only the status bar changed (clock)
    assert rules.pixel_change(a, b) == 0.0
    assert 0.12 < rules.pixel_change(a, _screen(box=(0, 300, 540, 900))) < 0.14   # 540x600 of 1080x2304
    assert rules.pixel_change(a, Image.new("RGB", (1200, 540))) == 1.0


@pytest.mark.parametrize("expected, result", [
    ("text:张三", True), ("text:李四", False), ("id:search", True), ("desc:搜索", True),
    ("打开与「张三」的聊天", True), ("打开与「李四」的聊天", False), ("张三", True), ("消息出现在聊天记录中", None),
])
def test_expectation_in_tree(expected, result):
    tree = rules.as_tree(xml("chat_list.xml"))
    assert rules.expectation_in_tree(tree, expected) is result


def test_classify_catches_nothing_happened_without_a_model():
    verdict = Verifier().classify(_screen(), _screen())
    assert verdict.outcome is StepOutcome.NO_CHANGE and verdict.suggestion is SuggestionAction.RETRY
    assert not verdict.verified and verdict.method == "pixel"


def test_classify_succeeded_wrong_page_and_blocker():
    v = Verifier()
    before, after = _screen(), _screen(box=(0, 300, 540, 900))
    ok = v.classify(before, after, hierarchy_after=xml("chat_list.xml"), expected="text:张三")
    assert ok.outcome is StepOutcome.SUCCEEDED and ok.suggestion is SuggestionAction.CONTINUE
    wrong = v.classify(before, after, hierarchy_after=xml("chat_list.xml"), expected="text:设置")
    assert wrong.outcome is StepOutcome.WRONG_PAGE and wrong.suggestion is SuggestionAction.REPLAN
    pkg = v.classify(before, after, hierarchy_after=xml("chat_list.xml"), expected_package="com.android.settings")
    assert pkg.outcome is StepOutcome.WRONG_PAGE
    blocked = v.classify(before, after, hierarchy_after=xml("ad_popup.xml"))
    assert blocked.suggestion is SuggestionAction.DISMISS and blocked.blocker.type is BlockerType.AD
    unsure = v.classify(before, after)
    assert unsure.outcome is StepOutcome.UNKNOWN and unsure.suggestion is SuggestionAction.CONTINUE


def test_quick_check_uses_pixels_first(model_server, llm_client):
    v = Verifier(llm_client.config, client=llm_client)
    assert v.quick_check(_screen(), _screen(), "a chat opens")[0] is False
    assert v.quick_check(_screen(), _screen(box=(0, 300, 540, 900)), "a chat opens")[0] is True
    assert model_server.requests == []
    # ambiguous: a small change -> the model decides
    model_server.script("verify", {"changed": True, "reason": "the checkbox is ticked"})
    ok, why = v.quick_check(_screen(), _screen(box=(100, 600, 300, 800)), "the checkbox is ticked")
    assert ok and why == "the checkbox is ticked" and len(model_server.requests) == 1
    assert len(model_server.requests[0].image_urls) == 2


def test_verify_with_description_tree_first_then_model(model_server, llm_client):
    v = Verifier(llm_client.config, client=llm_client)
    shot = _screen()
    assert v.verify_with_description(shot, "text:张三", hierarchy=xml("chat_list.xml")).method == "tree"
    blocked = v.verify_with_description(shot, "text:张三", hierarchy=xml("permission_dialog.xml"))
    assert blocked.suggestion is SuggestionAction.DISMISS and blocked.blocker.type is BlockerType.PERMISSION
    assert model_server.requests == []
    model_server.script("verify", {"verified": False, "confidence": 0.8, "current_state": "settings page",
                                   "screen_changed": True, "suggestion": "replan",
                                   "blocker": None})
    verdict = v.verify_with_description(shot, "消息出现在聊天记录中", _screen("grey"), hierarchy=xml("chat_list.xml"))
    assert verdict.method == "model" and verdict.suggestion is SuggestionAction.REPLAN
    assert verdict.outcome is StepOutcome.WRONG_PAGE and verdict.current_state == "settings page"
    request = model_server.requests[0]
    assert "消息出现在聊天记录中" in request.text and "张三" in request.text and len(request.image_urls) == 2


def test_bad_model_verdict_becomes_a_recorded_failure(model_server, llm_client):
    model_server.script("verify", "looks fine to me", {"verified": "yes"})
    verdict = Verifier(llm_client.config, client=llm_client).verify_with_description(_screen(), "消息已发送")
    assert verdict.verified is False and verdict.suggestion is SuggestionAction.RETRY
    assert "unusable" in verdict.suggestion_detail and "yes" in verdict.current_state


def test_verify_without_model_says_so():
    verdict = Verifier().verify_with_description(_screen(), "消息已发送")
    assert verdict.suggestion is SuggestionAction.CONTINUE and "no model" in verdict.suggestion_detail


def test_verify_with_reference_template_first_then_model(model_server, llm_client):
    scores = iter([0.95, 0.2])
    v = Verifier(llm_client.config, client=llm_client, matcher=lambda shot, ref: next(scores))
    ref = Image.new("RGB", (40, 40), "green")
    assert v.verify_with_reference(ref, _screen()).method == "reference"
    model_server.script("verify", {"verified": True, "confidence": 0.7, "suggestion": "continue"})
    verdict = v.verify_with_reference(ref, _screen(), "聊天列表已显示")
    assert verdict.verified and verdict.method == "model"
    assert "聊天列表已显示" in model_server.requests[0].text


def test_verify_with_reference_real_matcher_finds_the_reference():
    shot = _screen()
    ImageDraw.Draw(shot).rectangle((200, 400, 300, 500), fill=(30, 160, 60))
    ImageDraw.Draw(shot).ellipse((220, 420, 280, 480), fill=(250, 250, 0))
    ref = shot.crop((190, 390, 310, 510))
    assert Verifier().verify_with_reference(ref, shot).verified


def test_detect_blocker_offline_first_then_model(model_server, llm_client):
    v = Verifier(llm_client.config, client=llm_client)
    assert v.detect_blocker(_screen(), xml("ad_popup.xml")).type is BlockerType.AD
    assert model_server.requests == []
    model_server.script("verify", {"blocked": True, "type": "loading", "description": "spinner",
                                   "dismiss": {"action": "wait"}})
    blocker = v.detect_blocker(_screen(), xml("chat_list.xml"))
    assert blocker.type is BlockerType.LOADING and blocker.dismiss_suggestion.action == "wait"
    assert v.detect_blocker(_screen(), xml("chat_list.xml"), use_model=False) is None


def test_model_failures_in_blocker_check_are_not_raised(model_server, llm_client):
    model_server.script("verify", *[Fault.server_error(502)] * 3)
    assert Verifier(llm_client.config, client=llm_client).detect_blocker(_screen(), None) is None


def test_simulated_phone_permission_dialog_and_ad_are_found_offline():
    phone_mod = pytest.importorskip("remote.sim.phone", reason="the simulated phone is not available")
    phone = phone_mod.SimPhone(wechat_permission_dialog=True, ad_popup=True)
    phone.launch("com.tencent.mm")
    seen = []
    for _ in range(3):
        blocker = rules.detect_blocker_in_tree(phone.dump_xml(), phone.size)
        if blocker is None:
            break
        seen.append(blocker.type)
        phone.tap(*rules.bbox_center(blocker.dismiss_suggestion.bbox))
    assert seen == [BlockerType.PERMISSION, BlockerType.AD]
    assert rules.detect_blocker_in_tree(phone.dump_xml(), phone.size) is None


def test_loading_screens_are_a_wait_not_a_tap():
    spinner = ('<?xml version="1.0"?><hierarchy rotation="0"><node index="0" text="" resource-id="" '
               'class="android.widget.FrameLayout" package="a" content-desc="" checkable="false" checked="false" '
               'clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" '
               'long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">'
               '<node index="0" text="" resource-id="android:id/progress" class="android.widget.ProgressBar" '
               'package="a" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" '
               'focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" '
               'selected="false" bounds="[480,1140][600,1260]" /><node index="1" text="加载中" resource-id="" '
               'class="android.widget.TextView" package="a" content-desc="" checkable="false" checked="false" '
               'clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" '
               'long-clickable="false" password="false" selected="false" bounds="[400,1280][680,1340]" />'
               '</node></hierarchy>')
    blocker = rules.detect_blocker_in_tree(spinner, (1080, 2400))
    assert blocker is not None and blocker.type.value == "loading"
    assert blocker.dismiss_suggestion.action == "wait" and blocker.dismiss_suggestion.bbox is None
