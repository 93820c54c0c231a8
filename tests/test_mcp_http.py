"""`python -m remote mcp --http 127.0.0.1:PORT` once, with the SDK's client over streamable HTTP.

The client negotiates the newest protocol here (2026-07-28), where questions to
the person travel as ``InputRequiredResult`` rounds instead of mid-call
requests: `request_access` and `teach_step` still ask, `teach_batch` says
clearly that it cannot. A request without the bearer token gets 401.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.test_mcp_stdio import image_of, text_of

pytestmark = pytest.mark.slow
TOKEN = "test-token-3f9c2a7e"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on {port} after {limit} s")


@pytest.fixture
def http_server(tmp_path: Path) -> Any:
    port = free_port()
    env = {"ADBUTILS_ADB_PATH": "/bin/true", "REMOTE_MCP_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, "-m", "remote", "mcp", "--device", "sim", "--http", f"127.0.0.1:{port}",
                             "--runs-dir", str(tmp_path / "runs"), "--work-dir", str(tmp_path / "work")],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_one_session_over_streamable_http_with_a_bearer_token(http_server):
    request = urllib.request.Request(http_server, data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401

    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": True, "done": True})

    async def scenario() -> None:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with http, Client(streamable_http_client(http_server, http_client=http),
                                elicitation_callback=elicit, read_timeout_seconds=120) as client:
            assert client.protocol_version == "2026-07-28"
            shot = await client.call_tool("screenshot", {"max_side": 640})
            assert image_of(shot).size == (288, 640) and '[Button] "微信"' in text_of(shot)
            granted = await client.call_tool("request_access", {"apps": ["微信"]})
            assert "the person allowed it" in text_of(granted) and "com.tencent.mm" in asked[0]
            opened = await client.call_tool("open_app", {"name": "微信"})
            assert text_of(opened) == "opened com.tencent.mm (微信)"
            tapped = await client.call_tool("tap", {"target_ref": "desc:搜索"})
            assert "found via tree" in text_of(tapped)
            taught = await client.call_tool("teach_step", {"text": "输入联系人", "target": "text:张三"})
            assert not taught.is_error and "pressed next" in text_of(taught)
            batch = await client.call_tool("teach_batch", {"steps": [{"text": "点返回"}]})
            assert batch.is_error and "call teach_step once per step instead" in text_of(batch)
    anyio.run(scenario)
