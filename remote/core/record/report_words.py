"""What a run record says, in sentences a person reads (pure: dicts of run.json in, text out).

A record may come from an older version or be damaged: every reader here takes
what it finds (``get`` with defaults, types checked) and never raises on a
missing or odd field. Escaping is the HTML layer's job, not this one's.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from remote.core.plan.actions import ArgsError
from remote.core.plan.checks import parse_success_check

TIERS = {
    "tree": "in the UI tree", "ocr": "by reading the screenshot (OCR)", "template": "by its reference image",
    "multiscale": "by its reference image at another scale", "orb": "by image features (ORB)",
    "vision": "with the vision model", "fixed": "at the module's fixed point", "cache": "where it was a moment ago",
}
FAILURES = {
    "not_found": "a target was not found on the screen",
    "ambiguous": "a target matched several places equally well, and none was tapped",
    "not_interactable": "a target was found but could not be touched (off screen or covered)",
    "no_change": "a step changed nothing on the screen",
    "wrong_page": "a step led to a screen the plan did not expect",
    "text_not_typed": "the text could not be typed",
    "not_confirmed": "a sensitive step was not allowed",
    "no_person": "a step needed a person and nobody was there",
    "failure_screen": "the app showed a screen that means the task cannot succeed",
    "app_missing": "the app is not installed on this phone",
    "gave_up": "the plan gave up",
    "final_check": "every step ran, but the final screen is not what the plan promised",
    "invalid_plan": "the plan asked for something impossible",
    "step_cap": "the step limit was reached",
    "time_cap": "the time limit was reached",
    "budget": "the budget of model calls or tokens ran out",
    "interrupted": "the run was interrupted",
    "device": "the phone or its ADB link broke",
    "config": "the configuration is missing or wrong",
    "model": "a model call failed",
    "internal": "a bug in remote",
    "assertion": "a check in the middle of the task did not hold",
    "timeout": "what a step waited for never came",
    "not_read": "a value could not be read off the screen",
}
STATUS_WORDS = {"success": "Succeeded", "failed": "Failed", "aborted": "Stopped", "budget_exceeded": "Out of budget",
                "running": "Unfinished", "pending": "Unfinished", "planned": "Plan valid",
                "unchecked": "Done, not checked"}
UNFINISHED = ("the record was last written while the run was still going: the process was killed (kill -9, a "
              "crash, a power cut) or is still running; the steps below are those that had ended")


def answer_text(answer: Any) -> str:
    """A question task's answer for people: a text as it is, anything else as JSON (true, 37, ["a", "b"])."""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def d(value: Any) -> dict[str, Any]:
    """``value`` if it is a mapping, else an empty one (a damaged or older record)."""
    return value if isinstance(value, dict) else {}


def seq(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def num(value: Any) -> float | None:
    """A finite number, else None (bools, text, NaN and numbers too large for a float are not)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except OverflowError:
        return None
    return out if math.isfinite(out) else None


def short(value: Any, limit: int = 60) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def seconds(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def outcome(data: dict[str, Any]) -> tuple[str, str]:
    """The headline and the sentence under it: ``("Failed", "the app is not installed on this phone: …")``."""
    status = str(data.get("status") or "")
    head = STATUS_WORDS.get(status, status.replace("_", " ").capitalize() or "Unknown outcome")
    if data.get("dry_run") is True:
        head = f"Dry run: {head.lower()}"
    final, error = d(data.get("final_check")), short(data.get("error"), 400)
    if status in ("running", "pending"):
        return head, UNFINISHED
    if status == "planned":
        return head, "nothing was done on the phone: " + (short(final.get("summary"), 300) or "the plan is valid")
    if status == "unchecked":
        return head, short(final.get("summary"), 300) or "the template declares no final check"
    if status == "success":
        if final.get("passed") is True:
            return head, f"the final check passed: {short(final.get('summary'), 300)}"
        return head, short(final.get("summary"), 300) or "every step ran and was verified"
    failure = str(data.get("failure") or "")
    why = FAILURES.get(failure, "")
    if failure == "final_check" and final.get("summary"):
        error = short(final.get("summary"), 300)
    return head, ": ".join(p for p in (why, error) if p) or "no reason was recorded"


def check_words(check: Any) -> str:
    """A plan's ``success_check`` mapping as a line: ``app com.tencent.mm in front; 你好 on the screen``."""
    if not check:
        return "none declared"
    try:
        return parse_success_check(check).describe()
    except (ArgsError, TypeError, AttributeError):
        return short(check, 200)


def item_result(passed: Any) -> str:
    return "yes" if passed is True else "NO" if passed is False else "could not tell"


def target_name(target_ref: Any) -> str:
    """``text:发送`` -> ``发送``; ``id:com.tencent.mm:id/bkk`` -> ``the field bkk``; ``editable:`` -> ``the
    text field``; ``role:Button:发送`` -> ``the Button 发送``."""
    ref = str(target_ref or "")
    kind, _, value = ref.partition(":")
    if kind == "editable":
        return f"the text field {value}".strip() if value else "the text field"
    if kind == "role":
        role, _, label = value.partition(":")
        return f"the {role} {label}".strip()
    if not value:
        return ref or "the target"
    if kind in ("text", "desc", "dynamic"):
        return value
    if kind == "id":
        return f"the field {value.rsplit('/', 1)[-1]}"
    if kind in ("xy", "fixed"):
        return f"the point {value}"
    return ref


def _action_words(step: dict[str, Any], located: bool) -> str:
    params, action = d(step.get("params")), str(step.get("action") or "")
    text = short(params.get("text"), 40)
    what = {
        "tap": "tapped it" if located else f"tapped {target_name(step.get('target_ref'))}",
        "long_press": "long-pressed it" if located else f"long-pressed {target_name(step.get('target_ref'))}",
        "input_text": f"typed '{text}' into it" if located else f"typed '{text}'",
        "swipe": f"swiped {params.get('direction') or ''}".strip(),
        "launch_app": f"opened {params.get('package') or params.get('app') or params.get('name') or 'the app'}",
        "press_key": f"pressed {params.get('key') or 'a key'}", "wait": f"waited {params.get('ms', '')} ms",
        "go_home": "went to the phone's home screen", "back_to_home": "went back to the app's first screen",
        "open_url": f"opened {short(params.get('url'), 60)}", "call": f"called {params.get('number') or ''}",
        "take_over": "handed the phone to the person", "finish": "finished the plan",
        "assert_visible": "checked the screen", "assert_not_visible": "checked the screen",
        "wait_until": "waited", "scroll_until_visible": "scrolled", "extract": "read the screen",
        "run": f"ran {params.get('task') or 'its block of steps'}", "repeat": "repeated its steps",
        "retry": "tried its steps",
    }
    return what.get(action, action or "acted")


def located_words(step_result: dict[str, Any], loc: dict[str, Any]) -> str:
    """``found 发送 in the UI tree`` / ``looked for 蓝牙 in the UI tree, by reading ...: not found``."""
    step = d(step_result.get("step"))
    name = target_name(loc.get("matched_ref") or step.get("target_ref"))
    if loc.get("success"):
        tier = str(loc.get("method_used") or step_result.get("tier") or "")
        how = TIERS.get(tier.split("+")[0], f"by {tier}" if tier else "")
        chose = " (the model chose among look-alikes)" if tier.endswith("+vision") else ""
        return f"found {name} {how}{chose}".strip()
    tried = [TIERS.get(str(t), str(t)) for t in seq(loc.get("tiers_tried"))]
    where = " " + (", ".join(tried[:-1]) + " and " + tried[-1] if len(tried) > 1 else "".join(tried))
    why = short(step_result.get("error_message") or loc.get("error"), 200) or \
        str(loc.get("failure") or "not found").replace("_", " ")
    return f"looked for {name}{where.rstrip()}: {why}"


def check_after(step_result: dict[str, Any], change: str = "") -> str:
    """What the check after the step saw; ``change`` is what the UI tree gained (see :func:`tree_change`)."""
    v = d(step_result.get("verify_result"))
    if not v:
        return ""
    method, result, desc = str(v.get("method") or ""), str(v.get("outcome") or ""), short(v.get("change_description"), 120)
    if result == "no_change":
        return "nothing visible changed" if method == "pixel" else desc or "nothing changed"
    if method == "readback":
        text = short(d(d(step_result.get("step")).get("params")).get("text"), 40)
        return f"the field shows '{text}'" if result == "succeeded" else desc
    if method == "model":
        state = short(v.get("current_state") or v.get("change_description"), 160)
        return f"the model says: {state}" if state else "the model checked the screen"
    if result == "wrong_page":
        return "; ".join(p for p in ("it led to another screen", short(v.get("current_state"), 80),
                                     short(v.get("suggestion_detail"), 80)) if p)
    if result == "succeeded" or method != "pixel":
        return desc or "the check passed"
    return f"the screen changed: {change}" if change else "the screen changed"


def verdict(step_result: dict[str, Any], change: str = "") -> str:
    """One sentence for a step: ``found 发送 in the UI tree and tapped it; the screen changed: 你好 appeared``."""
    sr, step = step_result, d(step_result.get("step"))
    status = str(sr.get("status") or "")
    notes = [short(n, 120) for n in seq(sr.get("notes")) if isinstance(n, str)]
    if status == "not_checked":
        return "not checked: " + ("; ".join(notes) or "the screen it needs only earlier steps would show")
    if status == "skipped":
        return "skipped" + (": " + "; ".join(notes) if notes else "")
    loc = d(sr.get("locate_result"))
    if not loc and sr.get("tier"):           # records before locate_result was kept
        loc = {"success": True, "method_used": sr.get("tier")}
    if loc and not loc.get("success"):
        looked = located_words(sr, loc)          # it names the tiers tried and why nothing was found
        return looked if status == "failed" else "; ".join(p for p in (looked, check_after(sr, change), *notes) if p)
    return _acted(sr, step, loc, status == "failed", change, notes)


def _acted(sr: dict[str, Any], step: dict[str, Any], loc: dict[str, Any], failed: bool, change: str,
           notes: list[str]) -> str:
    """A step that found its target (or needed none): what it did, then its error or the check after it."""
    if failed:
        error = short(sr.get("error_message"), 200)
        done = f"{located_words(sr, loc)} and {_action_words(step, True)}; failed" if loc else "failed"
        return "; ".join(p for p in (f"{done}: {error}" if error else done, *notes) if p)
    done = f"{located_words(sr, loc)} and {_action_words(step, True)}" if loc else _action_words(step, False)
    return "; ".join(p for p in (done, check_after(sr, change), *notes) if p)


def tree_change(before: list[tuple[str, str]], after: list[tuple[str, str]], limit: int = 3) -> str:
    """Texts the screen gained (by field and text), e.g. ``你好 appeared``; ``""`` when none.

    >>> tree_change([("input", "你好")], [("input", ""), ("bubble", "你好")])
    '你好 appeared'
    """
    new = Counter(pair for pair in after if pair[1].strip()) - Counter(pair for pair in before if pair[1].strip())
    texts = list(dict.fromkeys(short(text, 24) for _, text in new.elements()))
    if not texts:
        return ""
    more = f" and {len(texts) - limit} more" if len(texts) > limit else ""
    return f"{', '.join(texts[:limit])}{more} appeared"
