"""The tools that involve the person: the allow list, teach mode, and the whole-task runner.

`request_access` and `teach_step` ask through a ``Resolve``d parameter, which the
SDK carries on every protocol revision (a mid-call request up to 2025-11-25, an
``InputRequiredResult`` round on 2026-07-28). `teach_batch` and the runner's
confirmations ask from inside a running call, which needs a mid-call channel.
The tools reach the caller through the server's lifespan context, and their
session through it (`Caller.session_for`).

A grant is the person's answer, kept by the MCP session it was asked in and by
no other. It is not given when nobody could be asked (an agent does not grant
itself apps) nor on a request without a session (2026-07-28), where it could not
outlive the call; the operator's ``--allow`` list serves those.
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
from remote.mcp import learn, tasks, teach
from remote.mcp.access import resolve_app
from remote.mcp.asking import REASON_CHARS, TEACH_CHARS, Approval, TeachNext, bounded, client_can_elicit
from remote.mcp.calls import Caller, session_key

TEACH_WAIT_S = 600.0
NO_ELICITATION = ("teach mode shows the person each step and waits for their 'next', which needs a client that "
                  "supports elicitation (Claude Code 2.1.76+, Cursor, VS Code; not Claude Desktop so far)")


class TeachStep(BaseModel):
    text: str
    target: str | None = None


def caller(ctx: Context) -> Caller:
    """The server's caller, which the server's lifespan put in every request context."""
    return cast(Caller, ctx.request_context.lifespan_context)


def _packages(ctx: Context, apps: list[str]) -> list[str]:
    registry = caller(ctx).session.registry
    try:
        return [resolve_app(a, registry) for a in apps]
    except ActionError as exc:
        raise ToolError(f"{exc.message} (hint: {exc.hint})") from exc


def _no_grant(ctx: Context) -> str:
    """Why this request cannot be granted apps ("" when it can): no session to hold a grant, or nobody to ask."""
    if session_key(ctx) is None:
        return ("this connection has no MCP session (protocol 2026-07-28 requests stand alone), so a grant "
                "could not outlive this call")
    if not client_can_elicit(ctx):
        return "this client cannot ask the person (no elicitation), and an agent cannot grant itself apps"
    return ""


def ask_access(apps: list[str], reason: str, ctx: Context) -> Any:
    gate = caller(ctx).session_for(ctx).gate
    need = [p for p in _packages(ctx, apps) if not gate.allows(p)]
    if not need or _no_grant(ctx):
        return Approval(allow=not need)     # nothing to ask, or nobody to ask / nowhere to keep the answer
    why = f"\nReason given by the agent: {bounded(reason, REASON_CHARS)}" if reason.strip() else ""
    return Elicit(f"Allow the AI agent to control these apps on your phone for this MCP session only "
                  f"(until the agent disconnects): {', '.join(need)}?{why}", Approval)


async def request_access(ctx: Context, apps: Annotated[list[str], Field(min_length=1, max_length=20)],
                         answer: Annotated[ElicitationResult[Approval], Resolve(ask_access)],
                         reason: str = "") -> str:
    """Ask the person to let this session act in these apps (names or packages); other apps are refused."""
    session = caller(ctx).session_for(ctx)
    packages = _packages(ctx, apps)
    need = [p for p in packages if not session.gate.allows(p)]
    if not need:
        return f"already allowed in {session.scope}: {', '.join(packages)}"
    refused = _no_grant(ctx)
    if refused:
        raise ToolError(f"not allowed: {', '.join(need)}: {refused} (hint: the person can start the server with "
                        f"--allow {','.join(need)}, or connect with a client that supports elicitation and keeps "
                        "an MCP session)")
    if not isinstance(answer, AcceptedElicitation) or not answer.data.allow:
        raise ToolError(f"the person did not allow {', '.join(need)}; acting there stays refused")
    session.gate.grant(need)
    return (f"allowed for {session.scope} (the person allowed it; other sessions do not get it): "
            f"{', '.join(need)}; allowed now: {', '.join(sorted(session.gate.allowed))}")


async def ask_teach(text: str, target: str | None, ctx: Context) -> Any:
    if not client_can_elicit(ctx):
        raise ToolError(NO_ELICITATION)
    session = caller(ctx).session_for(ctx)
    lesson = await caller(ctx).run(lambda: teach.pending_lesson(session, text, target))
    return Elicit(lesson.message(), TeachNext)


async def teach_step(ctx: Context, text: str,
                     answer: Annotated[ElicitationResult[TeachNext], Resolve(ask_teach)],
                     target: Annotated[str | None, Field(description="what to mark, as a target_ref")] = None,
                     ) -> list[Any]:
    """Show the person one instruction on the annotated screen; returns when they press next."""
    session = caller(ctx).session_for(ctx)
    lesson = session.teach_pending.pop(teach.lesson_key(text, target), None)
    done = isinstance(answer, AcceptedElicitation)
    said = "the person did it and pressed next" if done else "the person stopped the lesson here"
    shown = bounded(text, TEACH_CHARS)
    parts: list[Any] = [f"{said}: {shown}"]
    if lesson is not None:
        parts = [f"{said}: {shown}\n{lesson.where}".rstrip()]
        if session.gate.allows(session.front().get("package", "")):   # an app not allowed is not shown
            parts.insert(0, Image(data=lesson.jpeg, format="jpeg"))
    return parts


async def teach_batch(ctx: Context, steps: Annotated[list[TeachStep], Field(min_length=1, max_length=20)]) -> str:
    """Several teach steps in turn (needs mid-call elicitation)."""
    calls = caller(ctx)
    if not client_can_elicit(ctx):
        raise ToolError(NO_ELICITATION)
    session, asker = calls.session_for(ctx), calls.asker(ctx)
    specs = [s.model_dump() for s in steps]
    lines = await calls.run(lambda: teach.teach_batch(session, asker, specs),
                            timeout=TEACH_WAIT_S * len(steps), hold=False)
    return "\n".join(lines)


async def run_task(ctx: Context, task: Annotated[str, Field(description="one sentence")],
                   max_seconds: Annotated[float, Field(ge=10, le=1800)] = 300.0) -> str:
    """Run a whole task with remote's runner (templates, else a model); progress per step."""
    calls = caller(ctx)
    session, asker, progress = calls.session_for(ctx), calls.asker(ctx), calls.progress(ctx)
    return await calls.run(lambda: tasks.run_task(session, asker, task, progress, max_seconds),
                           timeout=max_seconds + 60)


async def save_task(ctx: Context, task: str, check: Annotated[list[str] | None, Field(max_length=4)] = None,
                    slots: dict[str, str] | None = None) -> str:
    """Keep your acts since the last save/run_task as a task; check: target_refs the end shows."""
    calls = caller(ctx)
    session = calls.session_for(ctx)
    return await calls.run(lambda: learn.save_task(session, task, list(check or []), dict(slots or {})))


def register_people_tools(app: MCPServer) -> None:
    for fn in (request_access, teach_step, teach_batch, run_task, save_task):
        app.add_tool(fn, structured_output=False)
