"""Asking the person behind the agent: MCP elicitation, from inside a running tool.

A tool runs in a worker thread; `Asker` carries the request's context there and
asks through ``ctx.elicit`` on the event loop. That needs a client that declared
elicitation and a connection that can carry a request in the middle of a call
(every MCP revision up to 2025-11-25, which is what Claude Desktop, Claude Code
and Cursor speak; on 2026-07-28 connections questions travel as
``InputRequiredResult`` instead, which `request_access` and `teach_step` use).
When the person cannot be asked, the answer is "no": a sensitive step is
refused, never silently allowed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import anyio.from_thread
from mcp.server.mcpserver import AcceptedElicitation, Context
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from remote.apps import ModuleRegistry
from remote.core.plan.sensitivity import BUILTIN_WORDS, normalize
from remote.mcp.access import AccessDenied

logger = logging.getLogger(__name__)


REASON_CHARS = 300          # a request_access reason shown to the person
TEACH_CHARS = 500           # one teach instruction shown to the person


def bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut: what a person is shown stays readable.

    >>> bounded("x" * 12, 5)
    'xxxxx … [7 more characters not shown]'
    """
    text = (text or "").strip()
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … [{len(text) - limit} more characters not shown]"


class Approval(BaseModel):
    allow: bool = Field(default=False, description="allow it")


class TeachNext(BaseModel):
    done: bool = Field(default=True, description="I did this step: show the next one")


def client_can_elicit(ctx: Context | None) -> bool:
    if ctx is None:
        return False
    try:
        caps = ctx.client_capabilities
    except ValueError:   # no request context (a direct call in a unit test)
        return False
    return caps is not None and caps.elicitation is not None


class Asker:
    """``Asker(ctx).confirm("Step 3 pays 100 元. Go ahead?") -> True / False / None (could not ask)``."""

    def __init__(self, ctx: Context | None) -> None:
        self._ctx = ctx
        self.unavailable = "" if client_can_elicit(ctx) else "this MCP client does not support elicitation"

    @property
    def can_ask(self) -> bool:
        return not self.unavailable

    def ask(self, message: str, schema: type[BaseModel]) -> Any:
        """The answer model when the person accepted, False when they declined, None when nobody could be asked.

        Call it from a worker thread (the tool's body).
        """
        if not self.can_ask or self._ctx is None:
            return None
        try:
            result = anyio.from_thread.run(self._ctx.elicit, message, schema)
        except MCPError as exc:   # NoBackChannelError on connections that forbid mid-call requests
            self.unavailable = f"the client cannot be asked during a call ({exc.message})"
            logger.info("elicitation unavailable: %s", exc)
            return None
        if isinstance(result, AcceptedElicitation):
            return result.data
        return False

    def confirm(self, question: str) -> bool | None:
        answer = self.ask(question, Approval)
        if answer is None:
            return None
        return bool(answer is not False and answer.allow)


def sensitive_word(label: str, package: str, registry: ModuleRegistry) -> str:
    """The word that makes acting on ``label`` sensitive in ``package`` ("" when none does)."""
    words = list(BUILTIN_WORDS)
    for module in registry.modules.values():
        if module.package and module.package == package:
            words += list(module.sensitive)
    # the same comparison as the runner's: Traditional -> Simplified, full width -> half width
    low = normalize(label or "")
    return next((w for w in words if w and normalize(w) in low), "")


def asks_when_unknown(package: str, registry: ModuleRegistry, system: Iterable[str]) -> bool:
    """Whether a touch on an element nothing vouches for needs a yes in ``package``: in every app with
    sensitive steps (its module lists sensitive words) and in every app no module describes; not on the
    system's own surfaces (home screen, status bar, permission dialogs)."""
    if not package or package in system:
        return not package
    modules = [m for m in registry.modules.values() if m.package == package]
    return not modules or any(m.sensitive for m in modules)


def confirm_sensitive(asker: Asker, label: str, package: str, registry: ModuleRegistry, doing: str, *,
                      words: str = "", unknown: bool = False, system: Iterable[str] = ()) -> str:
    """Ask before acting on a pay / transfer / delete target; '' when not sensitive, else a note for the report.

    ``label`` names the target in the question and the refusal; ``words`` (default: the label) are what
    is judged. ``unknown``: no element is known at the point; that needs a yes where `asks_when_unknown`.
    Raises `AccessDenied` when the person says no or cannot be asked.
    """
    word = sensitive_word(words or label, package, registry)
    if not word and unknown and asks_when_unknown(package, registry, system):
        word = "unknown target"
    if not word:
        return ""
    answer = asker.confirm(f"The agent wants to {doing} {label} in {package or 'an unknown app'} "
                           f"(sensitive: {word}). Allow it?")
    if answer is True:
        return f"sensitive ({word}): confirmed by the person"
    if answer is False:
        raise AccessDenied(f"the person did not allow this sensitive action ({word}: {doing} {label})")
    raise AccessDenied(f"{doing} {label} is sensitive ({word}) and needs a person's confirmation, but "
                       f"{asker.unavailable}",
                       hint="let the person do this step on the phone, or use a client that supports "
                            "elicitation (MCP 2025-11-25 clients ask in the middle of a call)")
