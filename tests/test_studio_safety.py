"""Issue 34 at the studio's doors: bodies bounded in depth and value (and MCP's over HTTP), a Content-Security-Policy
on every answer, a sensitive step's yes asked on the terminal (never taken from the page), and a record's text shown
as text in chromium (an ``<img onerror>`` in a not-found reason runs nothing)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from remote.mcp.bodies import BadJson, depth_of, load_json
from remote.studio.runs import RunView
from tests.test_mcp_http import TOKEN, free_port, wait_for_port
from tests.test_studio import CHROMIUM, Rig, rig  # noqa: F401 - the module's phone and studio

DEEP = b"[" * 100_000 + b"]" * 100_000
# a script posting a sensitive step (删除 spelt as JS escapes, so the not-found tap itself is not a sensitive one)
HOSTILE = '<img src=x onerror="window.pwned=1;fetch(\'/api/act\',{method:\'POST\',headers:{\'Content-Type\':' \
          '\'application/json\'},body:JSON.stringify({step:{action:\'tap\',target_ref:\'text:\\u5220\\u9664聊天记录\'},' \
          'confirm:true})})">'


def test_load_json_refuses_depth_and_non_finite_numbers_and_keeps_strings_with_brackets() -> None:
    assert depth_of(b'{"a": "[[[[[[", "b": [[1]]}') == 3
    assert load_json(json.dumps({"a": "[" * 42 + '\\"{'}).encode()) == {"a": "[" * 42 + '\\"{'}
    with pytest.raises(BadJson, match="deeper than 32"):
        load_json(DEEP)
    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        with pytest.raises(BadJson, match="not a JSON number"):
            load_json(b'{"x": ' + constant + b"}")
    with pytest.raises(BadJson, match="not JSON"):
        load_json(b'{"x": ')


@pytest.mark.parametrize("path", ["/api/inspect", "/api/record", "/api/act", "/api/template/steps"])
def test_deep_and_nan_bodies_are_the_documented_json_400(rig: Rig, path: str) -> None:  # noqa: F811
    for body in (DEEP, b'{"x": NaN, "y": 1}', b'{"x": Infinity, "y": 1}'):
        answer = rig.http.post(path, content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, (path, answer.text[:200])
        data = answer.json()
        assert data["kind"] == "BadJson" and data["error"] and "Traceback" not in answer.text


def test_every_answer_carries_a_csp_that_forbids_inline_scripts(rig: Rig) -> None:  # noqa: F811
    for path in ("/", "/static/studio.js", "/api/info"):
        csp = rig.http.get(path).headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    refused = rig.http.get("/api/info", headers={"Host": "evil.example:80"})
    assert refused.status_code == 421 and "script-src 'self'" in refused.headers["content-security-policy"]
    page = rig.http.get("/").text
    assert re.search(r"<script(?![^>]*\bsrc=)", page) is None                  # no inline script
    assert re.search(r"\son[a-z]+\s*=", page) is None                          # no inline handler


class Terminal:
    """The person at the terminal where the studio runs (what `TerminalPerson` asks), answering as scripted."""

    def __init__(self, answer: bool) -> None:
        self.answer, self.asked = answer, []

    def confirm(self, question: str) -> bool:
        self.asked.append(question)
        return self.answer

    def choose(self, question: str, options: Any) -> int | None:
        return None

    def take_over(self, message: str) -> bool:
        return False


def test_a_sensitive_step_is_asked_on_the_terminal_and_a_page_confirm_is_no_yes(rig: Rig) -> None:  # noqa: F811
    rig.start_app("com.tencent.mm")
    rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:张三"}})
    step = {"action": "tap", "target_ref": "text:删除聊天记录"}
    commands = len(rig.phone.snapshot()["commands"])
    # no terminal: refused before anything is done, "confirm": true from the page or not
    for body in ({"step": step}, {"step": step, "confirm": True}):
        out = rig.post("/api/act", body, 409)
        assert out["needs_confirmation"] and "terminal" in out["hint"]
    assert len(rig.phone.snapshot()["commands"]) == commands
    settings = rig.studio.acts.settings
    try:
        settings.person = Terminal(False)               # the person says no on the terminal: the step fails
        out = rig.post("/api/act", {"step": step, "confirm": True})
        assert out["status"] in ("failed", "aborted") and "删除聊天记录" in settings.person.asked[0]
        assert out["steps"][0]["failure"] == "not_confirmed"
        assert rig.phone.snapshot()["foreground"]["screen"] == "chat:张三"
    finally:
        settings.person = None


@pytest.mark.slow
def test_mcp_over_http_refuses_nan_in_a_tool_call_as_a_parse_error(tmp_path: Path) -> None:
    def post(body: bytes, port: int) -> tuple[int, dict[str, Any]]:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {TOKEN}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as answer:
                return answer.status, {}
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    port = free_port()
    env = {"ADBUTILS_ADB_PATH": "/bin/true", "PATH": "/usr/bin:/bin", "REMOTE_MCP_TOKEN": TOKEN,
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}    # this checkout's remote, as the other tests run it
    proc = subprocess.Popen([sys.executable, "-m", "remote", "mcp", "--device", "sim", "--http", f"127.0.0.1:{port}",
                             "--runs-dir", str(tmp_path / "runs"), "--work-dir", str(tmp_path / "work")],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)
        call = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tap", "arguments": ' \
               b'{"x": NaN, "y": 5}}}'
        status, data = post(call, port)
        assert status == 400 and data["error"]["code"] == -32700 and "not a JSON number" in data["error"]["message"]
        status, data = post(DEEP, port)
        assert status == 400 and data["error"]["code"] == -32700
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_a_hostile_not_found_reason_renders_as_text_in_chromium_and_runs_nothing(rig: Rig, tmp_path: Path) -> None:  # noqa: F811
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the dev dependency playwright is not installed")
    rig.start_app("com.tencent.mm")
    record = rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:" + HOSTILE}})
    assert record["status"] == "failed" and "<img src=x onerror=" in record["error"], record   # the reason names it
    assert "<img src=x onerror=" in (Path(record["record"]) / "run.json").read_text(encoding="utf-8")
    rig.studio.run = RunView(Path(record["record"]), rig.studio.registry)
    def acts() -> list[str]:   # what touches the phone (the page's frames and dumps only read it)
        return [c for c in rig.phone.snapshot()["commands"] if c.startswith(("input", "am ", "cmd input"))]

    commands = len(acts())
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                errors: list[str] = []
                page.on("console", lambda m: errors.append(m.text))
                page.goto(rig.base + "/")
                page.wait_for_selector("#run-steps li")
                shown = page.inner_text("#run")
                assert shown.count("<img src=x onerror=") >= 2             # the reason and the step, as text
                assert page.locator("#run img, #run-steps img").count() == 0  # no element made of it
                page.click("#run-steps li >> nth=0")
                page.wait_for_timeout(500)
                assert page.evaluate("window.pwned") is None                 # its handler never ran
            finally:
                browser.close()
    finally:
        rig.studio.run = None
    assert len(acts()) == commands                                           # nothing reached the phone
