"""``python -m remote plan SCREENSHOT "TASK" [--module M] [--agent]``: plan a task on a screenshot file with the
configured model, as the runner would (the module's images and aliases, its planner prompt, the sensitivity rules).

A model whose family cannot write our JSON plans (ShowUI, UI-TARS, AutoGLM-Phone) is never sent the planner prompt,
as in a run: a phone-agent family gives its next action instead (what ``--agent`` asks of any phone agent), and
a run with ``LLM_AGENT=always`` would let the agent drive too.
"""

from __future__ import annotations

import argparse
import json

from PIL import Image

from remote.apps import AppModule, ModuleRegistry
from remote.commands._agent_turn import agent_turn
from remote.commands._locate_common import load_image, load_text
from remote.commands._modules import registry as module_registry
from remote.config import LLMConfig
from remote.core.locate.assets import AssetsManager
from remote.core.plan import sensitivity
from remote.core.records import LocateStrategy, ModelUsage, TaskPlan
from remote.errors import BadInput, ExitCode, ModelNotConfigured
from remote.runner.models import Budget, LLMModels
from remote.runner.scope import walk


def run(args: argparse.Namespace) -> int:
    config = LLMConfig.from_env().require()   # ModelNotConfigured -> "error: ..." and exit 2 in cli.py
    screenshot = load_image(args.screenshot, "screenshot")
    xml = load_text(args.xml, "UI dump") if args.xml else None
    registry = module_registry()
    module = None
    if args.module:
        if args.module not in registry.modules:
            raise BadInput(f"module {args.module!r} not found (modules: {', '.join(sorted(registry.modules))})")
        module = registry.modules[args.module]
    words = (module or registry.route(args.task)[0]).sensitive   # the words of the module a run routes to
    source = LLMModels(config)
    family = source.family
    if getattr(args, "agent", False):
        return agent_turn(config, args.task, screenshot, xml, words, as_json=args.json)
    if family is not None and family.agent is not None and config.agent == "always":
        return agent_turn(config, args.task, screenshot, xml, words, as_json=args.json,
                          why=f"LLM_AGENT=always: a run lets {family.name} drive the task in its own protocol")
    if family is not None and not family.json_prompts:
        if family.agent is None:
            raise ModelNotConfigured(f"model {config.model!r} (family {family.name}) cannot write plans",
                                     hint="use a model that writes JSON plans, or a template")
        return agent_turn(config, args.task, screenshot, xml, words, as_json=args.json,
                          why=f"{family.name} cannot write plans: a run lets it drive the task in its own protocol")
    return _plan(args, config, source, module, registry, screenshot, xml)


def _plan(args: argparse.Namespace, config: LLMConfig, source: LLMModels, module: AppModule | None,
          registry: ModuleRegistry, screenshot: Image.Image, xml: str | None) -> int:
    # The runner's order: the module's images first, then the others' (a plan may cross apps).
    dirs = [m.path for m in registry.modules.values() if m is not module]
    assets = AssetsManager(module_dirs=[module.path, *dirs] if module is not None else dirs)
    usage = ModelUsage()
    models = source.start(usage, Budget(), assets, LocateStrategy.OPENCV_FIRST)
    if models.planner is None:
        raise ModelNotConfigured(models.no_planner or f"model {config.model!r} cannot plan")
    plan = models.planner.plan(args.task, screenshot, module=module, hierarchy=xml)
    _mark(plan, (module or registry.route(args.task)[0]).sensitive)
    if args.json:
        print(json.dumps({"plan": plan.to_dict(), "usage": usage.by_purpose}, ensure_ascii=False, indent=1))
        return ExitCode.OK
    print(f"plan for: {args.task}  ({len(plan.steps)} steps, {usage.total_tokens} tokens)")
    for step in plan.steps:
        target = f" {' | '.join(step.targets)}" if step.targets else ""
        params = f" {json.dumps(step.params, ensure_ascii=False)}" if step.params else ""
        sensitive = f"  [asks first: {step.sensitive_reason}]" if step.sensitive else ""
        dynamic = "  (a model's dynamic: target: a run also asks first if what it finds has no label or a " \
                  "sensitive word)" if any(t.startswith("dynamic:") for t in step.targets) and not step.sensitive else ""
        print(f"  {step.step}. {step.action.value}{target}{params}  {step.description}{sensitive}{dynamic}")
    if plan.success_check:
        print(f"final check: {plan.success_check.describe()}")
    if plan.success_criteria:
        print(f"success: {plan.success_criteria}")
    for repair in plan.analysis.get("repairs", []):
        print(f"repaired: {repair}")
    return ExitCode.OK


def _mark(plan: TaskPlan, words: tuple[str, ...]) -> None:
    """The run's rules on a model's steps (``TaskRunner._marked``): a raw ``xy:`` tap, a sensitive word, what a
    step does; a block's inner steps too."""
    for step in walk(plan.steps):
        sensitivity.mark(step, words)
