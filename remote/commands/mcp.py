"""`remote mcp`: serve the phone as MCP tools, on stdio (the default) or streamable HTTP.

    python -m remote mcp --device sim                     # stdio, for Claude Desktop / Code, Cursor
    python -m remote mcp --device SERIAL --http 127.0.0.1:8765
    REMOTE_MCP_TOKEN=... python -m remote mcp --http 0.0.0.0:8765   # any other address needs a token (16+ chars)

stdout belongs to the protocol on stdio: everything else goes to stderr.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from remote.apps import ModuleRegistry
from remote.commands import _learned
from remote.commands._device import open_device
from remote.commands._modules import registry as module_registry
from remote.config import LLMConfig
from remote.errors import ActionError, ConfigError
from remote.mcp.access import AccessGate, resolve_app
from remote.mcp.server import check_token, parse_address, serve_http, serve_stdio
from remote.mcp.session import Session, SessionOptions

TOKEN_ENV = "REMOTE_MCP_TOKEN"


def run(args: Any) -> int:
    token = os.environ.get(TOKEN_ENV, "").strip() or None
    if args.http:                    # a bad address or a missing/short token fails before the phone is opened
        host, _port = parse_address(args.http)
        check_token(host, token)
    registry = module_registry()
    gate = AccessGate(_allowed(args.allow, registry))
    with open_device(args, lock=True) as (adb, sim):
        session = Session(adb, registry=registry, llm=LLMConfig.from_env(), gate=gate, phone=sim,
                          options=_options(args))
        if args.http:
            serve_http(session, args.http, token)
        else:
            serve_stdio(session)
    return 0


def _options(args: Any) -> SessionOptions:
    options = SessionOptions(runs_dir=args.runs_dir or None, learned=_learned.store(args),
                             learn=not args.no_learn)
    if args.work_dir:
        options.work_dir = Path(args.work_dir)
    return options


def _allowed(spec: str | None, registry: ModuleRegistry) -> list[str]:
    """``--allow 微信,com.android.settings`` pre-approves apps; ``--allow '*'`` turns the gate off."""
    names = [n.strip() for n in (spec or "").split(",") if n.strip()]
    try:
        return ["*" if n == "*" else resolve_app(n, registry) for n in names]
    except ActionError as exc:
        raise ConfigError(f"--allow: {exc.message}", hint=exc.hint) from exc
