"""The final check: does the finished screen show what the plan promised? And is it a failure screen?

Each clause of the plan's :class:`~remote.core.plan.checks.SuccessCheck` is
decided offline first (the app in front from the phone, texts from the UI tree,
else OCR; targets and switches through the free locator tiers). Only when none of
those can tell (a secure screen with no tree and no OCR reading) and a model is
configured does the verifier look at the screen; without one the clause stays
undecided and the task is not called a success.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from remote.core.device.audio import Volume
from remote.core.locate import ocr
from remote.core.locate.screen import Screen
from remote.core.locate.tree_facts import switch_state
from remote.core.locate.ui_tree import UINode, UITree, loosely_equal, normalize_text
from remote.core.plan.checks import FailureScreen, PageCheck, SuccessCheck, ToggleCheck, is_target_ref
from remote.core.plan.flow import Assert
from remote.core.records import CheckItem, FinalCheckResult, StepResult, StepStatus, TaskPlan
from remote.runner.tools import StepTools

logger = logging.getLogger(__name__)
FREE_TIERS = ("tree", "template", "multiscale", "orb", "ocr", "fixed")


def _describe(node_text: str, bounds: tuple[int, int, int, int]) -> str:
    return f"{node_text[:60]!r} at {list(bounds)}"


@dataclass(frozen=True)
class Start:
    """The phone as the task began, for the clauses that compare with it (``volume``, ``changed``)."""

    volume: Volume | None = None
    window: str = ""                         # package/activity in front
    texts: frozenset[str] = frozenset()      # the texts of its UI tree


def _texts(screen: Screen) -> frozenset[str]:
    tree = screen.tree()
    return frozenset(n.label for n in tree.nodes if n.label and tree.on_screen(n)) if tree is not None else frozenset()


class FinalChecker:
    def __init__(self, tools: StepTools) -> None:
        self.tools = tools
        self.start: Start | None = None

    def begin(self, wanted: SuccessCheck) -> None:
        """Read what ``wanted``'s comparing clauses need from the phone before the first step (nothing otherwise)."""
        if not wanted.needs_start:
            return
        device = self.tools.device
        front = device.current_app() if wanted.changed else {}
        self.start = Start(volume=device.volume() if wanted.volume else None,
                           window="/".join(filter(None, (front.get("package"), front.get("activity")))),
                           texts=_texts(self.tools.capture.screen(tree=True)) if wanted.changed else frozenset())

    # ------------------------------------------------------------------ success
    def check(self, wanted: SuccessCheck, screen: Screen, criteria: str = "") -> FinalCheckResult:
        """Every clause of ``wanted`` on ``screen``; ``criteria`` (free text) goes to the verifier model."""
        items = self._clauses(wanted, screen)
        if not items and criteria:
            items.append(self._by_model(criteria, screen))
        elif any(i.passed is None for i in items) and self.tools.checks.has_model:
            items = [self._by_model(wanted.describe(), screen) if i.passed is None else i for i in items]
        if not items:
            return FinalCheckResult(None, [], "the plan states no final check", "none")
        return _result(items)

    def _clauses(self, wanted: SuccessCheck, screen: Screen) -> list[CheckItem]:
        """One item per clause of ``wanted``, judged without a model."""
        items: list[CheckItem] = [self._app(wanted.app)] if wanted.app else []
        items += [self._text(t, screen) for t in wanted.text]
        items += [self._target(t, screen) for t in wanted.target]
        items += [self._absent(t, screen) for t in wanted.absent]
        items += [self._toggle(t, screen) for t in wanted.toggle]
        items += [self._page(wanted.page, screen)] if wanted.page else []
        items += [self._volume(wanted.volume)] if wanted.volume else []
        items += [self._changed(screen)] if wanted.changed else []
        return items

    def _app(self, expected: str) -> CheckItem:
        front = self.tools.device.current_app().get("package", "")
        package = expected
        if "." not in expected:   # an app's name: the package it means, or the one this run launched for it
            package = self.tools.apps.package_for(expected) or (self.tools.apps.launched[-1]
                                                               if self.tools.apps.launched else expected)
        return CheckItem(f"{expected} in front", front == package, f"in front: {front or 'nothing'}", "device")

    def _text(self, text: str, screen: Screen) -> CheckItem:
        what = f"{text!r} on the screen"
        tree = screen.tree()
        if tree is not None:
            # A field that shows what the run typed (a search box, an unsent message) is no evidence.
            node = next((n for n in tree.find_by_text(text, exact=True) if "EditText" not in n.class_name), None)
            if node is not None:
                return CheckItem(what, True, _describe(node.label, node.bounds), "tree")
            if not screen.secure and tree.nodes:
                contained = tree.find_by_text(text, exact=False)
                evidence = f"only inside {contained[0].label[:60]!r}" if contained else "no node shows it"
                # The tree misses text drawn into images and web canvases: OCR gets the last word.
                read = self._ocr(text, screen)
                return read if read.passed else CheckItem(what, False, evidence, "tree")
        return self._ocr(text, screen)

    def _ocr(self, text: str, screen: Screen) -> CheckItem:
        what = f"{text!r} on the screen"
        if screen.secure:
            return CheckItem(what, None, "a secure screen (its image is black): no OCR reading", "")
        if not ocr.available():
            return CheckItem(what, None, f"no OCR reading: {ocr.unavailable_reason() or 'OCR cannot run'}", "")
        q = normalize_text(text)
        for box in screen.text_boxes():
            if normalize_text(box.text) == q or loosely_equal(box.text, text):
                return CheckItem(what, True, _describe(box.text, box.bbox), "ocr")
        return CheckItem(what, False, "not read on the screen", "ocr")

    def _target(self, target: str, screen: Screen) -> CheckItem:
        loc = self.tools.locator.locate_with_fallback(target, FREE_TIERS, screen)
        if loc.success and loc.reliable and loc.element is not None:
            return CheckItem(f"{target} found", True, f"{loc.method_used} at {list(loc.element.bbox)}",
                             f"locate:{loc.method_used}")
        return CheckItem(f"{target} found", False, loc.error[:200] or "not found", "locate")

    def _absent(self, value: str, screen: Screen) -> CheckItem:
        what = f"{value} not on the screen"
        if is_target_ref(value):
            loc = self.tools.locator.locate_with_fallback(value, FREE_TIERS, screen)
            shown = loc.success and loc.element is not None
            return CheckItem(what, not shown, f"found at {list(loc.element.bbox)}" if shown and loc.element else "",
                             "locate")
        node = _containing(screen.tree(), value)
        if node is not None:
            return CheckItem(what, False, _describe(node.label, node.bounds), "tree")
        if screen.tree() is None:
            read = self._ocr(value, screen)
            return CheckItem(what, None if read.passed is None else not read.passed, read.evidence, read.method)
        return CheckItem(what, True, "", "tree")

    def _toggle(self, toggle: ToggleCheck, screen: Screen) -> CheckItem:
        what = f"{toggle.target} switched {'on' if toggle.on else 'off'}"
        tree = screen.tree()
        loc = self.tools.locator.locate_with_fallback(toggle.target, ("tree",), screen)
        if tree is None or not loc.success or loc.element is None:
            return CheckItem(what, None if tree is None else False, loc.error[:200] or "no UI tree", "tree")
        state = switch_state(tree.nodes, loc.element.bbox)
        evidence = "no switch beside it" if state is None else f"the switch is {'on' if state else 'off'}"
        return CheckItem(what, None if state is None else state == toggle.on, evidence, "tree")

    def _page(self, page: PageCheck, screen: Screen) -> CheckItem:
        """The address bar (a node of the tree) shows the URL's host: Chrome shows the page's URL there, without
        the https:// and a leading www. (Chromium's url_formatter, kFormatUrlOmitHTTPS | OmitTrivialSubdomains)."""
        what = f"the address bar shows {page.url}"
        tree = screen.tree()
        loc = self.tools.locator.locate_with_fallback(page.bar, ("tree",), screen)
        if tree is None or not loc.success or loc.element is None:
            return CheckItem(what, None if tree is None else False, loc.error[:200] or "no UI tree", "tree")
        x1, y1, x2, y2 = loc.element.bbox
        shown = next((n.text for n in tree.nodes if n.text and tree.on_screen(n) and x1 <= n.bounds[0]
                      and y1 <= n.bounds[1] and n.bounds[2] <= x2 and n.bounds[3] <= y2), "")
        return CheckItem(what, host_shown(shown, page.url), f"the address bar reads {shown[:80]!r}", "tree")

    def _volume(self, way: str) -> CheckItem:
        what, before = f"the media volume went {way}", self.start.volume if self.start else None
        now = self.tools.device.volume()
        if now is None or before is None:
            return CheckItem(what, None, "the phone does not say its volume (dumpsys audio)", "device")
        end = now.maximum if way == "up" else 0
        moved = now.level > before.level if way == "up" else now.level < before.level
        return CheckItem(what, moved or now.level == end, f"{before} -> {now}" + (" (its end)" if not moved
                                                                                 and now.level == end else ""),
                         "device")

    def _changed(self, screen: Screen) -> CheckItem:
        what = "the screen is not the one the task began on"
        if self.start is None:
            return CheckItem(what, None, "the screen the task began on was not read", "device")
        front = self.tools.device.current_app()
        window = "/".join(filter(None, (front.get("package"), front.get("activity"))))
        if window != self.start.window:
            return CheckItem(what, True, f"{self.start.window or 'nothing'} -> {window or 'nothing'}", "device")
        if screen.tree() is None:
            return CheckItem(what, None, f"still {window}, and no UI tree to compare", "device")
        texts = _texts(screen)
        return CheckItem(what, texts != self.start.texts, f"still {window}, " + (
            "other texts on the screen" if texts != self.start.texts else "the same texts on the screen"), "tree")

    def _by_model(self, expected: str, screen: Screen) -> CheckItem:
        verdict = self.tools.checks.verify_with_description(screen.pil, expected, hierarchy=screen.tree())
        decided = verdict.method == "model" or verdict.verified
        return CheckItem(expected, verdict.verified if decided else None,
                         (verdict.current_state or verdict.change_description or verdict.suggestion_detail)[:200],
                         verdict.method)

    # ------------------------------------------------------------------ failure screens
    def failure_screen(self, failures: tuple[FailureScreen, ...], screen: Screen) -> FailureScreen | None:
        """The first of the module's failure screens that ``screen`` shows."""
        for failure in failures:
            if failure.text and _containing(screen.tree(), failure.text) is not None:
                return failure
            if failure.target:
                loc = self.tools.locator.locate_with_fallback(failure.target, FREE_TIERS, screen)
                if loc.success:
                    return failure
        return None


def without_check(plan: TaskPlan, done: list[StepResult]) -> tuple[bool, str]:
    """A template that declares no ``success_check``: is the task checked all the same, and what to say.

    Checked when its last step is an ``assert_visible`` / ``assert_not_visible`` that held (it looked at the
    finished screen) or it answers a question (``answer:``: the run fails when the answer cannot be read);
    otherwise the run ends ``unchecked`` (exit 1), never SUCCESS: its steps ran, nothing showed the task is done.
    """
    last = done[-1] if done else None
    if last is not None and isinstance(last.step.args, Assert) and last.status is StepStatus.SUCCESS:
        return True, f"the template's last step checked the finished screen ({last.step.label})"
    if plan.answer:
        return True, "a question task: its answer is read off the finished screen"
    return False, ("the template declares no final check: every step ran and was verified, but nothing checked "
                   "that the task reached its goal (add a success_check: docs/modules.md)")


def _containing(tree: UITree | None, text: str) -> UINode | None:
    if tree is None:
        return None
    q = normalize_text(text)
    return next((n for n in tree.nodes if tree.on_screen(n) and q and (q in normalize_text(n.text)
                                                                         or q in normalize_text(n.content_desc))),
                None)


def host_shown(bar_text: str, url: str) -> bool:
    """Does an address bar reading ``bar_text`` show ``url``'s host?

    >>> host_shown("example.com", "https://www.example.com/a"), host_shown("settings", "https://example.com")
    (True, False)
    """
    def host(text: str) -> str:
        text = text.strip().lower()
        text = text if re.match(r"^[a-z][a-z0-9+.-]*://", text) else "//" + text
        try:
            name = urlsplit(text).hostname or ""
        except ValueError:
            return ""
        return name.removeprefix("www.")
    wanted = host(url)
    return bool(wanted) and host(bar_text) == wanted


def _result(items: list[CheckItem]) -> FinalCheckResult:
    """The verdict of ``items``: failed when one failed, undecided when one could not tell, else passed; the
    summary names the items that did not pass (all of them when every one did)."""
    passed = False if any(i.passed is False for i in items) else None if any(i.passed is None
                                                                              for i in items) else True
    failing = [i for i in items if i.passed is not True]
    summary = "; ".join(f"{i.what}: {'yes' if i.passed else 'NO' if i.passed is False else 'could not tell'}"
                        + (f" ({i.evidence})" if i.evidence else "") for i in (failing or items))
    methods = ",".join(sorted({i.method for i in items if i.method}))
    return FinalCheckResult(passed, items, summary, methods)
