"""The tools that involve the person: the allow list, teach mode, and the whole-task runner.

`request_access` and `teach_step` ask through a ``Resolve``d parameter, which the
SDK carries on every protocol revision (a mid-call request up to 2025-11-25, an
``InputRequiredResult`` round on 2026-07-28). `teach_batch` and the runner's
confirmations ask from inside a running call, which needs a mid-call channel.
The tools reach the session through the server's lifespan context.
"""

from __future__ import annotations

from typing import Annotated, Any, cast

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    Image,
    MCPServer,
    Resolve,
)
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from remote.errors import ActionError
from remote.mcp import tasks, teach
from remote.mcp.access import resolve_app
from remote.mcp.asking import Approval, TeachNext, client_can_elicit
from remote.mcp.calls import Caller

TEACH_WAIT_S = 600.0
NO_ELICITATION = ("teach mode shows the person each step and waits for their 'next', which needs a client that "
                  "supports elicitation (Claude Code 2.1.76+, Cursor, VS Code; not Claude Desktop so far)")


class TeachStep(BaseModel):
    text: str = Field(description="the instruction for the person")
    target: str | None = Field(default=None, description="what to point at, as a target_ref (text:发送)")


def caller(ctx: Context) -> Caller:
    """The session's caller, which the server's lifespan put in every request context."""
    return cast(Caller, ctx.request_context.lifespan_context)


def _packages(ctx: Context, apps: list[str]) -> list[str]:
    registry = caller(ctx).session.registry
    try:
        return [resolve_app(a, registry) for a in apps]
    except ActionError as exc:
        raise ToolError(f"{exc.message} (hint: {exc.hint})") from exc


def ask_access(apps: list[str], reason: str, ctx: Context) -> Any:
    gate = caller(ctx).session.gate
    need = [p for p in _packages(ctx, apps) if not gate.allows(p)]
    if not need or not client_can_elicit(ctx):
        return Approval(allow=True)     # nothing to ask, or nobody to ask (the result says which)
    why = f"\nReason given: {reason}" if reason else ""
    return Elicit(f"Allow the AI agent to control these apps on your phone for this session: "
                  f"{', '.join(need)}?{why}", Approval)


async def request_access(ctx: Context, apps: Annotated[list[str], Field(min_length=1, description=(
        "apps to work in: names (微信, 设置) or packages (com.tencent.mm)"))],
        answer: Annotated[ElicitationResult[Approval], Resolve(ask_access)], reason: str = "") -> str:
    """Ask to act in these apps for this session. Every acting tool refuses while an app that is not allowed is
    in front (the home screen and system dialogs are always allowed). The person is asked when the client
    supports elicitation."""
    session = caller(ctx).session
    packages = _packages(ctx, apps)
    need = [p for p in packages if not session.gate.allows(p)]
    if not need:
        return f"already allowed: {', '.join(packages)}"
    if not isinstance(answer, AcceptedElicitation) or not answer.data.allow:
        raise ToolError(f"the person did not allow {', '.join(need)}; acting there stays refused")
    session.gate.grant(need)
    asked = "the person allowed it" if client_can_elicit(ctx) else \
        "not confirmed by a person: this client cannot ask (no elicitation)"
    return f"allowed for this session: {', '.join(need)} ({asked}); allowed now: {', '.join(sorted(session.gate.allowed))}"


async def ask_teach(text: str, target: str | None, ctx: Context) -> Any:
    if not client_can_elicit(ctx):
        raise ToolError(NO_ELICITATION)
    lesson = await caller(ctx).run(lambda: teach.pending_lesson(caller(ctx).session, text, target))
    return Elicit(lesson.message(), TeachNext)


async def teach_step(ctx: Context, text: Annotated[str, Field(description="the instruction for the person")],
                     answer: Annotated[ElicitationResult[TeachNext], Resolve(ask_teach)],
                     target: Annotated[str | None, Field(description="what to point at (text:发送)")] = None,
                     ) -> list[Any]:
    """Show the person one instruction with the screen annotated, and wait until they press next."""
    session = caller(ctx).session
    lesson = session.teach_pending.pop(teach.lesson_key(text, target), None)
    done = isinstance(answer, AcceptedElicitation)
    said = "the person did it and pressed next" if done else "the person stopped the lesson here"
    parts: list[Any] = [f"{said}: {text}"]
    if lesson is not None:
        parts = [Image(data=lesson.jpeg, format="jpeg"), f"{said}: {text}\n{lesson.where}".rstrip()]
    return parts


async def teach_batch(ctx: Context, steps: Annotated[list[TeachStep], Field(min_length=1, max_length=20)]) -> str:
    """Several teach steps in turn, each shown and waited for (needs a client that can be asked mid-call)."""
    calls = caller(ctx)
    if not client_can_elicit(ctx):
        raise ToolError(NO_ELICITATION)
    asker = calls.asker(ctx)
    specs = [s.model_dump() for s in steps]
    lines = await calls.run(lambda: teach.teach_batch(calls.session, asker, specs),
                            timeout=TEACH_WAIT_S * len(steps), hold=False)
    return "\n".join(lines)


async def run_task(ctx: Context, task: Annotated[str, Field(description="one sentence: 给张三发微信消息说你好")],
                   max_seconds: Annotated[float, Field(ge=10, le=1800)] = 300.0) -> str:
    """Run a whole task with remote's runner: task templates first (free), a model when one is configured.
    Steps arrive as progress notifications; sensitive steps ask the person (refused if they cannot be asked);
    the result names the run record."""
    calls = caller(ctx)
    asker, progress = calls.asker(ctx), calls.progress(ctx)
    return await calls.run(lambda: tasks.run_task(calls.session, asker, task, progress, max_seconds),
                           timeout=max_seconds + 60)


def register_people_tools(app: MCPServer) -> None:
    for fn in (request_access, teach_step, teach_batch, run_task):
        app.add_tool(fn, structured_output=False)
