"""model-sim checks no key, so what a stranger can make it hold is bounded (issue 24, item 19).

`remote model-sim` runs as a user starts it (a subprocess, here on 0.0.0.0): it warns that it listens beyond
this machine, refuses an oversized body from its headers alone, and serves a bounded number of connections
at once (the real `openai` client meets the 503). Stalled connections are let go and kept request bodies are
bounded in bytes, on the server the tests use.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from remote.sim.bounded_http import MAX_CONNECTIONS
from remote.sim.model_requests import Rule
from remote.sim.model_server import MAX_BODY, ModelServer
from tests.test_model_sim import ask, client


@pytest.fixture
def open_model_sim(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    script = tmp_path / "replies.yaml"
    script.write_text("- reply: fine\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "remote", "model-sim", "--script", str(script), "--port", "0",
                             "--host", "0.0.0.0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    assert proc.stdout is not None
    header = "".join(proc.stdout.readline() for _ in range(8))
    found = re.search(r"CUSTOM_LLM_BASE_URL=http://0\.0\.0\.0:(\d+)/v1", header)
    assert found, header
    yield proc, int(found.group(1))
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def _request_head(port: int, length: int) -> bytes:
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def _first_line(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0]


def test_model_sim_on_all_interfaces_warns_and_bounds_bodies_and_connections(open_model_sim):
    proc, port = open_model_sim
    url = f"http://127.0.0.1:{port}/v1"
    assert ask(client(url), "plan", "hello") == "fine"
    # A 60 MB body is refused from its headers alone: the server neither waits for it nor holds it.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(_request_head(port, 60_000_000))
        assert _first_line(sock).startswith(b"HTTP/1.1 413 ")
    # Connections that send nothing take at most MAX_CONNECTIONS threads; the next caller is told 503 at once.
    stalled = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.5)    # the server has accepted them all
        started = time.monotonic()
        with pytest.raises(openai.InternalServerError) as err:
            ask(client(url), "plan", "hello")
        assert err.value.status_code == 503 and time.monotonic() - started < 5
    finally:
        for sock in stalled:
            sock.close()
    deadline = time.monotonic() + 10
    while True:   # their threads end as they close: served again
        try:
            assert ask(client(url), "plan", "hello") == "fine"
            break
        except openai.InternalServerError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    proc.terminate()
    _, err = proc.communicate(timeout=10)
    assert "warning: model-sim listens on 0.0.0.0" in err and "checks no key" in err


def test_a_stalled_connection_is_let_go_and_kept_bodies_are_bounded_in_bytes():
    with ModelServer(idle_timeout=0.5, keep_bytes=1_000_000) as server:
        server.rules(Rule(reply="ok"))
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(_request_head(port, 1000)[:-10])      # half a request, then silence
            started = time.monotonic()
            assert sock.recv(100) == b""                         # closed by the server
            assert time.monotonic() - started < 5
        c = client(server.url)
        for i in range(5):                                       # 5 x 400 kB: only the newest two fit 1 MB
            assert ask(c, "plan", f"{i}" + "x" * 400_000) == "ok"
        assert [r.text[len("purpose: plan\n")] for r in server.requests] == ["3", "4"]
        assert sum(r.size for r in server.requests) <= 1_000_000
    assert MAX_BODY <= 16 * 1024 * 1024
