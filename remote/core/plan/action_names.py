"""The words a plan may use for an action (pure): ActionName's own values, the synonyms models and people write
(``click``, ``type``, ``scroll`` ...) and Maestro's command names, each read as one of ours."""

from __future__ import annotations

from typing import Any

from remote.core.plan.actions import ActionName

ACTION_SYNONYMS: dict[str, str] = {
    "click": "tap", "press": "tap", "touch": "tap", "tap_element": "tap", "select": "tap",
    "long_click": "long_press", "longpress": "long_press", "long_tap": "long_press", "hold": "long_press",
    "scroll": "swipe", "fling": "swipe", "drag": "swipe",
    "type": "input_text", "input": "input_text", "enter_text": "input_text", "type_text": "input_text",
    "text": "input_text", "send_keys": "input_text",
    "key": "press_key", "keyevent": "press_key", "press_button": "press_key", "back": "press_key",
    "go_back": "press_key",
    "home": "go_home", "go_to_home": "go_home",
    "sleep": "wait", "pause": "wait", "delay": "wait",
    "launch": "launch_app", "open_app": "launch_app", "start_app": "launch_app",
    "open_link": "open_url", "open_browser": "open_url", "browse": "open_url",
    "dial": "call", "phone_call": "call",
    "done": "finish", "complete": "finish", "end": "finish", "stop": "finish",
    "takeover": "take_over", "ask_user": "take_over", "call_user": "take_over",
    # Maestro's command names, for people (and models) who know them
    "assertvisible": "assert_visible", "assertnotvisible": "assert_not_visible", "extendedwaituntil": "wait_until",
    "wait_for": "wait_until", "scrolluntilvisible": "scroll_until_visible", "runflow": "run",
    "copytextfrom": "extract", "read": "extract",
}


def normalize_action(value: Any) -> str | None:
    """``"Click"`` -> ``"tap"``; ``None`` when it is not an action we know."""
    if not isinstance(value, str):
        return None
    name = value.strip().lower().replace("-", "_").replace(" ", "_")
    name = ACTION_SYNONYMS.get(name, name)
    return name if name in ActionName._value2member_map_ else None
