"""LLMClient against the real loopback server: replies, every fault, retries, timeouts, secrets."""

from __future__ import annotations

import dataclasses
import json
import logging
import time

import pytest
from PIL import Image

from remote.ai.llm import LLMClient, ask_json
from remote.config import LLMConfig
from remote.errors import ModelError, ModelNotConfigured
from remote.sim.model_requests import Fault
from tests.support.model_fixtures import FAST_RETRY, SECRET_KEY

MSG = [{"role": "system", "content": "purpose: plan\nYou plan."}, {"role": "user", "content": "hi"}]


def test_plain_reply_counts_usage_by_purpose(model_server, llm_client):
    model_server.script("plan", "hello")
    assert llm_client.complete(MSG, purpose="plan") == "hello"
    assert llm_client.usage.calls == 1
    slot = llm_client.usage.by_purpose["plan"]
    assert slot["calls"] == 1 and slot["prompt_tokens"] > 0 and slot["completion_tokens"] >= 1
    req = model_server.requests[0]
    assert req.purpose == "plan" and req.headers["x-remote-purpose"] == "plan"
    assert req.headers["authorization"] == f"Bearer {SECRET_KEY}"   # the key goes only where it belongs


def test_purpose_routes_from_system_prompt_marker(model_server):
    from remote.sim.model_requests import purpose_of
    assert purpose_of({"messages": MSG}, {}) == "plan"
    assert purpose_of({"messages": []}, {}) == "default"


def test_images_are_downscaled_data_urls(model_server, llm_config):
    client = LLMClient(dataclasses.replace(llm_config, max_image_side=640), retry=FAST_RETRY)
    model_server.script("locate", "ok")
    shot = Image.new("RGB", (1080, 2400), "white")
    icon = Image.new("RGBA", (96, 96), (0, 0, 0, 0))
    client.complete(MSG, purpose="locate", images=[icon, shot])
    urls = model_server.requests[0].image_urls
    assert urls[0].startswith("data:image/png;base64,") and urls[1].startswith("data:image/jpeg;base64,")
    assert [e.sent_size for e in client.last_images] == [(96, 96), (288, 640)]
    assert client.last_images[1].scale == pytest.approx(288 / 1080)


def test_a_screen_asked_about_again_is_encoded_once_and_another_image_anew(model_server, llm_config, monkeypatch):
    from remote.ai import images

    encoded: list[tuple[int, int]] = []
    real = images.encode_image
    monkeypatch.setattr(images, "encode_image", lambda image, size: encoded.append(size) or real(image, size))
    client = LLMClient(dataclasses.replace(llm_config, max_image_side=640), retry=FAST_RETRY)
    model_server.script("locate", "ok", "ok", "ok")
    shot, same_pixels = Image.new("RGB", (1080, 2400), "white"), Image.new("RGB", (1080, 2400), "white")
    client.complete(MSG, purpose="locate", images=[shot])
    client.complete(MSG, purpose="locate", images=[shot])
    client.complete(MSG, purpose="locate", images=[same_pixels])
    assert encoded == [(288, 640), (288, 640)]                  # the second ask reused the first encoding
    urls = [r.image_urls[0] for r in model_server.requests]
    assert len(urls) == 3 and urls[0] == urls[1] == urls[2]


def test_text_only_model_is_never_sent_images(model_server, llm_config):
    client = LLMClient(dataclasses.replace(llm_config, supports_vision=False), retry=FAST_RETRY)
    with pytest.raises(ModelError, match="does not accept images"):
        client.complete(MSG, purpose="plan", images=[Image.new("RGB", (10, 10))])
    assert model_server.requests == []
    model_server.script("plan", "ok")
    assert client.complete(MSG, purpose="plan", images=[Image.new("RGB", (10, 10))], drop_images=True) == "ok"
    assert model_server.requests[0].image_urls == []


def test_unconfigured_model_makes_no_call():
    with pytest.raises(ModelNotConfigured, match="no model is configured"):
        LLMClient(LLMConfig.none())
    with pytest.raises(ModelNotConfigured) as err:
        LLMClient(LLMConfig.custom(base_url="http://127.0.0.1:9/v1", model="m"))
    assert "CUSTOM_LLM_API_KEY" in str(err.value)


def test_rate_limit_honours_retry_after_then_succeeds(model_server, llm_client):
    model_server.script("plan", Fault.rate_limit(retry_after=0.15), "fine")
    assert llm_client.complete(MSG, purpose="plan") == "fine"
    assert llm_client.waits == [pytest.approx(0.15)]
    assert len(model_server.requests) == 2


def test_retry_after_is_capped(model_server, llm_client):
    model_server.script("plan", Fault.rate_limit(retry_after=3600), "fine")
    start = time.monotonic()
    assert llm_client.complete(MSG, purpose="plan") == "fine"
    assert llm_client.waits == [pytest.approx(FAST_RETRY.retry_after_cap)]
    assert time.monotonic() - start < 2


def test_server_errors_retry_with_growing_backoff_and_stop_at_the_cap(model_server, llm_client):
    model_server.script("plan", *[Fault.server_error(500)] * 5)
    with pytest.raises(ModelError, match="HTTP 500") as err:
        llm_client.complete(MSG, purpose="plan")
    assert len(model_server.requests) == 3                 # 1 + max_retries(2)
    assert len(llm_client.waits) == 2
    assert all(0 < w <= FAST_RETRY.max_wait for w in llm_client.waits)
    assert "scripted HTTP 500" in err.value.raw
    assert model_server.pending("plan") == 2
    assert llm_client.usage.calls == 0


def test_rate_limit_forever_becomes_model_error(model_server, llm_client):
    model_server.script("plan", *[Fault.rate_limit(retry_after=0.01)] * 3)
    with pytest.raises(ModelError, match="rate limited"):
        llm_client.complete(MSG, purpose="plan")
    assert len(model_server.requests) == 3


def test_auth_error_is_not_retried_and_names_the_variable(model_server, llm_client):
    model_server.script("plan", Fault.auth(401), "never")
    with pytest.raises(ModelNotConfigured, match="CUSTOM_LLM_API_KEY") as err:
        llm_client.complete(MSG, purpose="plan")
    assert len(model_server.requests) == 1
    assert SECRET_KEY not in str(err.value)


def test_other_4xx_is_not_retried(model_server, llm_client):
    model_server.script("plan", Fault.server_error(400))
    with pytest.raises(ModelError, match="HTTP 400"):
        llm_client.complete(MSG, purpose="plan")
    assert len(model_server.requests) == 1


def test_slow_reply_times_out_without_hanging(model_server, llm_config):
    config = dataclasses.replace(llm_config, timeout=0.3, max_retries=1)
    client = LLMClient(config, retry=FAST_RETRY)
    model_server.script("plan", Fault.slow(5, "late"), Fault.slow(5, "late"))
    start = time.monotonic()
    with pytest.raises(ModelError, match="no reply within 0.3 s"):
        client.complete(MSG, purpose="plan")
    assert time.monotonic() - start < 2 * 0.3 + 1.0
    assert len(model_server.requests) == 2


def test_slow_reply_then_fast_reply_recovers(model_server, llm_config):
    client = LLMClient(dataclasses.replace(llm_config, timeout=0.3), retry=FAST_RETRY)
    model_server.script("plan", Fault.slow(5, "late"), "quick")
    assert client.complete(MSG, purpose="plan") == "quick"


def test_dropped_connection_is_retried_then_reported(model_server, llm_client):
    model_server.script("plan", Fault.drop(), "after drop")
    assert llm_client.complete(MSG, purpose="plan") == "after drop"
    model_server.script("plan", Fault.drop(), Fault.drop(), Fault.drop())
    with pytest.raises(ModelError, match="cannot reach"):
        llm_client.complete(MSG, purpose="plan")


def test_non_json_http_body_is_a_model_error(model_server, llm_client):
    model_server.script("plan", Fault.bad_body())
    with pytest.raises(ModelError):
        llm_client.complete(MSG, purpose="plan")


def test_unscripted_purpose_is_a_clear_error(model_server, llm_client):
    with pytest.raises(ModelError) as err:
        llm_client.complete(MSG, purpose="verify")
    assert "no scripted reply for purpose 'verify'" in err.value.raw


def test_empty_reply_is_a_model_error(model_server, llm_client):
    model_server.script("plan", "   ")
    with pytest.raises(ModelError, match="empty reply"):
        llm_client.complete(MSG, purpose="plan")


def test_json_reply_in_prose_and_fences_is_parsed(model_server, llm_client):
    model_server.script("locate", "Here you go:\n```json\n{'found': True, 'xmin': 1,}\n```\nBye")
    assert llm_client.complete_json(MSG, purpose="locate", expect=["found"]) == {"found": True, "xmin": 1}


def test_bad_json_gets_one_corrective_reask(model_server, llm_client):
    model_server.script("locate", "I think it's at the top", '{"found": false, "reason": "absent"}')
    assert llm_client.complete_json(MSG, purpose="locate", expect=["found"])["reason"] == "absent"
    second = model_server.requests[1]
    assert "could not be used" in second.text and second.messages[-2]["role"] == "assistant"


def test_missing_fields_twice_is_a_model_error_with_raw(model_server, llm_client):
    model_server.script("locate", {"xmin": 1}, {"xmin": 2})
    with pytest.raises(ModelError, match="missing keys: found") as err:
        llm_client.complete_json(MSG, purpose="locate", expect=["found"])
    assert json.loads(err.value.raw) == {"xmin": 2} and err.value.purpose == "locate"
    assert llm_client.usage.by_purpose["locate"]["calls"] == 2


def test_ask_json_works_with_any_chat_model():
    class Scripted:
        def __init__(self, replies):
            self.replies, self.usage = list(replies), None

        def complete(self, messages, *, purpose, images=(), timeout=None):
            return self.replies.pop(0)

    def expect(value):
        if value.get("n", 0) < 1:
            raise ValueError("n must be positive")
        return value["n"]

    assert ask_json(Scripted(['{"n": 0}', '{"n": 3}']), MSG, purpose="plan", expect=expect) == 3


def test_api_key_never_in_logs_errors_or_records(model_server, llm_client, caplog):
    caplog.set_level(logging.DEBUG)
    model_server.script("plan", Fault.server_error(503), "ok", Fault.auth(401), Fault.drop(), Fault.drop(),
                        Fault.drop())
    llm_client.complete(MSG, purpose="plan")
    errors = []
    for _ in range(2):
        try:
            llm_client.complete(MSG, purpose="plan")
        except (ModelError, ModelNotConfigured) as exc:
            errors.append(exc)
    assert len(errors) == 2
    texts = [caplog.text, repr(llm_client), repr(llm_client.config), str(llm_client.config.redacted()),
             json.dumps(llm_client.usage.by_purpose)] + [f"{e} {getattr(e, 'raw', '')}" for e in errors]
    for text in texts:
        assert "SECRET123456" not in text
    assert "sk-…456" in repr(llm_client)
