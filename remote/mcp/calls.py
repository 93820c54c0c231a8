"""How every tool call runs: for its MCP session, in a worker thread, on a held phone, under a deadline.

Sessions: a call is served by the `Session` of the MCP session it came in on
(stdio: the one connection; streamable HTTP up to 2025-11-25: its
``Mcp-Session-Id``), so one client's grants and screenshot never serve another.
A 2026-07-28 request carries no session at all: it is served by the server's
own session, which holds the operator's ``--allow`` list and takes no grants.

Deadlines: the body gets a `remote.mcp.deadline.Deadline`; when the call times
out (or the client cancels it) the deadline ends, and the body's loops and every
gated act stop at their next check, so the thread leaves the phone within a
poll interval instead of running on. `remote`'s own errors come back as tool
errors with their hint; anything else is logged with its traceback and reported
as an internal error, never as a crash of the server.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Annotated, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from remote.errors import DeviceDisconnected, RemoteError
from remote.mcp.asking import Asker
from remote.mcp.deadline import CallOver, Deadline, running
from remote.mcp.session import Session

logger = logging.getLogger(__name__)
T = TypeVar("T")

ACT_TIMEOUT = 120.0

# A place: x+y, element or target_ref. The server's instructions say what they mean, once for every tool.
X = Annotated[float | None, Field()]
Y = Annotated[float | None, Field()]
ElementNo = Annotated[int | None, Field(ge=1)]
TargetRef = Annotated[str | None, Field()]


class Point(BaseModel):

    x: X = None
    y: Y = None
    element: ElementNo = None
    target_ref: TargetRef = None


def describe_error(exc: RemoteError) -> str:
    text = exc.message
    if isinstance(exc, DeviceDisconnected):
        text = f"the phone is not reachable: {exc.message}"
    return f"{text} (hint: {exc.hint})" if exc.hint else text


class Caller:
    """Runs tool bodies; ``session`` is the server's own session (the operator's allow list)."""

    MAX_SESSIONS = 64       # sessions kept; the oldest is forgotten first (its grants with it)

    def __init__(self, session: Session) -> None:
        self.session = session
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def session_for(self, ctx: Context | None) -> Session:
        """The `Session` of the MCP session ``ctx`` came in on (the server's own one when it has none)."""
        key = session_key(ctx)
        if key is None:
            return self.session
        found = self._sessions.get(key)
        if found is None:
            found = self.session.fork("this MCP session only")
            self._sessions[key] = found
            while len(self._sessions) > self.MAX_SESSIONS:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        return found

    async def run(self, fn: Callable[[], T], *, timeout: float = ACT_TIMEOUT, hold: bool = True) -> T:
        """``fn()`` in a worker thread (holding the phone when ``hold``), within ``timeout`` seconds."""
        hub = self.session.hub
        limit = Deadline(timeout)

        def work() -> T:
            with running(limit):
                if not hold:
                    return fn()
                with hub.busy():
                    return fn()

        try:
            with anyio.fail_after(timeout):
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except (TimeoutError, CallOver):   # whichever noticed the deadline first: this side or the body
            raise ToolError(f"timed out after {timeout:g} s: the call's work was stopped (hint: give it less to "
                            "do, or check the phone's connection and screen)") from None
        except RemoteError as exc:
            raise ToolError(describe_error(exc)) from exc
        except ToolError:
            raise
        except Exception as exc:  # the tool boundary: a bug must come back as a tool error, not kill the server
            logger.exception("tool body failed")
            raise ToolError(f"internal error: {type(exc).__name__}: {exc} (the server log has the traceback)") \
                from exc
        finally:
            limit.end()          # timed out, cancelled or done: the body's loops stop at their next check

    @staticmethod
    def asker(ctx: Context | None) -> Asker:
        return Asker(ctx)

    @staticmethod
    def progress(ctx: Context | None) -> Callable[[float, float | None, str], None]:
        """A progress callback usable from the worker thread (a no-op without a request context)."""
        def report(done: float, total: float | None, message: str) -> None:
            if ctx is None:
                return
            try:
                anyio.from_thread.run(ctx.report_progress, done, total, message)
            except (RuntimeError, ValueError) as exc:   # no event loop to report to, or no request context
                logger.debug("progress not sent: %s", exc)
        return report


def session_key(ctx: Context | None) -> str | None:
    """Which MCP session a request belongs to: ``"stdio"`` for a connection without HTTP headers (one
    client), ``"http:<Mcp-Session-Id>"`` on streamable HTTP up to 2025-11-25 (the SDK has checked the id
    belongs to this client), None for a 2026-07-28 request (no session) or outside a request."""
    if ctx is None:
        return None
    try:
        version = ctx.protocol_version
        headers = ctx.headers
    except ValueError:          # no request context (a direct call in a unit test)
        return None
    if version is None or version in MODERN_PROTOCOL_VERSIONS:
        return None
    if headers is None:
        return "stdio"
    sid = headers.get("mcp-session-id")
    return f"http:{sid}" if sid else None
