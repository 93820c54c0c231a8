"""What a planner's ``finish`` step claims, read from what its protocol says, never from its words.

The planner's protocol (``prompts/planner.txt``) ends a plan that gives up with
``{"action": "finish", "params": {"success": false, "message": "why"}}``; a ``finish`` that says neither
``success`` nor ``status`` ends a plan the model considers done. :func:`by_protocol` writes that reading into
each finish step as an explicit ``success`` before the plan is parsed, so the parser has a claim to read and
the message is only logged (a "没有找到" in a message that claims success is the model's prose, not its verdict).
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

SUCCEEDED = ("success", "successful", "succeeded", "done", "ok", "completed", "complete", "finished")


def claimed(params: dict[str, Any]) -> bool | None:
    """What a finish's ``params`` claim: its ``success`` flag, else its ``status``; None when they say neither."""
    flag = params.get("success")
    if isinstance(flag, bool):
        return flag
    if isinstance(flag, str) and flag.strip().lower() in ("true", "false"):
        return flag.strip().lower() == "true"
    status = str(params.get("status") or "").strip().lower()
    return status in SUCCEEDED if status else None


def by_protocol(data: Any) -> Any:
    """``data`` (a plan reply: an object with ``steps`` or a bare list) with each finish's claim made explicit."""
    steps = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(steps, list):
        return data
    for step in steps:
        if not isinstance(step, dict) or str(step.get("action", "")).strip().lower() != "finish":
            continue
        params = step.get("params")
        params = dict(params) if isinstance(params, dict) else {}
        success = claimed(params)
        if success is None:
            success = True
            said = params.get("message") or params.get("reason") or step.get("description") or ""
            logger.info("finish without a status: done, as the planner's protocol says (its words: %.200s)", said)
        params["success"] = success
        step["params"] = params
    return data
