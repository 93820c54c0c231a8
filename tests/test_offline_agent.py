"""`remote plan --agent`: one offline turn of a phone-agent model, and `remote plan` following the family and the
run's sensitivity rules (issue 38). Through the CLI, against the loopback model server speaking each family."""

from __future__ import annotations

import json

import pytest

from remote.cli import main
from tests.support import dialect_cases as dc
from tests.test_offline_models import SIZE, configure, server, shot  # noqa: F401 - fixtures

AGENTS = ("autoglm-phone", "ui-tars-1.5", "ui-tars-1.0", "doubao-ui-tars", "qwen2.5-vl", "qwen3-vl", "glm-v", "showui")


def _turn(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("family", AGENTS)
def test_the_agents_first_action_snaps_to_the_element_it_points_at(family, server, shot, monkeypatch,  # noqa: F811
                                                                    capsys):
    configure(monkeypatch, server, family)
    truth = dc.layout(SIZE)[dc.TARGET]
    server.script("agent", {"action": "tap", "box": list(truth), "thought": "设置在左下"})
    assert main(["plan", str(shot), "打开设置", "--xml", "s.xml", "--agent", "--json"]) == 0
    turn = _turn(capsys)
    assert turn["family"] == family and turn["turn"]["verb"] == "tap"
    x, y = turn["turn"]["point"]
    assert truth[0] <= x < truth[2] and truth[1] <= y < truth[3]
    centre = [(truth[0] + truth[2]) // 2, (truth[1] + truth[3]) // 2]
    assert turn["steps"] == [{"action": "tap", "target_ref": f"xy:{centre[0]},{centre[1]}", "params": {},
                              "description": "agent: 设置", "sensitive": False, "sensitive_reason": ""}]
    call = turn["model_calls"][0]
    assert call["sent"] == list(server.requests_for("agent")[0].image_sizes()[-1])
    assert "purpose: agent" in server.requests_for("agent")[0].text and not server.requests_for("plan")


@pytest.mark.parametrize("family", ("autoglm-phone", "glm-v", "showui", "ui-tars-1.5"))
def test_a_point_with_no_element_under_it_is_a_raw_tap_that_asks_first(family, server, shot, monkeypatch,  # noqa: F811
                                                                        capsys):
    configure(monkeypatch, server, family)
    server.script("agent", {"action": "tap", "point": [540, 300]})
    assert main(["plan", str(shot), "打开设置", "--xml", "s.xml", "--agent"]) == 0
    out = capsys.readouterr().out
    assert "(no element of the screen there)" in out and "[asks first: a tap at raw coordinates" in out
    assert "nothing was touched" in out


def test_glm_v_and_showui_type_into_the_field_they_name(server, shot, monkeypatch, capsys):  # noqa: F811
    field = dc.layout(SIZE)["搜索"]
    for family in ("glm-v", "showui"):
        configure(monkeypatch, server, family)
        server.script("agent", {"action": "type", "text": "张三", "box": list(field)})
        assert main(["plan", str(shot), "搜索张三", "--xml", "s.xml", "--agent", "--json"]) == 0
        steps = _turn(capsys)["steps"]
        assert [s["action"] for s in steps] == ["tap", "input_text"], family
        assert steps[0]["description"] == "agent: 搜索" and steps[1]["params"]["text"] == "张三"


def test_a_finish_claim_is_said_as_a_claim(server, shot, monkeypatch, capsys):  # noqa: F811
    configure(monkeypatch, server, "glm-v")
    server.script("agent", {"action": "finish", "message": "done"})
    assert main(["plan", str(shot), "打开设置", "--agent", "--json"]) == 0
    turn = _turn(capsys)
    assert turn["turn"]["verb"] == "finish" and turn["turn"]["claims_success"] is True and turn["steps"] == []


def test_plan_never_sends_the_planner_prompt_to_a_family_that_cannot_write_plans(server, shot, monkeypatch,  # noqa: F811
                                                                                  capsys):
    configure(monkeypatch, server, "showui")
    server.script("agent", {"action": "tap", "box": list(dc.layout(SIZE)[dc.TARGET])})
    assert main(["plan", str(shot), "打开设置", "--xml", "s.xml"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("showui cannot write plans: a run lets it drive") and "a run would: tap" in out
    assert [r.purpose for r in server.requests] == ["agent"]


def test_a_family_without_an_agent_protocol_is_refused_with_exit_2(server, shot, monkeypatch, capsys):  # noqa: F811
    configure(monkeypatch, server, "gemini")
    assert main(["plan", str(shot), "打开设置", "--agent"]) == 2
    assert "has no phone-agent protocol" in capsys.readouterr().err and not server.requests


RAW_TAP = {"analysis": {}, "steps": [{"step": 1, "action": "tap", "target_ref": "xy:540,300"}], "success_criteria": "x"}


def test_plan_and_run_agree_that_a_models_raw_coordinate_tap_needs_a_yes(server, shot, monkeypatch, capsys,  # noqa: F811
                                                                          tmp_path):
    configure(monkeypatch, server, "qwen3-vl")
    server.family = None
    server.script("plan", RAW_TAP)
    assert main(["plan", str(shot), "帮我订一张机票", "--json"]) == 0
    step = json.loads(capsys.readouterr().out)["plan"]["steps"][0]
    assert step["sensitive"] is True and "raw coordinates" in step["sensitive_reason"]
    server.script("plan", RAW_TAP)
    code = main(["run", "--device", "sim", "--json", "--runs-dir", str(tmp_path / "runs"), "帮我订一张机票"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 130 and summary["status"] == "aborted" and summary["failure"] == "not_confirmed", summary
    record = json.loads((tmp_path / "runs").glob("*/run.json").__next__().read_text(encoding="utf-8"))
    ran = record["steps"][0]["step"]
    assert ran["sensitive"] is True and ran["sensitive_reason"] == step["sensitive_reason"]
