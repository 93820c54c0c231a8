"""What an agent pays for the MCP server (issue 24, item 25), measured through the SDK's own client.

Pinned budgets: the tool list's schemas (name + description + inputSchema, as
JSON) at most 8,000 characters in all; a default screenshot reply (its base64
image and its text, as JSON) at most 25,000 characters on every simulated
screen; and every tool that returns an image uses the size the agent asked for
last. docs/mcp.md's Python client snippet is run as written.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from remote.mcp.access import AccessGate
from remote.mcp.session import Session, SessionOptions
from tests.test_mcp_gates import REGISTRY, in_process
from tests.test_mcp_stdio import call, image_of

SCHEMA_BUDGET = 8_000
SCREENSHOT_BUDGET = 25_000
DOCS = Path(__file__).resolve().parents[1] / "docs" / "mcp.md"


def reply_chars(result: Any) -> int:
    return len(json.dumps([c.model_dump(by_alias=True, exclude_none=True) for c in result.content],
                          ensure_ascii=False))


@pytest.fixture
def session(adb: Any, sim_phone: Any, tmp_path: Path) -> Session:
    return Session(adb, registry=REGISTRY, gate=AccessGate(["*"]), phone=sim_phone,
                   options=SessionOptions(runs_dir=None, work_dir=tmp_path, launch_settle_s=0.2))


def test_tool_schemas_and_default_screenshots_fit_their_budgets(session, sim_phone):
    async def scenario() -> None:
        async with in_process(session) as client:
            tools = (await client.list_tools()).tools
            sizes = {t.name: len(json.dumps({"name": t.name, "description": t.description,
                                              "inputSchema": t.input_schema})) for t in tools}
            assert len(tools) == 24 and sum(sizes.values()) <= SCHEMA_BUDGET, sizes
            listed = json.dumps([t.model_dump(by_alias=True, exclude_none=True) for t in tools])
            assert len(listed) <= SCHEMA_BUDGET, len(listed)        # the whole tools/list as JSON too
            for app in ("com.android.launcher3", "com.tencent.mm", "com.android.settings", "com.android.chrome"):
                sim_phone.launch(app)
                shot = await call(client, "screenshot")
                assert not shot.is_error and image_of(shot).size[1] == 720
                assert reply_chars(shot) <= SCREENSHOT_BUDGET, (app, reply_chars(shot))
    anyio.run(scenario)


def test_every_image_uses_the_size_the_agent_asked_for(session, sim_phone):
    async def scenario() -> None:
        async with in_process(session) as client:
            assert image_of(await call(client, "screenshot", max_side=640)).size == (288, 640)
            batch = await call(client, "batch", actions=[{"action": "wait", "seconds": 0.01}])
            assert image_of(batch).size == (288, 640)
            assert max(image_of(await call(client, "zoom", region=[0, 0, 288, 640])).size) == 640
            big = await call(client, "batch", actions=[{"action": "wait", "seconds": 0.01}], max_side=1280)
            assert image_of(big).size == (576, 1280)
            assert image_of(await call(client, "screenshot")).size == (576, 1280)   # the last size asked for
    anyio.run(scenario)


@pytest.mark.slow
def test_the_python_client_snippet_in_the_docs_runs_as_written(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    snippet = next(b for b in blocks if "ClientSession" in b or "from mcp import Client" in b)
    script = tmp_path / "client.py"
    script.write_text(snippet.replace(".venv/bin/python", sys.executable), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=Path(__file__).resolve().parents[1], timeout=300,
                          capture_output=True, text=True, env={"ADBUTILS_ADB_PATH": "/bin/true", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "screenshot 288x640" in done.stdout and "com.android.launcher3" in done.stdout
