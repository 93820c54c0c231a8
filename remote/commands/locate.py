"""``remote locate SCREENSHOT TARGET [--xml DUMP] [--ref IMAGE] [--module M] [--json] [--annotate OUT]``."""

from __future__ import annotations

import argparse
import sys

from remote.apps import ModuleRegistry
from remote.commands._locate_common import load_image, load_text, report
from remote.commands._modules import registry as module_registry
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.target_ref import parse_target
from remote.errors import BadInput
from remote.runner.offline import module_locator


def run(args: argparse.Namespace) -> int:
    screenshot = load_image(args.screenshot, "screenshot")
    xml = load_text(args.xml, "UI dump") if args.xml else None
    ref = load_image(args.ref, "reference image") if args.ref else None
    registry = module_registry()
    if args.module and args.module not in registry.modules:
        raise BadInput(f"module {args.module!r} not found (modules: {', '.join(sorted(registry.modules))})")
    # the same device-less locator `flow` and `replay` use: module images and fixed points
    locator = module_locator(registry, args.module, args.strategy)
    if ref is not None:
        result = locator.locate_image(ref, screenshot)
    else:
        result = locator.locate(args.target, screenshot, hierarchy=xml)
    code = report(result, as_json=args.json, annotate=args.annotate, screenshot=screenshot)
    if not result.success and ref is None and not args.module:
        for hint in module_hints(registry, locator, args.target):
            print(hint, file=sys.stderr if args.json else sys.stdout)
    return code


def module_hints(registry: ModuleRegistry, locator: HybridLocator, target: str) -> list[str]:
    """A reference name that only a module's images hold: which module, and the option that uses it."""
    kind, name = parse_target(target)
    if kind != "ref" or locator.assets.has(name):
        return []
    owners = [m.name for m in registry.modules.values() if AssetsManager(module_dirs=[m.path]).has(name)]
    return [f"hint: {name!r} is a reference image of module {owner}: add --module {owner}" for owner in owners]
