"""Several actions in one call, each with the verifier's model-free "did the screen change" verdict.

``[{"action": "tap", "target_ref": "desc:搜索"}, {"action": "type", "text": "张三"}]`` runs in
order; the screen is compared before and after every action (`Verifier.classify`,
pixels only: no model), and the call ends with a fresh screenshot. With
``stop_on_error`` the first failure ends the batch; the rest are reported as
not run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from remote.errors import RemoteError
from remote.mcp import apps, clipboard, gestures, keys
from remote.mcp.asking import Asker
from remote.mcp.session import Session
from remote.mcp.shot import DEFAULT_MAX_SIDE, Shot

MAX_ACTIONS = 30
MAX_WAIT_S = 60.0


def _wait(session: Session, asker: Asker, seconds: float = 1.0) -> str:
    return wait(seconds)


def wait(seconds: float) -> str:
    s = max(0.0, min(float(seconds), MAX_WAIT_S))
    time.sleep(s)
    return f"waited {s:g} s"


ACTIONS: dict[str, Callable[..., str]] = {
    "tap": gestures.tap,
    "double_tap": gestures.double_tap,
    "long_press": gestures.long_press,
    "drag": gestures.drag,
    "scroll": gestures.scroll,
    "scroll_to": gestures.scroll_to,
    "type": keys.type_text,
    "key": lambda session, asker, **kw: keys.press_key(session, **kw),
    "open_app": lambda session, asker, **kw: apps.open_app(session, **kw),
    "stop_app": lambda session, asker, **kw: apps.stop_app(session, **kw),
    "open_url": lambda session, asker, **kw: apps.open_url(session, **kw),
    "wait": _wait,
    "wait_for": lambda session, asker, **kw: gestures.wait_for(session, **kw),
    "clipboard_write": lambda session, asker, **kw: clipboard.write(session, **kw),
}


def run_batch(session: Session, asker: Asker, actions: list[dict[str, Any]], stop_on_error: bool = True,
              settle_ms: int = 300, max_side: int = DEFAULT_MAX_SIDE) -> tuple[list[str], Shot]:
    """One line per action (``1. tap desc:搜索: ok, screen changed (12.3% of pixels)``) and the final screenshot."""
    if not actions:
        raise RemoteError("no actions given")
    if len(actions) > MAX_ACTIONS:
        raise RemoteError(f"{len(actions)} actions in one batch; at most {MAX_ACTIONS}")
    lines: list[str] = []
    before, _ = session.capture()
    for i, spec in enumerate(actions, 1):
        args = dict(spec)
        name = str(args.pop("action", ""))
        fn = ACTIONS.get(name)
        if fn is None:
            lines.append(f"{i}. {name or '?'}: error: unknown action (use one of {', '.join(ACTIONS)})")
            if stop_on_error:
                break
            continue
        try:
            detail = fn(session, asker, **args)
        except (RemoteError, TypeError, ValueError) as exc:
            lines.append(f"{i}. {name}: error: {exc}")
            if stop_on_error:
                lines += [f"{j}. {a.get('action', '?')}: not run" for j, a in enumerate(actions[i:], i + 1)]
                break
            continue
        time.sleep(max(0, min(settle_ms, 5000)) / 1000)
        after, _ = session.capture()
        verdict = session.verifier.classify(before, after)
        changed = "screen changed" if verdict.screen_changed else "screen unchanged"
        lines.append(f"{i}. {name}: ok, {changed} ({verdict.change_description}): {detail}")
        before = after
    return lines, session.screenshot(max_side=max_side)
