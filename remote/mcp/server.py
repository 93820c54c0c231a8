"""The MCP server: one phone as tools for any agent, over stdio or streamable HTTP.

``build_server(session)`` registers the tools on an `MCPServer` (the official
SDK); ``serve_stdio`` and ``serve_http`` run it. Over HTTP a bearer token is
checked with the SDK's own bearer middleware (a constant-time comparison with
the configured token); it is required for any address other than loopback, and
must be at least `MIN_TOKEN_CHARS` long. Without a token, the Host and Origin
headers are checked on every loopback address however it is spelt (127.0.0.2,
``[0:0:0:0:0:0:0:1]``), not only on the three spellings the SDK knows: a web
page that rebinds its own name to the loopback address gets 421 (Host) or 403
(Origin), as on 127.0.0.1. Every JSON body is parsed with a depth limit and
finite numbers first (`remote.mcp.bodies`).

The tool list is an agent's fixed cost on every turn, so its schemas are sent
compact (`compact_schema`): no titles, no ``null`` alternatives for optional
arguments; what the arguments mean is said once, in `INSTRUCTIONS`.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl

from remote import __version__
from remote.errors import ConfigError
from remote.mcp.bodies import JsonBodyGuard
from remote.mcp.calls import Caller
from remote.mcp.session import Session
from remote.mcp.tools_device import DeviceTools
from remote.mcp.tools_people import register_people_tools

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
Drive one Android phone. Start with request_access(apps=[...]) for the apps you will work in (acting in any \
other app is refused; the home screen and system dialogs are always allowed), then screenshot: a downscaled \
image and a numbered list of GUI elements. Name a place one way: x+y in the last screenshot's pixels, element \
(a number from its list), or target_ref: text:张三, desc:搜索, id:chat_input, a reference image name \
(send_button), or dynamic:描述 (needs a vision model); replies say which tier found it and how sure it was. \
max_side sets the image size for this and later calls. Taps on pay/transfer/delete targets ask the person. \
type handles Chinese and emoji. batch runs several actions and says whether each changed the screen. \
run_task runs a whole sentence with remote's own runner (a learned task with no model). After a task you did with these tools, and a wait_for that saw it done, save_task(task=the sentence) keeps it: next time run_task replays it with no model. teach_step guides the person instead of acting."""
MIN_TOKEN_CHARS = 16


class StaticToken:
    """The SDK's TokenVerifier for one fixed bearer token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token="configured", client_id="remote-mcp", scopes=[])
        return None


class PhoneServer(MCPServer):
    """The SDK's server, listing its tools with compact schemas."""

    async def list_tools(self) -> list[mcp_types.Tool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"input_schema": compact_schema(t.input_schema)}) for t in tools]


def compact_schema(schema: Any) -> Any:
    """A JSON schema without what a model does not need: ``title``s, and the ``null`` alternative (and its
    ``default: null``) of an argument that may be left out anyway. The arguments are still validated by
    the full model on the server.

    >>> compact_schema({"title": "tapArguments", "properties": {"x": {"anyOf": [{"type": "number"},
    ...     {"type": "null"}], "default": None, "title": "X"}}})
    {'properties': {'x': {'type': 'number'}}}
    """
    if isinstance(schema, list):
        return [compact_schema(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact_schema(v) for k, v in schema.items()
           if k != "title" and not (k == "additionalProperties" and v is True)}
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        out.pop("anyOf")
        out.update(next(o for o in options if o != {"type": "null"}))
        if out.get("default", 0) is None:
            out.pop("default")
    return out


def build_server(session: Session, *, token: str | None = None, base_url: str | None = None) -> MCPServer:
    calls = Caller(session)

    @contextlib.asynccontextmanager
    async def lifespan(_app: MCPServer) -> AsyncIterator[Caller]:
        yield calls

    auth = verifier = None
    if token:
        url = base_url or "http://127.0.0.1"
        auth = AuthSettings(issuer_url=AnyHttpUrl(url), resource_server_url=AnyHttpUrl(f"{url}/mcp"),
                            validate_token_resource=False)
        verifier = StaticToken(token)
    app = PhoneServer("remote", instructions=INSTRUCTIONS, version=__version__, lifespan=lifespan,
                    log_level="WARNING", auth=auth, token_verifier=verifier)
    DeviceTools(calls).register(app)
    register_people_tools(app)
    return app


def serve_stdio(session: Session) -> None:
    anyio.run(build_server(session).run_stdio_async)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_address(address: str) -> tuple[str, int]:
    """``127.0.0.1:8765`` -> ("127.0.0.1", 8765); ``[::1]:8765`` works too."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host or not 0 < int(port) < 65536:
        raise ConfigError(f"--http wants HOST:PORT, not {address!r}", hint="e.g. --http 127.0.0.1:8765")
    return host.strip("[]"), int(port)


def check_token(host: str, token: str | None, *, env: str = "REMOTE_MCP_TOKEN", serving: str = "serving",
                needs: str = "a bearer token", then: str = "clients send 'Authorization: Bearer <token>'") -> None:
    """Raise `ConfigError` when ``host`` is not loopback and the token (from ``env``) is missing or shorter
    than `MIN_TOKEN_CHARS`. The studio's guard asks the same, in its own words."""
    if is_loopback(host):
        return
    hint = f"set {env} to a long random secret (e.g. `openssl rand -hex 24`); {then}"
    if not token:
        raise ConfigError(f"{serving} on {host} (not loopback) needs {needs}", hint=hint)
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{env} has only {len(token)} character(s); {serving} on {host} (not loopback) needs "
                          f"at least {MIN_TOKEN_CHARS}", hint=hint)


def loopback_security(host: str) -> TransportSecuritySettings:
    """Host/Origin checks for a loopback address however it is spelt: the SDK's own list (127.0.0.1,
    localhost, [::1]) plus the address bound and its canonical spelling."""
    names = {"127.0.0.1", "localhost", "[::1]"}
    if host != "localhost":
        ip = ipaddress.ip_address(host.strip("[]"))
        names |= {f"[{host}]" if ip.version == 6 else host, f"[{ip}]" if ip.version == 6 else str(ip)}
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=sorted(f"{n}:*" for n in names),
                                     allowed_origins=sorted(f"http://{n}:*" for n in names))


def serve_http(session: Session, address: str, token: str | None) -> None:
    host, port = parse_address(address)
    check_token(host, token)
    shown = f"[{host}]" if ":" in host else host
    app = build_server(session, token=token, base_url=f"http://{shown}:{port}")
    security = loopback_security(host) if is_loopback(host) else None
    logger.warning("MCP over streamable HTTP at http://%s:%d/mcp%s", shown, port,
                   " (bearer token required)" if token else "")
    # the SDK's run_streamable_http_async, with every JSON body held to depth and finite numbers first
    web = JsonBodyGuard(app.streamable_http_app(transport_security=security, host=host))
    server = uvicorn.Server(uvicorn.Config(web, host=host, port=port, log_level=app.settings.log_level.lower()))
    anyio.run(server.serve)
