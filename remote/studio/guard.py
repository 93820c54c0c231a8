"""Who may talk to the studio: loopback by default, a token beyond it, Host/Origin checked, bodies bounded.

As ``remote mcp --http``: any address other than loopback needs a token of at
least `MIN_TOKEN_CHARS` characters (``REMOTE_STUDIO_TOKEN``); scripts send
``Authorization: Bearer <token>``, a browser opens ``/?token=<token>`` once and
keeps it in a SameSite=Strict, HttpOnly cookie. On loopback the Host and Origin
headers are checked on every request with the MCP SDK's own middleware (a page
elsewhere that rebinds its name to 127.0.0.1 gets 421 / 403); beyond loopback an
Origin must be the studio's own. Every POST must say it is JSON (a cross-site
form cannot), and a body over `MAX_BODY_BYTES` is refused before it is read.
Every answer carries a Content-Security-Policy (`CSP`) that allows the page's own
script file and nothing inline: no ``<script>`` in a record's text, no ``onerror=``
attribute, no ``javascript:`` URL can run, even where a string were ever inserted
as HTML (the page inserts none: issue 34).
"""

from __future__ import annotations

import hmac
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from remote.mcp import server
from remote.mcp.server import is_loopback

TOKEN_ENV = "REMOTE_STUDIO_TOKEN"
MAX_BODY_BYTES = 256 * 1024        # a step, a template, a point: a few kB
COOKIE = "remote_studio"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; font-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer")]


def check_token(host: str, token: str | None) -> None:
    """A ConfigError when ``host`` is not loopback and the token is missing or too short (as for MCP)."""
    server.check_token(host, token, env=TOKEN_ENV, serving="serving the studio", needs="a token",
                       then="then open /?token=<it> once")


loopback_settings = server.loopback_security   # Host/Origin for a loopback address however it is spelt


class Guard:
    """ASGI middleware applying the rules above to every request."""

    def __init__(self, app: ASGIApp, *, host: str, token: str | None) -> None:
        self.app = app
        self.token = token
        self.loopback = is_loopback(host)
        self.checks = TransportSecurityMiddleware(loopback_settings(host) if self.loopback else None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        refused = await self._refused(request)
        if refused is not None:
            refused.headers.update({k.decode(): v.decode() for k, v in HEADERS})
            await refused(scope, receive, send)
            return
        given = request.query_params.get("token")
        extra = list(HEADERS)
        if given is not None and self.token and _same(given, self.token):
            extra.append((b"set-cookie", f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode("latin-1")))

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).extend(extra)
            await send(message)
        await self.app(scope, receive, with_headers)

    async def _refused(self, request: Request) -> Response | None:
        posting = request.method in ("POST", "PUT", "DELETE")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            return _error(413, f"request body over {MAX_BODY_BYTES // 1024} kB", "send a step, not a file")
        answer = await self.checks.validate_request(request, is_post=posting and request.method != "DELETE")
        if answer is not None:
            return _error(answer.status_code, bytes(answer.body).decode("utf-8", "replace"),
                          "open the studio at the address it printed; POST bodies are JSON")
        if not self.loopback and request.headers.get("origin") not in (None, _own_origin(request)):
            return _error(403, "Invalid Origin header", "open the studio at the address it printed")
        if self.token and not self._authorised(request):
            return _error(401, "a token is needed", "send 'Authorization: Bearer <token>', or open /?token=<token>")
        return None

    def _authorised(self, request: Request) -> bool:
        assert self.token is not None
        bearer = request.headers.get("authorization", "")
        candidates = [bearer[7:] if bearer.lower().startswith("bearer ") else "",
                      request.cookies.get(COOKIE, ""), request.query_params.get("token", "")]
        return any(c and _same(c, self.token) for c in candidates)


def _own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def _error(status: int, message: str, hint: str) -> Response:
    return JSONResponse({"error": message, "hint": hint}, status_code=status)
