"""Verifier: did the step work, and is something in the way? Free checks first, a model last.

- :meth:`Verifier.classify` compares before/after (pixels, UI trees) with no model:
  ``no_change`` (retry), ``wrong_page`` (replan), ``succeeded`` (continue), or
  ``unknown`` when only a model could say.
- :meth:`quick_check`: pixel difference; a model only when the difference is ambiguous.
- :meth:`verify_with_reference`: template match first (``remote.core.locate.matching``), then a model.
- :meth:`verify_with_description`: the UI tree's texts first, then a model.
- :meth:`detect_blocker`: the offline rules of :mod:`remote.core.plan.blockers`, then a model.

Every verdict sets a :class:`SuggestionAction`. Without a configured model the
free answer is returned as it is (with a lower confidence), never an error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PIL import Image

from remote.ai.llm import LLMClient, ask_json
from remote.ai.prompting import render
from remote.ai.protocols import ChatModel
from remote.config import LLMConfig
from remote.core.plan import blockers as rules
from remote.core.records import (
    Blocker,
    BlockerType,
    DismissSuggestion,
    ModelUsage,
    StepOutcome,
    SuggestionAction,
    VerifyResult,
)
from remote.errors import ModelError

logger = logging.getLogger(__name__)

REFERENCE_MATCH = 0.8   # template score at which the reference counts as visible
Matcher = Callable[[Image.Image, Image.Image], float]


def default_matcher(screenshot: Image.Image, reference: Image.Image) -> float:
    """Best multiscale template score (0-1) of ``reference`` in ``screenshot``."""
    from remote.core.locate import matching
    found = matching.find_multiscale(screenshot, reference)
    return max((m.score for m in found), default=0.0)


def _blocker_from(data: Any) -> Blocker | None:
    if not isinstance(data, dict) or data.get("blocked") is False:
        return None
    kind = str(data.get("type", "unknown")).lower()
    kind_enum = BlockerType(kind) if kind in BlockerType._value2member_map_ else BlockerType.UNKNOWN
    if kind_enum is BlockerType.NONE:
        return None
    dismiss = data.get("dismiss") or data.get("dismiss_suggestion")
    suggestion = None
    if isinstance(dismiss, dict) and dismiss.get("action"):
        keycode = dismiss.get("keycode")
        suggestion = DismissSuggestion(action=str(dismiss["action"]), target_ref=dismiss.get("target_ref"),
                                       description=str(dismiss.get("description") or ""),
                                       keycode=int(keycode) if isinstance(keycode, int | float) else None)
    return Blocker(kind_enum, str(data.get("description") or ""), suggestion)


def verdict_from_reply(data: Any) -> VerifyResult:
    """A model's verify JSON -> VerifyResult (validator for ``ask_json``; raises ValueError)."""
    if not isinstance(data, dict) or not isinstance(data.get("verified"), bool):
        raise ValueError("the reply needs a boolean 'verified'")
    try:
        confidence = min(1.0, max(0.0, float(data.get("confidence", 0.5))))
    except (TypeError, ValueError) as exc:
        raise ValueError("'confidence' must be a number between 0 and 1") from exc
    blocker = _blocker_from(data.get("blocker"))
    verified = data["verified"]
    raw_suggestion = str(data.get("suggestion", "")).lower()
    if raw_suggestion in SuggestionAction._value2member_map_:
        suggestion = SuggestionAction(raw_suggestion)
    else:
        suggestion = SuggestionAction.DISMISS if blocker else (
            SuggestionAction.CONTINUE if verified else SuggestionAction.RETRY)
    changed = bool(data.get("screen_changed", True))
    outcome = StepOutcome.SUCCEEDED if verified else (StepOutcome.WRONG_PAGE if changed else StepOutcome.NO_CHANGE)
    return VerifyResult(verified=verified, confidence=confidence, current_state=str(data.get("current_state", "")),
                        matches_expected=bool(data.get("matches_expected", verified)), screen_changed=changed,
                        change_description=str(data.get("change_description", "")), blocker=blocker,
                        suggestion=suggestion, suggestion_detail=str(data.get("suggestion_detail", "")),
                        outcome=outcome, method="model")


def _quick_reply(data: Any) -> tuple[bool, str]:
    if not isinstance(data, dict) or not isinstance(data.get("changed"), bool):
        raise ValueError("the reply needs a boolean 'changed'")
    return data["changed"], str(data.get("reason", ""))


def _blocker_reply(data: Any) -> Blocker | None:
    if not isinstance(data, dict) or not isinstance(data.get("blocked"), bool):
        raise ValueError("the reply needs a boolean 'blocked'")
    return _blocker_from(data)


Picture = Image.Image | Callable[[], Image.Image]   # a screen's picture, or what takes it when first asked


def _picture(picture: Picture) -> Image.Image:
    return picture if isinstance(picture, Image.Image) else picture()


def _size(picture: Picture) -> tuple[int, int] | None:
    return picture.size if isinstance(picture, Image.Image) else None


class Verifier:
    """``Verifier(config).classify(before, after, hierarchy_after=xml, expected="text:发送")``."""

    def __init__(self, llm_config: LLMConfig | None = None, *, client: ChatModel | None = None,
                 usage: ModelUsage | None = None, matcher: Matcher | None = None) -> None:
        self.config = llm_config
        self._client = client
        self._usage = usage
        self.matcher = matcher or default_matcher

    @property
    def model(self) -> ChatModel | None:
        """The model client, or None when no model is configured (free checks only)."""
        if self._client is None and self.config is not None and self.config.configured:
            self._client = LLMClient(self.config, self._usage)
        return self._client

    @property
    def has_model(self) -> bool:
        return self.model is not None

    def _required_model(self) -> ChatModel:
        model = self.model
        if model is None:
            raise ModelError("no model is configured for this check")
        return model

    def _vision(self) -> bool:
        return self.model is not None and (self.config is None or self.config.supports_vision)

    # -- free ------------------------------------------------------------------------------

    def classify(self, before: Picture, after: Picture, *, hierarchy_before: Any = None,
                 hierarchy_after: Any = None, expected: str | None = None,
                 expected_package: str | None = None) -> VerifyResult:
        """What a before/after comparison says, without a model. The pictures (or what gives them, when asked)
        are compared only when the two trees do not already differ: then they decide whether anything changed."""
        tree_b = rules.as_tree(hierarchy_before, _size(before))
        tree_a = rules.as_tree(hierarchy_after, _size(after))
        t_change = rules.tree_change(tree_b, tree_a) if tree_b is not None and tree_a is not None else None
        if t_change:
            changed, detail = True, f"tree {t_change:.0%} different"
        else:
            change = rules.pixel_change(_picture(before), _picture(after))
            changed, detail = change >= rules.NO_CHANGE_BELOW, f"{change:.1%} of pixels changed"
        if not changed:
            return VerifyResult(False, 0.9, screen_changed=False, change_description=detail,
                                suggestion=SuggestionAction.RETRY, outcome=StepOutcome.NO_CHANGE, method="pixel",
                                suggestion_detail="nothing visible happened; retry the step")
        blocker = rules.detect_blocker_in_tree(tree_a, _size(after) or tree_a.screen_size) if tree_a is not None \
            else None
        if blocker is not None:
            return VerifyResult(False, 0.8, current_state=blocker.description, screen_changed=True,
                                change_description=detail, blocker=blocker, suggestion=SuggestionAction.DISMISS,
                                suggestion_detail=blocker.dismiss_suggestion.description
                                if blocker.dismiss_suggestion else "", outcome=StepOutcome.UNKNOWN, method="tree")
        if tree_a is not None and expected_package and rules.foreground_package(tree_a) not in ("", expected_package):
            return VerifyResult(False, 0.8, current_state=f"in {rules.foreground_package(tree_a)}",
                                screen_changed=True, change_description=detail,
                                suggestion=SuggestionAction.REPLAN, outcome=StepOutcome.WRONG_PAGE, method="tree",
                                suggestion_detail=f"expected {expected_package}")
        found = rules.expectation_in_tree(tree_a, expected) if tree_a is not None and expected else None
        if found is True:
            return VerifyResult(True, 0.9, matches_expected=True, screen_changed=True, change_description=detail,
                                suggestion=SuggestionAction.CONTINUE, outcome=StepOutcome.SUCCEEDED, method="tree")
        if found is False:
            return VerifyResult(False, 0.7, screen_changed=True, change_description=detail,
                                suggestion=SuggestionAction.REPLAN, outcome=StepOutcome.WRONG_PAGE, method="tree",
                                suggestion_detail=f"{expected!r} is not on the new screen")
        return VerifyResult(True, 0.5, screen_changed=True, change_description=detail,
                            suggestion=SuggestionAction.CONTINUE, outcome=StepOutcome.UNKNOWN, method="pixel",
                            suggestion_detail="the screen changed; only a model could confirm what it shows")

    def quick_check(self, before: Image.Image, after: Image.Image, expected_change: str) -> tuple[bool, str]:
        """(worked, why): pixel difference first; a model only in the ambiguous band."""
        change = rules.pixel_change(before, after)
        if change < rules.NO_CHANGE_BELOW:
            return False, f"no visible change ({change:.2%} of pixels)"
        if change >= rules.CHANGED_ABOVE or not expected_change or not self._vision():
            return change >= rules.CHANGED_ABOVE or change >= 0.01, f"{change:.1%} of pixels changed"
        messages = [{"role": "user", "content": render("quick_check", {"expected_change": expected_change})}]
        try:
            changed, why = ask_json(self._required_model(), messages, purpose="verify", images=[before, after],
                                    expect=_quick_reply)
            return bool(changed), str(why)
        except ModelError as exc:
            logger.warning("quick_check model call failed: %s", exc)
            return change >= 0.01, f"{change:.1%} of pixels changed (model failed: {exc.message})"

    # -- with a model when needed ------------------------------------------------------------

    def verify_with_reference(self, expected_ref: Image.Image, current_screenshot: Image.Image,
                              success_condition: str | None = None) -> VerifyResult:
        try:
            score = float(self.matcher(current_screenshot, expected_ref))
        except (ImportError, ValueError) as exc:
            logger.warning("template check unavailable: %s", exc)
            score = 0.0
        if score >= REFERENCE_MATCH:
            return VerifyResult(True, score, matches_expected=True, screen_changed=True,
                                suggestion=SuggestionAction.CONTINUE, outcome=StepOutcome.SUCCEEDED,
                                method="reference", change_description=f"reference found (score {score:.2f})")
        if not self._vision():
            return VerifyResult(False, 1 - score, suggestion=SuggestionAction.RETRY, outcome=StepOutcome.UNKNOWN,
                                method="reference", suggestion_detail=f"reference not found (score {score:.2f})")
        content = render("verify_reference", {"condition": success_condition or "the reference is visible"})
        return self._ask_verdict([{"role": "user", "content": content}], [expected_ref, current_screenshot])

    def verify_with_description(self, current_screenshot: Image.Image, expected_description: str,
                                previous_screenshot: Image.Image | None = None, *,
                                hierarchy: Any = None) -> VerifyResult:
        tree = rules.as_tree(hierarchy, current_screenshot.size)
        if tree is not None:
            blocker = rules.detect_blocker_in_tree(tree, current_screenshot.size)
            if blocker is not None:
                return VerifyResult(False, 0.8, current_state=blocker.description, blocker=blocker,
                                    screen_changed=True, suggestion=SuggestionAction.DISMISS, method="tree",
                                    outcome=StepOutcome.UNKNOWN)
            if rules.expectation_in_tree(tree, expected_description):
                return VerifyResult(True, 0.9, matches_expected=True, screen_changed=True, method="tree",
                                    suggestion=SuggestionAction.CONTINUE, outcome=StepOutcome.SUCCEEDED,
                                    current_state="the expected text is on the screen")
        if self.model is None:
            return VerifyResult(False, 0.3, suggestion=SuggestionAction.CONTINUE, outcome=StepOutcome.UNKNOWN,
                                method="tree", suggestion_detail="no model configured to confirm the expectation")
        images = [previous_screenshot, current_screenshot] if previous_screenshot is not None else [current_screenshot]
        note = render("verify_before_note" if previous_screenshot is not None else "verify_after_note")
        if not self._vision():
            images, note = [], ""
        content = render("verify_description", {"expected": expected_description, "before_note": note.strip(),
                                                "tree_texts": rules.describe_nodes(tree) if tree else "(no tree)"})
        return self._ask_verdict([{"role": "user", "content": content}], images)

    def detect_blocker(self, screenshot: Image.Image | None, hierarchy: Any, *, use_model: bool = True,
                       ime_shown: bool | None = None) -> Blocker | None:
        """Offline rules first; then (``use_model`` and a vision model) the model."""
        size = screenshot.size if screenshot is not None else None
        tree = rules.as_tree(hierarchy, size)
        size = size or (tree.screen_size if tree is not None else None)
        blocker = rules.detect_blocker_in_tree(tree, size, ime_shown=ime_shown)
        if blocker is not None or not use_model or screenshot is None or not self._vision():
            return blocker
        content = render("blocker", {"tree_texts": rules.describe_nodes(tree) if tree else "(no tree)"})
        try:
            found: Blocker | None = ask_json(self._required_model(), [{"role": "user", "content": content}],
                                             purpose="verify", images=[screenshot], expect=_blocker_reply)
            return found
        except ModelError as exc:
            logger.warning("blocker check by model failed: %s", exc)
            return None

    def _ask_verdict(self, messages: list[dict[str, Any]], images: list[Image.Image]) -> VerifyResult:
        try:
            verdict: VerifyResult = ask_json(self._required_model(), messages, purpose="verify", images=images,
                                             expect=verdict_from_reply)
            return verdict
        except ModelError as exc:
            # The world's surprise (a bad reply) becomes a recorded verdict, not a crash.
            return VerifyResult(False, 0.0, suggestion=SuggestionAction.RETRY, outcome=StepOutcome.UNKNOWN,
                                method="model", suggestion_detail=f"model verdict unusable: {exc.message}",
                                current_state=exc.raw[:500])
