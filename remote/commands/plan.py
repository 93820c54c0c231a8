"""``python -m remote plan SCREENSHOT "TASK" [--module M]``: plan a task on a screenshot file with the configured
model, as the runner would (the module's images and aliases, its planner prompt)."""

from __future__ import annotations

import argparse
import json

from remote.commands._locate_common import load_image, load_text
from remote.commands._modules import registry as module_registry
from remote.config import LLMConfig
from remote.core.locate.assets import AssetsManager
from remote.errors import BadInput, ExitCode


def run(args: argparse.Namespace) -> int:
    from remote.ai.llm import LLMClient
    from remote.ai.planner import Planner

    config = LLMConfig.from_env().require()   # ModelNotConfigured -> "error: ..." and exit 2 in cli.py
    screenshot = load_image(args.screenshot, "screenshot")
    xml = load_text(args.xml, "UI dump") if args.xml else None
    registry = module_registry()
    module = None
    if args.module:
        if args.module not in registry.modules:
            raise BadInput(f"module {args.module!r} not found (modules: {', '.join(sorted(registry.modules))})")
        module = registry.modules[args.module]
    # The runner's order: the module's images first, then the others' (a plan may cross apps).
    dirs = [m.path for m in registry.modules.values() if m is not module]
    assets = AssetsManager(module_dirs=[module.path, *dirs] if module is not None else dirs)
    client = LLMClient(config)
    plan = Planner(config, client=client, assets=assets).plan(args.task, screenshot, module=module, hierarchy=xml)
    if args.json:
        print(json.dumps({"plan": plan.to_dict(), "usage": client.usage.by_purpose}, ensure_ascii=False, indent=1))
        return ExitCode.OK
    print(f"plan for: {args.task}  ({len(plan.steps)} steps, {client.usage.total_tokens} tokens)")
    for step in plan.steps:
        target = f" {' | '.join(step.targets)}" if step.targets else ""
        params = f" {json.dumps(step.params, ensure_ascii=False)}" if step.params else ""
        sensitive = f"  [asks first: {step.sensitive_reason}]" if step.sensitive else ""
        print(f"  {step.step}. {step.action.value}{target}{params}  {step.description}{sensitive}")
    if plan.success_check:
        print(f"final check: {plan.success_check.describe()}")
    if plan.success_criteria:
        print(f"success: {plan.success_criteria}")
    for repair in plan.analysis.get("repairs", []):
        print(f"repaired: {repair}")
    return ExitCode.OK
