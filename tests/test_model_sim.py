"""`remote model-sim --script FILE`: the loopback chat-completions server as a tester meets it.

The command runs in a real subprocess and is driven by the real `openai` client;
a whole `remote run` is pointed at it through the environment variables it prints.
Script errors are ConfigErrors naming the file and the line.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from remote.cli import main
from remote.commands.model_sim import load_script
from remote.errors import ConfigError
from remote.sim.model_requests import Rule
from remote.sim.model_server import ModelServer

PLAN = {"analysis": {"current_screen": "桌面"},
        "steps": [{"step": 1, "action": "launch_app", "params": {"package": "com.android.settings"}},
                  {"step": 2, "action": "tap", "target_ref": "text:显示"}],
        "success_check": {"app": "com.android.settings"}}

SCRIPT = f"""\
model: sim-vl
rules:
  - match: {{purpose: plan, prompt: 亮度}}
    reply: {json.dumps(PLAN, ensure_ascii=False)}
    times: 1
  - match: {{purpose: plan}}
    reply: "not JSON: I cannot plan that"
  - match: {{purpose: verify}}
    status: 429
    retry_after: 7
    times: 2
  - match: {{prompt: 回声}}
    reply: {{echo: 回声}}
"""


def client(url: str, timeout: float = 10) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key="sk-anything", max_retries=0, timeout=timeout)


def ask(c: openai.OpenAI, purpose: str, text: str) -> str:
    reply = c.chat.completions.create(model="m", messages=[{"role": "system", "content": f"purpose: {purpose}"},
                                                           {"role": "user", "content": text}])
    return reply.choices[0].message.content or ""


@pytest.fixture
def model_sim(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    script = tmp_path / "replies.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "remote", "model-sim", "--script", str(script), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert proc.stdout is not None
    header = "".join(proc.stdout.readline() for _ in range(8))
    found = re.search(r"CUSTOM_LLM_BASE_URL=(http://127\.0\.0\.1:\d+/v1)", header)
    assert found, header + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
    yield proc, found.group(1)
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def test_the_command_prints_the_url_and_answers_by_rule(model_sim):
    proc, url = model_sim
    c = client(url)
    assert json.loads(ask(c, "plan", "把屏幕亮度调低")) == PLAN       # purpose and prompt
    assert ask(c, "plan", "把屏幕亮度调低") == "not JSON: I cannot plan that"  # times: 1 used up: the next rule
    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as err:
            ask(c, "verify", "看看")
        assert err.value.response.headers["retry-after"] == "7"
    with pytest.raises(openai.NotFoundError, match="no scripted reply for purpose 'verify'"):
        ask(c, "verify", "看看")                                          # 429 twice, then nothing fits
    assert json.loads(ask(c, "locate", "回声在哪")) == {"echo": "回声"}     # any purpose, by prompt
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and "stopped" in err
    assert out.split().count("->") == 6 and "rule replies.yaml:3: 200" in out and "HTTP 429" in out


@pytest.mark.slow
def test_a_run_pointed_at_model_sim_is_planned_by_it(model_sim, tmp_path):
    proc, url = model_sim
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "CUSTOM_LLM", "OPENAI", "DASHSCOPE"))}
    env.update(LLM_PROVIDER="custom", CUSTOM_LLM_BASE_URL=url, CUSTOM_LLM_MODEL="sim-vl",
               CUSTOM_LLM_API_KEY="sk-local-123456789")
    run = subprocess.run([sys.executable, "-m", "remote", "run", "--device", "sim", "--json", "--runs-dir",
                          str(tmp_path / "runs"), "看看屏幕亮度在哪里调"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = json.loads(run.stdout)
    assert summary["status"] == "success" and summary["model_calls"] == 1
    record = json.loads((Path(summary["record"]) / "run.json").read_text(encoding="utf-8"))
    assert record["plan"]["source"] == "model" and record["device_state"]["foreground"]["screen"] == "display"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=10)
    assert "plan     -> rule replies.yaml:3: 200" in out


def test_delay_and_drip_meet_the_deadline_of_a_model_call():
    from remote.ai.llm import LLMClient
    from remote.config import LLMConfig
    from remote.errors import ModelError

    with ModelServer() as server:
        server.rules(Rule(reply={"ok": True}, purpose="plan", delay=5, times=1),
                     Rule(reply="x" * 600, purpose="plan", drip=1000, times=2),
                     Rule(reply={"ok": True}, purpose="plan"))
        with pytest.raises(openai.APITimeoutError):
            ask(client(server.url, timeout=0.5), "plan", "slow")
        # httpx's timeout is per read: a body that trickles in never trips it ...
        assert ask(client(server.url, timeout=0.5), "plan", "dripping") == "x" * 600
        # ... the product's deadline covers the whole call
        llm = LLMClient(LLMConfig.custom(api_key="sk-x", base_url=server.url, model="m", timeout=0.5,
                                         max_retries=0))
        with pytest.raises(ModelError, match="no reply within 0.5 s"):
            llm.complete([{"role": "user", "content": "dripping"}], purpose="plan")
        assert json.loads(ask(client(server.url), "plan", "fine")) == {"ok": True}
        # The server notes what it sent once the reply is written; the client can read the reply first.
        deadline = time.monotonic() + 5
        while not (server.requests[1].answer and server.requests[3].answer) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(server.requests) == 4 and server.requests[1].answer == server.requests[3].answer == "rule: 200"


def test_a_dripped_reply_arrives_whole():
    with ModelServer() as server:
        server.rules(Rule(reply={"text": "你好" * 10}, drip=2000))
        started = time.monotonic()
        assert json.loads(ask(client(server.url), "verify", "x")) == {"text": "你好" * 10}
        assert time.monotonic() - started >= 0.05   # it did trickle: at least one pause of 1/10 s


def test_scripted_queues_come_before_rules_and_requests_are_bounded():
    with ModelServer(keep_requests=3) as server:
        server.rules(Rule(reply="from the rule"))
        server.script("plan", "queued")
        c = client(server.url)
        assert [ask(c, "plan", "a"), ask(c, "plan", "b")] == ["queued", "from the rule"]
        for _ in range(3):
            ask(c, "locate", "c")
        assert len(server.requests) == 3 and {r.purpose for r in server.requests} == {"locate"}


BAD_SCRIPTS = [
    ("rules: []\n", 1, "has none"),
    ("- match: {purpose: plam}\n  reply: x\n", 1, "match.purpose must be one of plan, locate, verify"),
    ("- reply: x\n  dealy: 3\n", 2, "unknown key 'dealy' in a rule"),
    ("- reply: x\n- match: {purpose: plan}\n", 2, "a rule needs reply:"),
    ("- reply: x\n  status: 99\n", 2, "status: must be a whole number from 100 to 599"),
    ("- reply: x\n  delay: -1\n", 2, "delay: must be a number from 0"),
    ("- reply: x\n  times: true\n", 2, "times: must be a whole number"),
    ("- reply: x\n  drip: 1.5\n", 2, "drip: must be a whole number"),
    ("- reply: 3\n", 1, "reply: must be a mapping"),
    ("- match: [plan]\n  reply: x\n", 1, "match: must be a mapping"),
    ("- match: {who: plan}\n  reply: x\n", 1, "unknown key 'who' in match"),
    ("model: m\nrules:\n  - reply: x\n  - just text\n", 2, "rule 2 must be a mapping"),
    ("rules:\n  - reply: {a: [1, 2}\n", 2, "invalid YAML"),
    ("- reply: x\nmodel: y\n", 2, "invalid YAML"),
    ("family: qwen9\nrules:\n  - reply: x\n", 1, "family: must be one of qwen2.5-vl"),
    ("screen: big\nrules:\n  - reply: x\n", 1, "screen: must be WIDTHxHEIGHT"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD_SCRIPTS)
def test_a_bad_script_names_the_file_and_line(tmp_path, text, line, message):
    script = tmp_path / "s.yaml"
    script.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_script(script)
    assert err.value.line == line and message in err.value.message and str(script) in err.value.message


def test_a_bad_script_through_the_command_is_exit_2_without_a_traceback(tmp_path, capsys):
    script = tmp_path / "s.yaml"
    script.write_text("- reply: x\n  status: 700\n", encoding="utf-8")
    assert main(["model-sim", "--script", str(script)]) == 2
    err = capsys.readouterr().err
    assert f"{script}:2: status:" in err and "Traceback" not in err
    assert main(["model-sim", "--script", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_busy_port_is_a_clear_error(tmp_path, capsys):
    script = tmp_path / "s.yaml"
    script.write_text("- reply: x\n", encoding="utf-8")
    with ModelServer() as server:
        port = server.url.rsplit(":", 1)[1].split("/")[0]
        assert main(["model-sim", "--script", str(script), "--port", port]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "0 picks a free one" in err


FAMILY_SCRIPT = """\
family: qwen2.5-vl
screen: 1080x2400
rules:
  - match: {purpose: locate}
    reply: {box: [540, 1200, 648, 1440]}
  - match: {purpose: agent}
    reply: {action: tap, point: [540, 1200], thought: 点一下}
"""


def test_model_sim_answers_in_a_familys_dialect_for_the_image_it_receives(tmp_path):
    import base64
    import io

    from PIL import Image

    script = tmp_path / "qwen.yaml"
    script.write_text(FAMILY_SCRIPT, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "remote", "model-sim", "--script", str(script), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stdout is not None
        header = "".join(proc.stdout.readline() for _ in range(9))
        url = re.search(r"CUSTOM_LLM_BASE_URL=(\S+)", header).group(1)
        assert "answering as qwen2.5-vl" in header and "LLM_MODEL_FAMILY=qwen2.5-vl" in header
        buf = io.BytesIO()
        Image.new("RGB", (560, 1260), "white").save(buf, format="PNG")
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(buf.getvalue())
                                                    .decode()}}
        reply = client(url).chat.completions.create(model="m", messages=[
            {"role": "system", "content": "purpose: locate"},
            {"role": "user", "content": [{"type": "text", "text": "find it"}, image]}])
        text = reply.choices[0].message.content or ""
        # Qwen2.5-VL: a fenced JSON list, absolute pixels of the 560x1260 frame it saw
        assert text.startswith("```json") and json.loads(text.strip("`").removeprefix("json")) == \
            [{"bbox_2d": [280, 630, 336, 756], "label": "target"}]
        agent = client(url).chat.completions.create(model="m", messages=[
            {"role": "system", "content": "purpose: agent"}, {"role": "user", "content": [image]}])
        assert '"coordinate": [280, 630]' in (agent.choices[0].message.content or "")
    finally:
        proc.kill()
        proc.wait(10)
