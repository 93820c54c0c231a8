"""``python -m remote verify SCREENSHOT "EXPECTATION" [--xml DUMP]``: check a screen against an expectation.

Answered without a model whenever the screen can tell: the UI tree (``--xml``),
else OCR of the screenshot; the configured model decides only what neither can.
Exit 0 verified, 1 not verified, 2 bad input or (only then) no model for a
question only a model can answer.
"""

from __future__ import annotations

import argparse
import json

from remote.commands._locate_common import load_image, load_text
from remote.config import LLMConfig
from remote.core.locate import ocr
from remote.core.plan import blockers as rules
from remote.core.records import StepOutcome, SuggestionAction, VerifyResult
from remote.errors import ExitCode, ModelNotConfigured


def _free_verdict(screenshot_text: list[str] | None, tree_answer: bool | None, expectation: str) -> VerifyResult | None:
    if tree_answer is not None:
        return VerifyResult(tree_answer, 0.9, matches_expected=tree_answer, method="tree",
                            outcome=StepOutcome.SUCCEEDED if tree_answer else StepOutcome.WRONG_PAGE,
                            current_state="the UI tree " + ("shows" if tree_answer else "does not show") + " it")
    if screenshot_text is not None:
        answer = rules.expectation_in_texts(screenshot_text, expectation)
        if answer is not None:
            return VerifyResult(answer, 0.8, matches_expected=answer, method="ocr",
                                outcome=StepOutcome.SUCCEEDED if answer else StepOutcome.WRONG_PAGE,
                                current_state="OCR " + ("reads" if answer else "does not read") + " it")
    return None


def run(args: argparse.Namespace) -> int:
    screenshot = load_image(args.screenshot, "screenshot")
    tree = rules.as_tree(load_text(args.xml, "UI dump"), screenshot.size) if args.xml else None
    tree_answer = rules.expectation_in_tree(tree, args.expectation) if tree is not None else None
    lines = None
    if tree_answer is None and ocr.available():
        lines = [box.text for box in ocr.read_text(screenshot)]
    result = _free_verdict(lines, tree_answer, args.expectation)
    usage: dict[str, dict[str, float]] = {}
    if result is None:
        config = LLMConfig.from_env()
        if not config.configured:
            raise ModelNotConfigured("neither the UI tree nor OCR can decide this expectation, and no model is "
                                     "configured", hint="give --xml, write it as text:X, or set LLM_PROVIDER "
                                                        "(docs/models.md)")
        from remote.ai.llm import LLMClient
        from remote.ai.verifier import Verifier

        client = LLMClient(config)
        result = Verifier(config, client=client).verify_with_description(screenshot, args.expectation,
                                                                        hierarchy=tree)
        usage = client.usage.by_purpose
    if args.json:
        print(json.dumps({"result": result.to_dict(), "usage": usage}, ensure_ascii=False, indent=1))
    else:
        verdict = "verified" if result.verified else "NOT verified"
        print(f"{verdict} ({result.method}, confidence {result.confidence:.2f}): {args.expectation}")
        for label, value in (("screen", result.current_state), ("blocker", result.blocker and
                              result.blocker.description), ("detail", result.suggestion_detail)):
            if value:
                print(f"  {label}: {value}")
        if result.suggestion is not SuggestionAction.CONTINUE:
            print(f"  next: {result.suggestion.value}")
    return ExitCode.OK if result.verified else ExitCode.FAILED
