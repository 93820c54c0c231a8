"""`python -m remote mcp --http 127.0.0.1:PORT` once, with the SDK's client over streamable HTTP.

The client negotiates the newest protocol here (2026-07-28), where questions to
the person travel as ``InputRequiredResult`` rounds instead of mid-call
requests: `request_access` and `teach_step` still ask, `teach_batch` says
clearly that it cannot. A request without the bearer token gets 401.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
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


def free_port(family: int = socket.AF_INET) -> int:
    with socket.socket(family) as s:
        s.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, limit: float = 60.0, host: str = "127.0.0.1",
                  family: int = socket.AF_INET) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        with socket.socket(family) as s:
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on {port} after {limit} s")


@contextlib.contextmanager
def mcp_http(tmp_path: Path, host: str = "127.0.0.1", token: str | None = TOKEN) -> Iterator[tuple[str, int]]:
    """``python -m remote mcp --device sim --http HOST:PORT`` as a child; yields (host, port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    port = free_port(family)
    env = {"ADBUTILS_ADB_PATH": "/bin/true", "PATH": "/usr/bin:/bin", **({"REMOTE_MCP_TOKEN": token} if token else {})}
    shown = f"[{host}]" if ":" in host else host
    proc = subprocess.Popen([sys.executable, "-m", "remote", "mcp", "--device", "sim", "--http", f"{shown}:{port}",
                             "--runs-dir", str(tmp_path / "runs"), "--work-dir", str(tmp_path / "work")],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc, host=host, family=family)
        yield host, port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for this module's session tests (each test's clients are sessions of their own)."""
    with mcp_http(tmp_path_factory.mktemp("mcp-http")) as (_host, port):
        yield f"http://127.0.0.1:{port}/mcp"


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
            granted = await client.call_tool("request_access", {"apps": ["微信"]})   # no session: no grant
            assert granted.is_error and "has no MCP session" in text_of(granted) and not asked
            assert "--allow com.tencent.mm" in text_of(granted)
            taught = await client.call_tool("teach_step", {"text": "输入联系人", "target": "text:张三"})
            assert not taught.is_error and "pressed next" in text_of(taught)
            batch = await client.call_tool("teach_batch", {"steps": [{"text": "点返回"}]})
            assert batch.is_error and "call teach_step once per step instead" in text_of(batch)
    anyio.run(scenario)


# ---------------------------------------------------------------- issue 24 item 12: one allow list per MCP session


def test_a_grant_belongs_to_the_mcp_session_the_person_gave_it_in(http_server):
    asked: list[str] = []

    async def person_allows(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": True})

    async def person_declines(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    def client(**kwargs: Any) -> tuple[Any, Client]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        return http, Client(streamable_http_client(http_server, http_client=http), mode="legacy",
                            read_timeout_seconds=120, **kwargs)

    async def scenario() -> None:
        http_a, a = client(elicitation_callback=person_allows)
        http_b, b = client(elicitation_callback=person_declines)
        http_c, c = client()                                      # a client that cannot ask anyone
        async with http_a, a, http_b, b, http_c, c:
            granted = await a.call_tool("request_access", {"apps": ["微信"], "reason": "send a message"})
            assert "allowed for this MCP session only (the person allowed it; other sessions do not get it)" \
                in text_of(granted)
            assert "for this MCP session only" in asked[0] and "send a message" in asked[0]
            assert text_of(await a.call_tool("open_app", {"name": "微信"})) == "opened com.tencent.mm (微信)"
            assert "张三" in text_of(await a.call_tool("screenshot", {}))

            refused = await b.call_tool("open_app", {"name": "微信"})       # B never got A's grant
            assert refused.is_error and "not in this session's allowed apps" in text_of(refused)
            assert (await b.call_tool("tap", {"target_ref": "text:张三"})).is_error
            seen = text_of(await b.call_tool("screenshot", {}))               # WeChat is in front: B sees nothing
            assert "张三" not in seen and "com.tencent.mm is not in this session's allowed apps" in seen
            declined = await b.call_tool("request_access", {"apps": ["微信"]})
            assert declined.is_error and "the person did not allow com.tencent.mm" in text_of(declined)

            self_granted = await c.call_tool("request_access", {"apps": ["微信"]})
            assert self_granted.is_error and "an agent cannot grant itself apps" in text_of(self_granted)
            assert (await c.call_tool("tap", {"target_ref": "text:张三"})).is_error
            assert len(asked) == 2
            assert "张三" in text_of(await a.call_tool("screenshot", {}))      # A still may
    anyio.run(scenario)


# ---------------------------------------------------------------- issue 24 item 14: Host and Origin on any loopback


def post(host: str, port: int, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection(host, port, timeout=10)
    try:
        connection.request("POST", "/mcp", body=b"{}", headers={"Content-Type": "application/json",
                                                                "Accept": "application/json, text/event-stream",
                                                                **headers})
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.mark.parametrize("host", ["127.0.0.2", "0:0:0:0:0:0:0:1"])
def test_host_and_origin_are_checked_on_every_loopback_spelling(tmp_path, host):
    with mcp_http(tmp_path, host, token=None) as (bound, port):
        shown = f"[{bound}]" if ":" in bound else bound
        assert post(bound, port, {"Host": "evil.example"}) == 421
        assert post(bound, port, {"Host": f"{shown}:{port}", "Origin": "http://evil.example"}) == 403
        assert post(bound, port, {"Host": f"{shown}:{port}"}) not in (401, 403, 421)
        assert post(bound, port, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) \
            not in (401, 403, 421)
