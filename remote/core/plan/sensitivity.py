"""Which steps need a person's yes: judged by what a step does, then by its words (pure).

By what it does, whoever wrote it:
    call                              places a phone call
    open_url with a scheme other than http(s)   SMS, payment and app deep links (alipays:, weixin:, sms:, tel:, intent:)
    launch_app of a package installer  installs or removes apps
By who wrote it: a model's (or a replan's) tap at a raw ``xy:`` point: nothing on
the screen vouches for what the model says is there. A model's ``dynamic:`` target
is judged once it is found (:func:`found_reason`): by the label of what is there,
and an element without any label needs a yes.
By its words: the module's sensitive words and the built-in ones (pay, transfer,
delete, install, reset, erase ...) in the step's targets and description, compared
after Traditional -> Simplified Chinese (OpenCC) and full-width -> half-width
(NFKC), so ``text:轉賬`` and ``ＰＡＹ`` count. Typed text is not looked at: a message
that mentions 删除 is not a deletion.

Without a terminal and without ``--yes`` the answer to every question is no.
"""

from __future__ import annotations

import functools
import unicodedata

import opencc

from remote.core.plan.actions import Call, LaunchApp, OpenUrl
from remote.core.records import ActionName, StepPlan

BUILTIN_WORDS = ("支付", "付款", "转账", "转帐", "红包", "删除", "卸载", "安装", "恢复出厂", "重置", "清除数据", "抹掉",
                 "格式化", "pay", "payment", "transfer", "delete", "uninstall", "install", "factory reset", "erase",
                 "wipe")
SAFE_SCHEMES = ("http", "https")
INSTALLER_PACKAGES = ("com.android.packageinstaller", "com.google.android.packageinstaller", "com.android.vending",
                      "com.miui.packageinstaller")
MODEL_SOURCES = ("model", "replan")


@functools.cache
def _converter() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


def normalize(text: str) -> str:
    """Width-folded, Simplified, lower-case, without spaces: ``"ＰＡＹ 轉賬"`` -> ``"pay转账"``."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(_converter().convert(folded).lower().split())


def by_action(step: StepPlan) -> str:
    """What the step does that needs a yes, whatever its words ("" when nothing)."""
    args = step.args
    if isinstance(args, Call):
        return f"places a phone call to {args.number}"
    if isinstance(args, OpenUrl) and args.scheme and args.scheme not in SAFE_SCHEMES:
        return f"opens a {args.scheme}: link (payments, messages and app deep links need a yes)"
    if isinstance(args, LaunchApp) and args.package in INSTALLER_PACKAGES:
        return "opens the package installer"
    return ""


def _by_author(step: StepPlan) -> str:
    if step.source not in MODEL_SOURCES or step.action not in (ActionName.TAP, ActionName.LONG_PRESS,
                                                                 ActionName.INPUT_TEXT):
        return ""
    for target in step.targets:
        if target.startswith("xy:"):
            return f"a {step.action.value} at raw coordinates ({target}) chosen by the model"
    return ""


def found_reason(step: StepPlan, label: str | None, words: tuple[str, ...] = ()) -> str:
    """After a model's ``dynamic:`` target is found: why what is there needs a yes (its label's words, or
    no label at all), or ""."""
    if step.source not in MODEL_SOURCES or not any(t.startswith("dynamic:") for t in step.targets):
        return ""
    return label_reason(step.action.value, label, words)


def label_reason(action: str, label: str | None, words: tuple[str, ...] = ()) -> str:
    """Why a ``action`` on an element a model chose, labelled ``label``, needs a yes (no label at all, or a
    sensitive word in it), or ""."""
    if not label or not label.strip():
        return f"a {action} on an element with no label, chosen by the model"
    haystack = normalize(label)
    for word in (*words, *BUILTIN_WORDS):
        if word and normalize(word) in haystack:
            return f"the element the model chose says {label[:40]!r}"
    return ""


def _by_words(step: StepPlan, words: tuple[str, ...]) -> str:
    parts = [*step.targets, step.description]
    if step.fallback is not None:
        parts += [*step.fallback.targets, step.fallback.description]
    haystack = normalize(" ".join(p for p in parts if p))
    for word in (*words, *BUILTIN_WORDS):
        if word and normalize(word) in haystack:
            return f"mentions {word!r}"
    return ""


def sensitive_reason(step: StepPlan, words: tuple[str, ...] = ()) -> str:
    """Why ``step`` needs a person's yes, or "" when it does not."""
    return by_action(step) or _by_author(step) or _by_words(step, words)


def mark(step: StepPlan, words: tuple[str, ...] = ()) -> StepPlan:
    """Set ``sensitive`` and its reason (a step already marked sensitive stays so)."""
    reason = sensitive_reason(step, words)
    if reason:
        step.sensitive, step.sensitive_reason = True, reason
    elif step.sensitive and not step.sensitive_reason:
        step.sensitive_reason = "declared sensitive"
    return step
