"""``python -m remote verify SCREENSHOT "EXPECTATION" [--xml DUMP]``: check a screen against an expectation.

The UI tree (with ``--xml``) is checked first; the configured model decides
when the tree cannot. Exit 0 when verified, 1 when not, 2 without a model or
with an unreadable file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from remote.commands.plan import EXIT_ENV, EXIT_FAILED, EXIT_OK, load_screenshot
from remote.config import LLMConfig


def run(args: argparse.Namespace) -> int:
    from remote.ai.llm import LLMClient
    from remote.ai.verifier import Verifier

    config = LLMConfig.from_env().require()   # ModelNotConfigured -> "error: ..." and exit 2 in cli.py
    screenshot = load_screenshot(args.screenshot)
    if screenshot is None:
        return EXIT_ENV
    hierarchy = None
    if args.xml:
        try:
            hierarchy = Path(args.xml).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            print(f"error: cannot read UI dump {args.xml!r}: {exc}", file=sys.stderr)
            return EXIT_ENV
    client = LLMClient(config)
    result = Verifier(config, client=client).verify_with_description(screenshot, args.expectation,
                                                                    hierarchy=hierarchy)
    if args.json:
        print(json.dumps({"result": result.to_dict(), "usage": client.usage.by_purpose}, ensure_ascii=False,
                         indent=1))
    else:
        verdict = "verified" if result.verified else "NOT verified"
        print(f"{verdict} ({result.method}, confidence {result.confidence:.2f}): {args.expectation}")
        for label, value in (("screen", result.current_state), ("blocker", result.blocker and
                              result.blocker.description), ("next", result.suggestion.value),
                             ("detail", result.suggestion_detail)):
            if value:
                print(f"  {label}: {value}")
    return EXIT_OK if result.verified else EXIT_FAILED
