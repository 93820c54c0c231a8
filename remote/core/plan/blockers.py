"""The verifier's pure parts: blockers from a UI tree, pixel and tree change, expectations in a tree.

No model and no device here; everything is a function of its inputs, so it is
tested table-style on recorded dumps. Rules, in order:

1. **permission**: the permission controller's package, ``permission_allow_*``
   ids, or an 允许/Allow button beside a 拒绝/Deny one -> tap the allow button
   (the task asked for the feature; a denial would fail it later);
2. **ad**: a close/skip control (关闭, 跳过, ×, close, skip, ids with close/skip)
   sharing a large container (an overlay, >= 20 % of the screen) with an ad signal
   (广告, 推广, sponsored, ids with ad/splash), or a 跳过 countdown -> tap it;
3. **dialog/popup**: a dialog structure (``android:id/button1..3``,
   ``parentPanel``/``alertTitle``, a ``*Dialog*`` class, or a floating window
   smaller than the screen) with known buttons -> tap the most permissive
   closing choice (我知道了 > 以后再说 > 跳过 > 关闭 > 同意 > 允许 > 确定 > 取消);
4. **loading**: a spinner (a ``ProgressBar``) or 加载中/正在加载/Loading text on an
   otherwise nearly empty screen -> wait, do not tap;
5. **keyboard**: an input method's window in the tree, or ``ime_shown`` -> BACK.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np
from PIL import Image

from remote.core.coords import bbox_center  # noqa: F401 - re-exported for callers tapping a suggestion
from remote.core.locate.ui_tree import UINode, UITree, normalize_text, parse_hierarchy
from remote.core.records import Blocker, BlockerType, DismissSuggestion

KEYCODE_BACK = 4
PERMISSION_PACKAGES = ("com.android.permissioncontroller", "com.google.android.permissioncontroller",
                       "com.android.packageinstaller", "com.lbe.security.miui", "com.miui.securitycenter",
                       "com.coloros.securitypermission", "com.huawei.systemmanager", "com.oplus.securitypermission")
ALLOW_WORDS = ("仅在使用中允许", "仅在使用该应用时允许", "使用时允许", "始终允许", "允许", "whileusingtheapp",
               "onlythistime", "allow")
DENY_WORDS = ("拒绝", "不允许", "禁止", "deny", "don'tallow", "dontallow")
CLOSE_WORDS = ("关闭", "关闭广告", "close", "×", "✕", "✖", "x", "跳过", "跳过广告", "skip", "skipad")
AD_WORDS = ("广告", "推广", "赞助", "sponsored", "advertisement")
AD_ID_TOKENS = ("ad", "ads", "advert", "splash", "banner", "promo")
DIALOG_CHOICES = ("我知道了", "知道了", "以后再说", "下次再说", "暂不", "稍后", "暂不更新", "跳过", "关闭",
                  "同意", "允许", "确定", "好的", "gotit", "notnow", "later", "ok", "close", "取消", "cancel")
DIALOG_IDS = (":id/parentpanel", ":id/alerttitle", ":id/buttonpanel", "android:id/button1",
              "android:id/button2", "android:id/button3")
IME_PACKAGES = ("com.sohu.inputmethod", "com.baidu.input", "com.google.android.inputmethod",
                "com.iflytek.inputmethod", "com.tencent.qqpinyin", "com.android.inputmethod",
                "com.touchtype.swiftkey", "com.samsung.android.honeyboard", "com.google.android.apps.inputmethod")
LOADING_WORDS = ("加载中", "正在加载", "请稍候", "loading", "pleasewait")
_COUNTDOWN_SKIP = re.compile(r"^(\d+s?跳过|跳过\d+s?|skip\d+s?|\d+s?skip)$")

NO_CHANGE_BELOW = 0.003   # fraction of changed pixels under which "nothing happened"
CHANGED_ABOVE = 0.03      # ... over which the screen clearly changed; in between is ambiguous


def as_tree(hierarchy: UITree | str | bytes | None, screen_size: tuple[int, int] | None = None) -> UITree | None:
    if hierarchy is None or isinstance(hierarchy, UITree):
        return hierarchy
    return parse_hierarchy(hierarchy, screen_size)


def _key(node: UINode) -> str:
    return normalize_text(node.label)


def _visible(tree: UITree) -> list[UINode]:
    return [n for n in tree.nodes if tree.on_screen(n) and n.enabled]


def _tap(tree: UITree, node: UINode, description: str) -> DismissSuggestion:
    target = tree.clickable_target(node)
    return DismissSuggestion(action="tap", target_ref=f"text:{node.label.strip()}" if node.label.strip() else None,
                             description=description, bbox=target.bounds)


def _first(nodes: Iterable[UINode], words: tuple[str, ...], *, prefix: bool = False) -> UINode | None:
    nodes = list(nodes)
    for word in words:   # words are in order of preference
        for n in nodes:
            key = _key(n)
            if key == word or (prefix and key.startswith(word)):
                return n
    return None


def _summary(tree: UITree, nodes: list[UINode], limit: int = 3) -> str:
    texts = sorted((n.label.strip() for n in nodes if len(n.label.strip()) > 1), key=len, reverse=True)
    return " / ".join(texts[:limit])


def _permission(tree: UITree, nodes: list[UINode]) -> Blocker | None:
    in_controller = [n for n in nodes if n.package.startswith(PERMISSION_PACKAGES)]
    allow = next((n for n in nodes if "permission_allow" in n.resource_id.lower()), None)
    if allow is None:
        allow = _first(in_controller or nodes, ALLOW_WORDS, prefix=bool(in_controller))
    deny = _first(nodes, DENY_WORDS, prefix=True)
    if allow is None or not (in_controller or deny is not None or "permission" in allow.resource_id.lower()):
        return None
    description = _summary(tree, in_controller or nodes) or "permission request"
    return Blocker(BlockerType.PERMISSION, f"permission dialog: {description}",
                   _tap(tree, allow, f"tap {allow.label.strip() or 'allow'} to grant the permission"))


def _id_tokens(node: UINode) -> set[str]:
    name = node.resource_id.rsplit("/", 1)[-1].lower()
    return set(re.split(r"[^a-z0-9]+", name)) | set(re.findall(r"[a-z]+", name))


def _close_controls(nodes: list[UINode]) -> list[UINode]:
    out = []
    for n in nodes:
        key = _key(n)
        tokens = _id_tokens(n)
        if key in CLOSE_WORDS or _COUNTDOWN_SKIP.match(key) or ({"close", "skip"} & tokens and not key):
            out.append(n)
    return out


def _is_ad_signal(node: UINode) -> bool:
    label = normalize_text(node.label)
    if label in AD_WORDS or label == "ad" or (len(label) <= 8 and any(w in label for w in AD_WORDS)):
        return True
    return bool(set(AD_ID_TOKENS) & _id_tokens(node))


def _ancestors(tree: UITree, node: UINode, levels: int) -> list[int]:
    out: list[int] = []
    cur = node.parent
    while cur is not None and len(out) < levels:
        if tree.nodes[cur].depth >= 1:   # the window root contains everything: not a shared container
            out.append(cur)
        cur = tree.nodes[cur].parent
    return out


def _ad(tree: UITree, nodes: list[UINode]) -> Blocker | None:
    closers = _close_controls(nodes)
    if not closers:
        return None
    skip = next((n for n in closers if _key(n).startswith(("跳过", "skip")) or _COUNTDOWN_SKIP.match(_key(n))), None)
    target = skip
    if target is None:
        # An ad signal counts only next to the close control (same container, a few levels up),
        # so that the word 广告 inside a feed post does not make the page an ad.
        signal_ancestors: set[int] = set()
        for n in nodes:
            if _is_ad_signal(n):
                signal_ancestors.update(_ancestors(tree, n, 6))
                signal_ancestors.add(n.position)
        w, h = tree.screen_size
        big = 0.2 * w * h   # an in-feed ad card with a small close is not in the way; an overlay is

        def overlay(c: UINode) -> bool:
            return any(a in signal_ancestors and tree.nodes[a].width * tree.nodes[a].height >= big
                       for a in _ancestors(tree, c, 3))

        target = next((c for c in closers if _is_ad_signal(c) or overlay(c)), None)   # e.g. id ad_close
    if target is None:
        return None
    return Blocker(BlockerType.AD, f"advertisement: {_summary(tree, nodes) or 'ad overlay'}",
                   _tap(tree, target, f"tap {target.label.strip() or 'the close button'} to close the ad"))


def _floating(tree: UITree) -> bool:
    if not tree.nodes:
        return False
    x1, y1, x2, y2 = tree.nodes[0].bounds
    w, h = tree.screen_size
    return x1 > 0 and x2 < w and (y2 - y1) < 0.9 * h


def _dialog(tree: UITree, nodes: list[UINode], screen_size: tuple[int, int] | None) -> Blocker | None:
    structural = any(n.resource_id.lower().endswith(DIALOG_IDS) or n.resource_id.lower() in DIALOG_IDS
                     or "dialog" in n.class_name.lower() for n in nodes)
    floating = screen_size is not None and _floating(tree)
    if not (structural or floating):
        return None
    button = _first(nodes, DIALOG_CHOICES) or next(
        (n for n in nodes if n.resource_id.lower() in ("android:id/button1", "android:id/button2")), None)
    if button is None:
        closers = _close_controls(nodes)
        if not closers:
            return None
        button = closers[0]
    kind = BlockerType.DIALOG if structural else BlockerType.POPUP
    return Blocker(kind, f"{kind.value}: {_summary(tree, nodes) or 'dialog'}",
                   _tap(tree, button, f"tap {button.label.strip() or 'the button'} to dismiss it"))


def _loading(nodes: list[UINode]) -> Blocker | None:
    """A spinner screen: a ProgressBar or a loading word, and little else to act on."""
    spinner = any("ProgressBar" in n.class_name for n in nodes)
    words = any(normalize_text(n.text).rstrip(".…") in LOADING_WORDS for n in nodes if n.text)
    actionable = [n for n in nodes if n.clickable and (n.text or n.content_desc)]
    if (spinner or words) and len(actionable) <= 2:
        return Blocker(BlockerType.LOADING, "the screen is still loading",
                       DismissSuggestion("wait", description="wait for the screen to settle"))
    return None


def detect_blocker_in_tree(hierarchy: UITree | str | bytes | None, screen_size: tuple[int, int] | None = None,
                           *, ime_shown: bool | None = None) -> Blocker | None:
    """A blocker on the screen, from its UI dump alone, with where to tap; None when clear.

    ``screen_size`` (device pixels) enables the floating-window rule; ``ime_shown``
    is the device's own answer (``dumpsys input_method``) when the caller has it.
    """
    tree = as_tree(hierarchy, screen_size)
    if tree is None:
        return _keyboard() if ime_shown else None
    nodes = _visible(tree)
    blocker = (_permission(tree, nodes) or _ad(tree, nodes) or _dialog(tree, nodes, screen_size)
               or _loading(nodes))
    if blocker is not None:
        return blocker
    if ime_shown or any(n.package.startswith(IME_PACKAGES) for n in nodes):
        return _keyboard()
    return None


def _keyboard() -> Blocker:
    return Blocker(BlockerType.KEYBOARD, "the on-screen keyboard is showing",
                   DismissSuggestion(action="press_key", description="press BACK to hide the keyboard",
                                     keycode=KEYCODE_BACK))


# -- change detection ----------------------------------------------------------------------

def _gray(image: Image.Image, width: int) -> np.ndarray:
    height = max(1, round(image.height * width / image.width))
    return np.asarray(image.convert("L").resize((width, height), Image.Resampling.BILINEAR), dtype=np.int16)


def pixel_change(before: Image.Image, after: Image.Image, *, ignore_top: float = 0.04, width: int = 270,
                 threshold: int = 24) -> float:
    """Fraction (0-1) of pixels that changed, on small grayscale copies, status bar ignored.

    Different sizes or aspect ratios (rotation) count as a full change.
    """
    if before.size != after.size:
        return 1.0
    a, b = _gray(before, width), _gray(after, width)
    top = int(a.shape[0] * ignore_top)
    diff = np.abs(a[top:] - b[top:]) > threshold
    return float(diff.mean()) if diff.size else 0.0


def tree_signature(tree: UITree) -> set[tuple[str, str, str]]:
    return {(n.label.strip(), n.resource_id, n.class_name) for n in tree.nodes
            if tree.on_screen(n) and (n.label.strip() or n.resource_id)}


def tree_change(before: UITree, after: UITree) -> float:
    """1 - Jaccard similarity of what the two trees show (0 = same texts and ids)."""
    a, b = tree_signature(before), tree_signature(after)
    if not a and not b:
        return 0.0
    return 1.0 - len(a & b) / len(a | b)


def foreground_package(tree: UITree) -> str:
    return next((n.package for n in tree.nodes if n.package), "")


_QUOTED = re.compile(r"[「“\"'《](.+?)[」”\"'》]")


def expectation_in_tree(tree: UITree, expected: str) -> bool | None:
    """True/False when the tree can decide ``expected``; None when only a model can.

    ``text:X`` / ``desc:X`` / ``id:X`` are checked as the locator would (a node showing
    exactly X); free text is checked through its quoted parts (「张三」) or as a whole phrase.
    """
    expected = (expected or "").strip()
    if not expected:
        return None
    for prefix, finder in (("text:", tree.find_by_text), ("desc:", tree.find_by_desc)):
        if expected.startswith(prefix):
            return bool(finder(expected[len(prefix):].strip(), exact=True))
    if expected.startswith("id:"):
        return bool(tree.find_by_id(expected[3:].strip()))
    return expectation_in_texts(tree.texts(), expected)


def expectation_in_texts(texts: list[str], expected: str) -> bool | None:
    """The same decision on plain lines of text (OCR readings): True, False, or None (a model must say)."""
    expected = (expected or "").strip()
    lines = [normalize_text(t) for t in texts]
    for prefix in ("text:", "desc:"):
        if expected.startswith(prefix):
            return normalize_text(expected[len(prefix):]) in lines
    quoted = _QUOTED.findall(expected)
    if quoted:
        return all(any(normalize_text(q) in t for t in lines) for q in quoted)
    whole = normalize_text(expected)
    if whole and any(whole == t or (len(whole) >= 2 and whole in t) for t in lines):
        return True
    return None


def describe_nodes(tree: UITree, limit: int = 60) -> str:
    """The tree's visible texts, one per line, for a prompt."""
    return "\n".join(tree.texts()[:limit]) or "(no text)"


def as_image(value: Any) -> Image.Image:
    return value if isinstance(value, Image.Image) else Image.open(value)
