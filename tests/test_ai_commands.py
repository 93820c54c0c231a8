"""`python -m remote plan` / `verify` against the loopback server, and without a model."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from remote.cli import main
from tests.support.model_fixtures import SECRET_KEY

PLAN = {"analysis": {}, "steps": [{"step": 1, "action": "tap", "target_ref": "text:微信"}],
        "success_criteria": "微信已打开"}


@pytest.fixture
def env(monkeypatch, tmp_path, model_server):
    monkeypatch.chdir(tmp_path)
    for var in ("LLM_PROVIDER", "LLM_MODEL", "LLM_SUPPORTS_VISION", "LLM_COORD_MODE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUSTOM_LLM_BASE_URL", model_server.url)
    monkeypatch.setenv("CUSTOM_LLM_MODEL", "test-vl")
    monkeypatch.setenv("CUSTOM_LLM_API_KEY", SECRET_KEY)
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    shot = tmp_path / "shot.png"
    Image.new("RGB", (540, 1200), "white").save(shot)
    return shot


def test_plan_command_prints_the_plan(env, model_server, capsys):
    model_server.script("plan", PLAN)
    assert main(["plan", str(env), "打开微信", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["plan"]["steps"][0]["target_ref"] == "text:微信" and out["usage"]["plan"]["calls"] == 1


def test_plan_command_bad_reply_is_a_message_not_a_traceback(env, model_server, capsys):
    model_server.script("plan", "no idea", "still none")
    assert main(["plan", str(env), "打开微信"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: plan: the model's reply stayed unusable") and "Traceback" not in err
    assert SECRET_KEY not in err


def test_verify_command(env, model_server, capsys, tmp_path):
    dump = tmp_path / "dump.xml"
    dump.write_text('<hierarchy><node text="张三" bounds="[0,0][540,100]"/></hierarchy>', encoding="utf-8")
    assert main(["verify", str(env), "text:张三", "--xml", str(dump)]) == 0
    assert "verified (tree" in capsys.readouterr().out
    model_server.script("verify", {"verified": False, "confidence": 0.9, "current_state": "桌面"})
    assert main(["verify", str(env), "聊天窗口已打开"]) == 1
    assert "screen: 桌面" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["plan", "verify"])
def test_no_model_configured_exits_2_with_what_to_set(command, monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    for var in ("LLM_PROVIDER", "CUSTOM_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    Image.new("RGB", (200, 400), "white").save(tmp_path / "blank.png")
    # verify answers from the tree or OCR when it can; a blank screen and a free sentence need a model
    assert main([command, "blank.png", "屏幕上有一只猫"]) == 2
    err = capsys.readouterr().err
    assert "no model is configured" in err and "LLM_PROVIDER" in err


def test_verify_answers_from_the_tree_without_a_model(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    for var in ("LLM_PROVIDER", "CUSTOM_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    Image.new("RGB", (540, 400), "white").save(tmp_path / "s.png")
    (tmp_path / "s.xml").write_text('<hierarchy><node text="张三" bounds="[0,0][540,100]"/></hierarchy>',
                                    encoding="utf-8")
    assert main(["verify", "s.png", "text:张三", "--xml", "s.xml"]) == 0
    assert main(["verify", "s.png", "text:李四", "--xml", "s.xml"]) == 1
    out = capsys.readouterr().out
    assert "verified (tree" in out and "NOT verified (tree" in out


@pytest.mark.parametrize("command", ["plan", "verify"])
def test_bad_screenshot_path_exits_2(command, env, tmp_path, capsys):
    assert main([command, str(tmp_path / "nope.png"), "x"]) == 2
    assert "screenshot not found" in capsys.readouterr().err
