"""Several actions in one call, each with the verifier's model-free "did the screen change" verdict.

``[{"action": "tap", "target_ref": "desc:搜索"}, {"action": "type", "text": "张三"}]`` runs in
order; the screen is compared before and after every action (`Verifier.classify`,
pixels only: no model), and the call ends with a fresh screenshot (at the
session's image size unless ``max_side`` says otherwise). With
``stop_on_error`` the first failure ends the batch; the rest are reported as
not run. The call's deadline is checked before every action and caps every
wait inside one: when it passes, the batch stops touching the phone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from remote.errors import RemoteError
from remote.mcp import apps, clipboard, deadline, gestures, keys
from remote.mcp.asking import Asker
from remote.mcp.deadline import CallOver
from remote.mcp.session import Session
from remote.mcp.shot import Shot

MAX_ACTIONS = 30
MAX_WAIT_S = 60.0


def _wait(session: Session, asker: Asker, seconds: float = 1.0) -> str:
    return wait(seconds)


def wait(seconds: float) -> str:
    s = max(0.0, min(float(seconds), MAX_WAIT_S))
    deadline.current().sleep(s)
    return f"waited {s:g} s"


ACTIONS: dict[str, Callable[..., str]] = {
    "tap": gestures.tap,
    "double_tap": gestures.double_tap,
    "long_press": gestures.long_press,
    "drag": gestures.drag,
    "scroll": gestures.scroll,
    "scroll_to": gestures.scroll_to,
    "type": keys.type_text,
    "key": lambda session, asker, **kw: keys.press_key(session, asker=asker, **kw),
    "open_app": lambda session, asker, **kw: apps.open_app(session, **kw),
    "stop_app": lambda session, asker, **kw: apps.stop_app(session, **kw),
    "open_url": lambda session, asker, **kw: apps.open_url(session, **kw),
    "wait": _wait,
    "wait_for": lambda session, asker, **kw: gestures.wait_for(session, **kw),
    "clipboard_write": lambda session, asker, **kw: clipboard.write(session, **kw),
}


def run_batch(session: Session, asker: Asker, actions: list[dict[str, Any]], stop_on_error: bool = True,
              settle_ms: int = 300, max_side: int | None = None) -> tuple[list[str], Shot]:
    """One line per action (``1. tap desc:搜索: ok, screen changed (12.3% of pixels)``) and the final screenshot."""
    if not actions:
        raise RemoteError("no actions given")
    if len(actions) > MAX_ACTIONS:
        raise RemoteError(f"{len(actions)} actions in one batch; at most {MAX_ACTIONS}")
    lines: list[str] = []
    before, _ = session.capture()
    for i, spec in enumerate(actions, 1):
        deadline.current().check()          # a batch past its deadline touches the phone no more
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
        except CallOver:
            raise
        except (RemoteError, TypeError, ValueError) as exc:
            lines.append(f"{i}. {name}: error: {exc}")
            if stop_on_error:
                lines += [f"{j}. {a.get('action', '?')}: not run" for j, a in enumerate(actions[i:], i + 1)]
                break
            continue
        deadline.current().sleep(max(0, min(settle_ms, 5000)) / 1000)
        after, _ = session.capture()
        verdict = session.verifier.classify(before, after)
        changed = "screen changed" if verdict.screen_changed else "screen unchanged"
        lines.append(f"{i}. {name}: ok, {changed} ({verdict.change_description}): {detail}")
        before = after
    deadline.current().check()
    return lines, session.screenshot(max_side=max_side)
