"""JSON bodies read off the network: bounded in depth and in value, refused with a clear 400 otherwise.

Python's ``json.loads`` recurses once per nesting level (a 100,000-deep array is a
``RecursionError``, a 500 with a traceback in a web app) and takes ``NaN``,
``Infinity`` and ``-Infinity``, which are not JSON (RFC 8259 §6) and then compare
unequal to themselves everywhere downstream. `load_json` refuses both before and
while parsing: the nesting is counted on the raw text first (strings skipped), in
one pass with no recursion, and the constants are refused by ``parse_constant``.
The studio's routes read every body with it; ``remote mcp --http`` puts
`JsonBodyGuard` in front of the SDK's streamable HTTP app, so a tool's arguments
are held to the same rules (the SDK's own parser takes ``NaN``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from remote.errors import BadInput

MAX_DEPTH = 32                      # a step, a template, a tool call: a handful of levels
MAX_BYTES = 4 * 1024 * 1024         # the MCP SDK's own default cap on a request body
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


class BadJson(BadInput):
    """A body that is not JSON, or nests too deep, or holds NaN / Infinity."""


def depth_of(raw: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``raw``, brackets inside strings not counted (no recursion)."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub(b'""', raw)):
        depth += 1 if bracket in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest


def _no_constant(name: str) -> Any:
    raise BadJson(f"the body holds {name}, which is not a JSON number", hint="send finite numbers only")


def load_json(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``raw`` parsed as JSON; a `BadJson` (a BadInput: the caller's 400) when it is not JSON, nests deeper
    than ``max_depth`` or holds NaN / Infinity."""
    if depth_of(raw) > max_depth:
        raise BadJson(f"the body nests deeper than {max_depth} levels", hint="a request is a few levels deep")
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except BadJson:
        raise
    except (ValueError, RecursionError) as exc:
        raise BadJson(f"the body is not JSON: {exc}") from exc


class JsonBodyGuard:
    """ASGI middleware: a POST body with a JSON content type is read (at most `MAX_BYTES`), checked by
    `load_json`, and handed on unchanged; a bad one is answered as JSON-RPC's parse error (code -32700,
    HTTP 400), as the SDK answers a body it cannot parse."""

    def __init__(self, app: ASGIApp, *, max_depth: int = MAX_DEPTH) -> None:
        self.app = app
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or []) if scope["type"] == "http" else {}
        if scope["type"] != "http" or scope.get("method") != "POST" or b"json" not in headers.get(b"content-type", b""):
            await self.app(scope, receive, send)     # not a JSON body: the app says what it says of that
            return
        raw = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":       # the client went away
                await self.app(scope, _replay([message]), send)
                return
            raw += message.get("body", b"")
            more = bool(message.get("more_body"))
            if len(raw) > MAX_BYTES:
                await _parse_error(send, f"request body over {MAX_BYTES // (1024 * 1024)} MB", 413)
                return
        try:
            load_json(bytes(raw), max_depth=self.max_depth)
        except BadJson as exc:
            await _parse_error(send, f"Parse error: {exc.message}", 400)
            return
        await self.app(scope, _replay([{"type": "http.request", "body": bytes(raw), "more_body": False}], receive),
                       send)


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}
    return receive


async def _parse_error(send: Send, message: str, status: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
