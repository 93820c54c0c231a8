"""How every tool call runs: in a worker thread, on a held phone, under a deadline, errors as tool errors.

A call that the phone does not answer in time ends with a tool error naming the
timeout (the worker thread is abandoned; the next call waits for the phone a
bounded time, then says the phone is busy). `remote`'s own errors come back as
tool errors with their hint; anything else is logged with its traceback and
reported as an internal error, never as a crash of the server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from remote.errors import DeviceError, RemoteError
from remote.mcp.asking import Asker
from remote.mcp.session import Session

logger = logging.getLogger(__name__)
T = TypeVar("T")

ACT_TIMEOUT = 120.0

X = Annotated[float | None, Field(description="x in pixels of the last screenshot (give y too)")]
Y = Annotated[float | None, Field(description="y in pixels of the last screenshot (give x too)")]
ElementNo = Annotated[int | None, Field(ge=1, description="an element number from the last screenshot's list")]
TargetRef = Annotated[str | None, Field(description=(
    "what to find on the current screen instead of coordinates: text:张三, desc:搜索, id:chat_input, a "
    "reference image name (send_button, wechat), or dynamic:描述 (needs a vision model). The reply says "
    "which tier found it (tree, template, ocr, vision) and with what confidence."))]


class Point(BaseModel):
    """One place, named one way: x and y (last screenshot's pixels), or element, or target_ref."""

    x: X = None
    y: Y = None
    element: ElementNo = None
    target_ref: TargetRef = None


def describe_error(exc: RemoteError) -> str:
    text = exc.message
    if isinstance(exc, DeviceError) and "lost the connection" in exc.message:
        text = f"the phone is not reachable: {exc.message}"
    return f"{text} (hint: {exc.hint})" if exc.hint else text


class Caller:
    """Runs tool bodies for one session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    async def run(self, fn: Callable[[], T], *, timeout: float = ACT_TIMEOUT, hold: bool = True) -> T:
        """``fn()`` in a worker thread (holding the phone when ``hold``), within ``timeout`` seconds."""
        session = self.session

        def work() -> T:
            if not hold:
                return fn()
            with session.busy():
                return fn()

        try:
            with anyio.fail_after(timeout):
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except TimeoutError:
            raise ToolError(f"timed out after {timeout:g} s: the phone did not finish in time (hint: check the "
                            "phone's connection and screen; the next call waits for it)") from None
        except RemoteError as exc:
            raise ToolError(describe_error(exc)) from exc
        except ToolError:
            raise
        except Exception as exc:  # the tool boundary: a bug must come back as a tool error, not kill the server
            logger.exception("tool body failed")
            raise ToolError(f"internal error: {type(exc).__name__}: {exc} (the server log has the traceback)") \
                from exc

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
