"""The studio's HTTP plumbing: a handler becomes a route, a body is read bounded, an error becomes its JSON.

Every body is read with `remote.mcp.bodies.load_json` (at most `MAX_BODY_BYTES`,
nesting at most `MAX_DEPTH` levels, no NaN or Infinity): what is not a bounded
JSON object is the request's fault, a 400 with ``{"error", "hint", "kind"}``,
never a 500. Handlers run in a worker thread: the page keeps its frames coming
while a step runs (or while the terminal asks the person about one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from remote.errors import ActionError, BadInput, DeviceError, LocateError, RemoteError, TaskError
from remote.mcp.bodies import load_json
from remote.studio.acting import Busy, NeedsYes, NoPhone
from remote.studio.guard import MAX_BODY_BYTES

MAX_DEPTH = 16           # a step with a block of steps in it is the deepest body the page sends


def endpoint(studio: Any, handler: Callable[[Any, Request, dict[str, Any]], Any]
             ) -> Callable[[Request], Awaitable[Response]]:
    async def call(request: Request) -> Response:
        try:
            body = await read_body(request) if request.method in ("POST", "PUT") else {}
            out = await run_in_threadpool(handler, studio, request, body)
        except RemoteError as exc:
            return failure(exc)
        return out if isinstance(out, Response) else JSONResponse(out)
    return call


STATUS: tuple[tuple[type[RemoteError], int], ...] = (
    (NeedsYes, 409), (Busy, 409), (NoPhone, 409), (BadInput, 400), (LocateError, 404), (ActionError, 400),
    (DeviceError, 502), (TaskError, 409), (RemoteError, 400))


def failure(exc: RemoteError) -> JSONResponse:
    status = next(code for kind, code in STATUS if isinstance(exc, kind))
    payload: dict[str, Any] = {"error": exc.message, "hint": exc.hint, "kind": type(exc).__name__}
    if isinstance(exc, NeedsYes):
        payload["needs_confirmation"] = exc.reasons
    return JSONResponse(payload, status_code=status)


async def read_body(request: Request) -> dict[str, Any]:
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise BadInput(f"request body over {MAX_BODY_BYTES // 1024} kB")
    if not raw:
        return {}
    data = load_json(bytes(raw), max_depth=MAX_DEPTH)
    if not isinstance(data, dict):
        raise BadInput("the body must be a JSON object")
    return data


def number(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise BadInput(f"{key} must be a number (device pixels), not {str(value)[:20]!r}")
    return int(value)


def whole(value: Any, what: str) -> int:
    try:
        return int(str(value))
    except ValueError as exc:
        raise BadInput(f"{what} must be a whole number, not {str(value)[:20]!r}") from exc
