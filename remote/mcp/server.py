"""The MCP server: one phone as tools for any agent, over stdio or streamable HTTP.

``build_server(session)`` registers the tools on an `MCPServer` (the official
SDK); ``serve_stdio`` and ``serve_http`` run it. Over HTTP a bearer token is
checked with the SDK's own bearer middleware (a constant-time comparison with
the configured token); it is required for any address other than loopback.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
from collections.abc import AsyncIterator

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl

from remote import __version__
from remote.errors import ConfigError
from remote.mcp.calls import Caller
from remote.mcp.session import Session
from remote.mcp.tools_device import DeviceTools
from remote.mcp.tools_people import register_people_tools

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
Drive one Android phone. Start with request_access(apps=[...]) for the apps you will work in (acting in any \
other app is refused), then screenshot: it returns a downscaled image and a numbered list of GUI elements. \
Every coordinate you send is in the last screenshot's pixels; element numbers refer to its list. Instead of \
coordinates you can name a target with target_ref (text:张三, desc:搜索, id:chat_input); the reply says which \
tier found it and how sure it was. type handles Chinese and emoji. batch runs several actions in one call and \
says whether each changed the screen. run_task runs a whole sentence with remote's own runner. \
teach_step guides the person instead of acting."""


class StaticToken:
    """The SDK's TokenVerifier for one fixed bearer token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token="configured", client_id="remote-mcp", scopes=[])
        return None


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
    app = MCPServer("remote", instructions=INSTRUCTIONS, version=__version__, lifespan=lifespan,
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


def serve_http(session: Session, address: str, token: str | None) -> None:
    host, port = parse_address(address)
    if not token and not is_loopback(host):
        raise ConfigError(f"serving on {host} (not loopback) needs a bearer token",
                          hint="set REMOTE_MCP_TOKEN to a long random secret; clients send "
                               "'Authorization: Bearer <token>'")
    shown = f"[{host}]" if ":" in host else host
    app = build_server(session, token=token, base_url=f"http://{shown}:{port}")
    logger.warning("MCP over streamable HTTP at http://%s:%d/mcp%s", shown, port,
                   " (bearer token required)" if token else "")
    anyio.run(lambda: app.run_streamable_http_async(host=host, port=port))
