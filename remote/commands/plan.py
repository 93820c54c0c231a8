"""``python -m remote plan SCREENSHOT "TASK"``: plan a task on a screenshot file with the configured model."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from remote.config import LLMConfig

EXIT_OK, EXIT_FAILED, EXIT_ENV = 0, 1, 2


def load_screenshot(path: str) -> Image.Image | None:
    """The image, or None after printing why (the caller exits 2)."""
    try:
        with Image.open(Path(path)) as img:
            return img.convert("RGB")
    except (OSError, UnidentifiedImageError) as exc:
        print(f"error: cannot read screenshot {path!r}: {exc}", file=sys.stderr)
        return None


def _module(name: str | None) -> Path | None:
    if not name:
        return None
    folder = Path(__file__).resolve().parent.parent / "apps" / name
    return folder if folder.is_dir() else None


def run(args: argparse.Namespace) -> int:
    from remote.ai.llm import LLMClient
    from remote.ai.planner import Planner
    from remote.core.locate.assets import AssetsManager

    config = LLMConfig.from_env().require()   # ModelNotConfigured -> "error: ..." and exit 2 in cli.py
    screenshot = load_screenshot(args.screenshot)
    if screenshot is None:
        return EXIT_ENV
    module = _module(args.module)
    assets = AssetsManager(module_dirs=[module / "images"] if module else ())
    client = LLMClient(config)
    plan = Planner(config, client=client, assets=assets).plan(args.task, screenshot, module=module)
    if args.json:
        print(json.dumps({"plan": plan.to_dict(), "usage": client.usage.by_purpose}, ensure_ascii=False, indent=1))
        return EXIT_OK
    print(f"plan for: {args.task}  ({len(plan.steps)} steps, {client.usage.total_tokens} tokens)")
    for step in plan.steps:
        target = f" {step.target_ref}" if step.target_ref else ""
        params = f" {json.dumps(step.params, ensure_ascii=False)}" if step.params else ""
        print(f"  {step.step}. {step.action.value}{target}{params}  {step.description}")
    if plan.success_criteria:
        print(f"success: {plan.success_criteria}")
    for repair in plan.analysis.get("repairs", []):
        print(f"repaired: {repair}")
    return EXIT_OK
