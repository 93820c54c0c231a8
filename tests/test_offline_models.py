"""`remote locate` and `remote flow` on screenshot files ask the configured model as a run does (issue 38).

Every test goes through the CLI (``remote.cli.main``) with the model configured by environment variables
(a provider preset, its key variable, ``LLM_BASE_URL`` at the loopback model server, a real model name), and the
server answers as that family writes (``remote.sim.dialects``), for the image each request carried.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from remote.ai.families import family_for
from remote.ai.frames import send_size
from remote.cli import main
from remote.config import PRESETS
from remote.sim.model_server import ModelServer
from tests.support import dialect_cases as dc

SIZE = (1080, 2400)
ROOT = Path(__file__).resolve().parents[1]
# The preset a user of each family picks (``local``: a self-hosted OpenAI-compatible server), with a real model name.
PRESET_OF = {
    "qwen2.5-vl": "local", "qwen-vl-max": "qwen", "qwen-vl-max-2508": "qwen", "qwen3-vl": "qwen3", "glm-v": "glm",
    "gemini": "gemini", "gpt": "openai", "claude": "openrouter", "ui-tars-1.5": "local", "ui-tars-1.0": "local",
    "doubao-ui-tars": "doubao-ui-tars", "doubao-vision": "doubao", "autoglm-phone": "autoglm", "os-atlas": "local",
    "showui": "local", "unknown": "local",
}
MODEL_OF = {**dc.MODELS, "claude": "anthropic/claude-sonnet-4.5"}
LLM_VARS = ("LLM_PROVIDER", "LLM_MODEL", "LLM_BASE_URL", "LLM_MODEL_FAMILY", "LLM_AGENT", "LLM_SUPPORTS_VISION",
            "CUSTOM_LLM_BASE_URL", "CUSTOM_LLM_MODEL", "CUSTOM_LLM_API_KEY", "LOCAL_LLM_BASE_URL")


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as s:
        yield s


@pytest.fixture
def shot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A screenshot of six drawn buttons and its UI dump, in an empty folder with no model configured."""
    monkeypatch.chdir(tmp_path)
    for var in LLM_VARS:
        monkeypatch.delenv(var, raising=False)
    dc.image(SIZE).save(tmp_path / "s.png")
    (tmp_path / "s.xml").write_text(dc.hierarchy(SIZE), encoding="utf-8")
    return tmp_path / "s.png"


def configure(monkeypatch: pytest.MonkeyPatch, server: ModelServer, family: str) -> None:
    """The family's preset and a real model name, pointed at the loopback server; the server speaks the family."""
    preset = PRESET_OF[family]
    monkeypatch.setenv("LLM_PROVIDER", preset)
    monkeypatch.setenv(PRESETS[preset].key_env, "sk-offline-123456")
    monkeypatch.setenv("LLM_BASE_URL", server.url)
    monkeypatch.setenv("LLM_MODEL", MODEL_OF[family])
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    server.requests.clear()
    with server._lock:
        server._queues.clear()
    server.family, server.screen = family, SIZE


@pytest.mark.parametrize("family", sorted(dc.MODELS))
def test_locate_asks_each_familys_model_and_lands_on_the_drawn_element(family, server, shot, monkeypatch, capsys):
    configure(monkeypatch, server, family)
    truth = dc.layout(SIZE)[dc.TARGET]
    server.script("locate", {"box": list(truth)}, {"box": list(truth)})
    assert main(["locate", str(shot), "dynamic:设置按钮", "--xml", "s.xml", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["success"] and out["method_used"] == "vision"
    assert out["element"]["bbox"] == list(truth)
    call = out["model_calls"][0]
    fam = family_for(MODEL_OF[family])
    assert call["family"] == fam.name == family
    sent = list(server.requests_for("locate")[0].image_sizes()[-1])
    assert call["sent"] == sent == list(send_size(SIZE, 1280, fam.frame))   # the size that went over the wire
    assert call["frame"]["source"] == list(SIZE) and call["raw"][0] and call["to_device"]["per_unit"]


def test_locate_without_a_model_says_so_and_exits_2(shot, capsys):
    for argv in (["locate", str(shot), "dynamic:设置按钮"], ["locate", str(shot), "text:设置", "--strategy", "ai_only"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "no model configured" in err and "LLM_PROVIDER" in err
    assert main(["locate", str(shot), "text:设置", "--xml", "s.xml"]) == 0   # the free tiers need no model


def test_ai_only_asks_the_model_even_where_the_tree_would_answer(server, shot, monkeypatch, capsys):
    configure(monkeypatch, server, "qwen3-vl")
    truth = dc.layout(SIZE)["发送"]
    server.script("locate", {"box": list(truth)})
    assert main(["locate", str(shot), "text:发送", "--xml", "s.xml", "--strategy", "ai_only"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("found by vision") and f"box {list(truth)}" in out
    assert "model locate: qwen3-vl sent" in out and len(server.requests_for("locate")) == 1


def test_locate_shows_the_models_refusal_and_what_it_answered(server, shot, monkeypatch, capsys):
    configure(monkeypatch, server, "autoglm-phone")
    server.script("locate", "我看不清这个屏幕。", "还是看不清。")
    assert main(["locate", str(shot), "dynamic:设置按钮", "--xml", "s.xml", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert not out["success"]
    assert out["model_calls"][0]["raw"] == ["我看不清这个屏幕。", "还是看不清。"]
    assert out["model_calls"][0]["problems"]


def test_flow_locates_a_models_dynamic_step_with_the_configured_model(server, shot, monkeypatch, capsys):
    configure(monkeypatch, server, "glm-v")
    truth = dc.layout(SIZE)[dc.TARGET]
    plan = {"analysis": {}, "steps": [{"step": 1, "action": "tap", "target_ref": "dynamic:设置按钮"}],
            "success_criteria": "设置已打开"}
    server.family = None   # the plan is our JSON; the locate reply is written in GLM's dialect below
    server.script("plan", plan)
    server.script("locate", lambda request: _glm(truth))
    assert main(["flow", str(shot), "在这个测试应用里点一下设置按钮", "--xml", "s.xml", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["steps"]
    assert rows[0]["found"] and rows[0]["bbox"] == list(truth) and rows[0]["tier"] == "vision"
    assert rows[0]["model_calls"][0]["family"] == "glm-v"


def test_flow_without_a_model_refuses_a_dynamic_target_it_cannot_locate(server, shot, monkeypatch, capsys):
    configure(monkeypatch, server, "glm-v")
    server.family = None
    server.script("plan", {"analysis": {}, "steps": [{"step": 1, "action": "tap", "target_ref": "dynamic:设置按钮"}],
                           "success_criteria": "x"})
    monkeypatch.setenv("LLM_SUPPORTS_VISION", "0")
    assert main(["flow", str(shot), "在这个测试应用里点一下设置按钮", "--xml", "s.xml"]) == 2
    assert "cannot see images" in capsys.readouterr().err


def _glm(box: tuple[int, int, int, int]) -> str:
    x1, y1, x2, y2 = (round(v * 1000 / SIZE[i % 2]) for i, v in enumerate(box))
    return f"<think>设置按钮在左下。</think><answer><|begin_of_box|>[[{x1},{y1},{x2},{y2}]]<|end_of_box|></answer>"


def test_a_trusted_familys_box_its_own_second_look_does_not_find_is_not_tapped(server, shot, monkeypatch, capsys):
    configure(monkeypatch, server, "qwen3-vl")
    server.script("locate", {"box": [500, 300, 540, 340]}, {"found": False, "reason": "nothing there"})
    assert main(["locate", str(shot), "dynamic:设置按钮", "--xml", "s.xml", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert not out["success"] and "not found again by its own zoomed second look" in out["error"]
    assert [c["kind"] for c in out["model_calls"]] == ["locate", "zoom"]
    zoom = out["model_calls"][1]
    assert zoom["frame"]["offset"] != [0, 0] and zoom["read"]["not_found"] == "nothing there"


def test_the_dialect_bench_counts_a_plausible_neighbour_reply_apart_from_right_and_wrong_taps(server):
    """bench/dialect_bench.py's judging rule: native replies land within 1 px, must-not-tap replies are refused,
    and replies naming the neighbouring element are neither 'within' nor hidden: they are tapped there and counted."""
    spec = importlib.util.spec_from_file_location("dialect_bench", ROOT / "bench" / "dialect_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["dialect_bench"] = bench   # its dataclasses look their module up
    spec.loader.exec_module(bench)
    tally = bench.run_family(server, "qwen3-vl", [SIZE], [768])
    assert (tally.within, tally.replies, tally.wrong) == (12, 12, 0)
    assert (tally.refused, tally.bad_given) == (2, 2)
    assert (tally.neighbour_tapped, tally.neighbour_given) == (2, 2)
