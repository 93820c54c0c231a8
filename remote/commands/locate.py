"""``remote locate SCREENSHOT TARGET [--xml DUMP] [--ref IMAGE] [--module M] [--json] [--annotate OUT]``.

A ``dynamic:`` target, or ``--strategy ai_only`` / ``opencv_first``, asks the configured model exactly as a run
does (``_models.offline_models``); ``dynamic:`` and ``ai_only`` without one: "no model configured", exit 2.
``--json`` adds ``model_calls``: each call's raw reply, the values read, the frame, the size sent and the
mapping to device pixels (docs/models.md, "Reading a model call's record").
"""

from __future__ import annotations

import argparse
import sys

from remote.ai.vision_agent import VisionAgent
from remote.apps import ModuleRegistry
from remote.commands._locate_common import load_image, load_text, report
from remote.commands._models import call_lines, calls_of, offline_models
from remote.commands._modules import registry as module_registry
from remote.config import LLMConfig
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.target_ref import parse_target
from remote.core.records import LocateStrategy
from remote.errors import BadInput
from remote.runner.offline import module_locator


def run(args: argparse.Namespace) -> int:
    screenshot = load_image(args.screenshot, "screenshot")
    xml = load_text(args.xml, "UI dump") if args.xml else None
    ref = load_image(args.ref, "reference image") if args.ref else None
    registry = module_registry()
    if args.module and args.module not in registry.modules:
        raise BadInput(f"module {args.module!r} not found (modules: {', '.join(sorted(registry.modules))})")
    kind, _ = parse_target(args.target)
    strategy = LocateStrategy(args.strategy) if args.strategy else \
        LocateStrategy.OPENCV_FIRST if kind == "dynamic" else LocateStrategy.OPENCV_ONLY
    locator, vision = model_locator(registry, args.module, strategy, args.target)
    if ref is not None:
        result = locator.locate_image(ref, screenshot)
    else:
        result = locator.locate(args.target, screenshot, hierarchy=xml)
    calls = calls_of(result.element) if result.element is not None and result.method_used == "vision" else \
        calls_of(vision) if vision is not None else []
    code = report(result, as_json=args.json, annotate=args.annotate, screenshot=screenshot,
                  extra={"model_calls": calls} if calls else None)
    if calls and not args.json:
        for line in call_lines(calls):
            print(line)
    if not result.success and ref is None and not args.module:
        for hint in module_hints(registry, locator, args.target):
            print(hint, file=sys.stderr if args.json else sys.stdout)
    return code


def model_locator(registry: ModuleRegistry, module: str | None, strategy: LocateStrategy, target: str,
                  config: LLMConfig | None = None) -> tuple[HybridLocator, VisionAgent | None]:
    """The device-less locator `flow` and `replay` use (module images, fixed points) with the configured model as
    its vision tier, built as a run builds it, when the strategy allows one: a ``dynamic:`` target or ``ai_only``
    without a model raises ``ModelNotConfigured``. ``bench/dialect_bench.py`` locates through this too."""
    locator = module_locator(registry, module, strategy)
    if strategy is LocateStrategy.OPENCV_ONLY:
        return locator, None
    kind, _ = parse_target(target)
    needed = kind == "dynamic" or strategy is LocateStrategy.AI_ONLY
    config = config if config is not None else LLMConfig.from_env()
    if not needed and not config.configured:
        return locator, None
    why = repr(target) if kind == "dynamic" else "--strategy ai_only"
    vision = offline_models(locator.assets, why, strategy=strategy, config=config).vision
    locator.vision = vision
    return locator, vision


def module_hints(registry: ModuleRegistry, locator: HybridLocator, target: str) -> list[str]:
    """A reference name that only a module's images hold: which module, and the option that uses it."""
    kind, name = parse_target(target)
    if kind != "ref" or locator.assets.has(name):
        return []
    owners = [m.name for m in registry.modules.values() if AssetsManager(module_dirs=[m.path]).has(name)]
    return [f"hint: {name!r} is a reference image of module {owner}: add --module {owner}" for owner in owners]
