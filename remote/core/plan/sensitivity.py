"""Which steps need a person's yes (pure): one function, :func:`decide`, judges a step as it will run.

Every door that runs a step calls it on the step as it will run, its slots, ``-e`` values and extracted
values filled in: a template (:func:`remote.apps.base.build_plan`), a model's plan and a replan
(``TaskRunner``), a phone agent's action (``runner/agent_steps``), a learned or MCP-saved replay, a flow's
sub-task (``runner/scope.Scope.bind``), a studio act, and, last, the step runner itself just before the step
acts (``StepRunner.run``), so a door that forgot cannot let a step through. What a step touches is judged
once it is found (:func:`touched_reason`): the element's label on the screen at the moment of the tap.

By what it does, whoever wrote it:
    call                              places a phone call
    press_key                         a key that places, answers or ends a call (CALL, ENDCALL, HEADSETHOOK),
                                      one that opens an app or the settings (EXPLORER, SETTINGS, CAMERA ...),
                                      or one not known to be harmless (:mod:`remote.core.device.keyrules`)
    open_url with a scheme other than http(s)   SMS, payment and app deep links (alipays:, weixin:, sms:, tel:, intent:)
    launch_app of a package installer  installs or removes apps
By who wrote it: a model's (or a replan's) tap at a raw ``xy:`` point: nothing on
the screen vouches for what the model says is there.
By its words: the module's sensitive words and the built-in ones (pay, transfer,
delete, install, reset, erase ...) in the step's targets (as filled: ``text:{who}`` with 轉賬 from the
sentence or read off the screen counts) and its description as written (a slot's value in a description
is the user's message, not what the step does), compared after Traditional -> Simplified Chinese (OpenCC)
and full-width -> half-width (NFKC), so ``text:轉賬`` and ``ＰＡＹ`` count. Typed text is not looked at: a
message that mentions 删除 is not a deletion; the field it is typed into is (:func:`touched_reason`).
By what it touches: a tap, long press or typing on an element whose label has such a word; a model's
``dynamic:`` target on an element without any label.

A step marked sensitive stays so (:func:`mark` never clears a mark): a learned or saved step keeps the mark
its origin had. Without a terminal and without ``--yes`` the answer to every question is no.
"""

from __future__ import annotations

import functools
import unicodedata

import opencc

from remote.core.device.keyrules import KeyKind, rule
from remote.core.device.keys import keycode
from remote.core.plan.actions import Call, LaunchApp, OpenUrl, PressKey
from remote.core.records import ActionName, StepPlan
from remote.errors import ActionError

BUILTIN_WORDS = ("支付", "付款", "转账", "转帐", "红包", "删除", "卸载", "安装", "恢复出厂", "重置", "清除数据", "抹掉",
                 "格式化", "pay", "payment", "transfer", "delete", "uninstall", "install", "factory reset", "erase",
                 "wipe")
SAFE_SCHEMES = ("http", "https")
INSTALLER_PACKAGES = ("com.android.packageinstaller", "com.google.android.packageinstaller", "com.android.vending",
                      "com.miui.packageinstaller")
MODEL_SOURCES = ("model", "replan")
TOUCHING = (ActionName.TAP, ActionName.LONG_PRESS, ActionName.INPUT_TEXT)


@functools.cache
def _converter() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


@functools.lru_cache(maxsize=4096)   # the built-in and module words are normalised again on every step
def normalize(text: str) -> str:
    """Width-folded, Simplified, lower-case, without spaces: ``"ＰＡＹ 轉賬"`` -> ``"pay转账"``."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(_converter().convert(folded).lower().split())


def word_in(text: str, words: tuple[str, ...] = ()) -> str:
    """The first sensitive word (the module's, then the built-in ones) in ``text``, or ""."""
    haystack = normalize(text)
    return next((w for w in (*words, *BUILTIN_WORDS) if w and normalize(w) in haystack), "")


def key_reason(key: int | str) -> str:
    """Why pressing ``key`` needs a yes ("" for a key that acts in the app in front)."""
    try:
        code = keycode(key)
    except ActionError:
        return f"presses {str(key)[:20]!r}, which is not a known key"
    what = rule(code)
    if what.kind is KeyKind.CALL:
        return f"presses {what.name} (key {code}), which places, answers or ends a phone call"
    if what.kind is KeyKind.APP:
        return f"presses {what.name} (key {code}), which opens {what.opens}"
    if what.kind is KeyKind.UNKNOWN:
        return f"presses key {code}, which is not known to be harmless"
    return ""


def by_action(step: StepPlan) -> str:
    """What the step does that needs a yes, whatever its words ("" when nothing)."""
    args = step.args
    if isinstance(args, Call):
        return f"places a phone call to {args.number}"
    if isinstance(args, PressKey):
        return key_reason(args.key)
    if isinstance(args, OpenUrl) and args.scheme and args.scheme not in SAFE_SCHEMES:
        return f"opens a {args.scheme}: link (payments, messages and app deep links need a yes)"
    if isinstance(args, LaunchApp) and args.package in INSTALLER_PACKAGES:
        return "opens the package installer"
    return ""


def _by_author(step: StepPlan) -> str:
    if step.source not in MODEL_SOURCES or step.action not in TOUCHING:
        return ""
    for target in step.targets:
        if target.startswith("xy:"):
            return f"a {step.action.value} at raw coordinates ({target}) chosen by the model"
    return ""


def written_description(step: StepPlan) -> str:
    """The description as its author wrote it: a template's ``{slot}`` stays unfilled."""
    raw = step.template.get("description") if step.template is not None else None
    return raw if isinstance(raw, str) else step.description


def _by_words(step: StepPlan, words: tuple[str, ...]) -> str:
    parts = [*step.targets, written_description(step)]
    if step.fallback is not None:
        parts += [*step.fallback.targets, written_description(step.fallback)]
    word = word_in(" ".join(p for p in parts if p), words)
    return f"mentions {word!r}" if word else ""


def decide(step: StepPlan, words: tuple[str, ...] = ()) -> str:
    """Why ``step``, as it will run, needs a person's yes, or "" when it does not. The one rule every door
    applies (a flow step's own blocks are decided when their steps run)."""
    return by_action(step) or _by_author(step) or _by_words(step, words)


def mark(step: StepPlan, words: tuple[str, ...] = ()) -> StepPlan:
    """Set ``sensitive`` and its reason from :func:`decide`; a step already marked sensitive stays so."""
    reason = decide(step, words)
    if reason and not step.sensitive:
        step.sensitive, step.sensitive_reason = True, reason
    elif step.sensitive and not step.sensitive_reason:
        step.sensitive_reason = reason or "declared sensitive"
    return step


def touched_reason(step: StepPlan, label: str | None, words: tuple[str, ...] = ()) -> str:
    """Once the step's target is found: why touching it needs a yes, or "". Any step whose element says a
    sensitive word; a model's ``dynamic:`` target on an element with no label at all."""
    if step.action not in TOUCHING:
        return ""
    if label and word_in(label, words):
        return f"the element it touches says {label[:40]!r}"
    if step.source in MODEL_SOURCES and any(t.startswith("dynamic:") for t in step.targets):
        return label_reason(step.action.value, label, words)
    return ""


def label_reason(action: str, label: str | None, words: tuple[str, ...] = ()) -> str:
    """Why a ``action`` on an element a model chose, labelled ``label``, needs a yes (no label at all, or a
    sensitive word in it), or ""."""
    if not label or not label.strip():
        return f"a {action} on an element with no label, chosen by the model"
    if word_in(label, words):
        return f"the element the model chose says {label[:40]!r}"
    return ""
