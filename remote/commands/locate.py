"""``remote locate SCREENSHOT TARGET [--xml DUMP] [--ref IMAGE] [--module M] [--json] [--annotate OUT]``."""

from __future__ import annotations

import argparse

from remote.commands._locate_common import load_image, load_text, report
from remote.commands._modules import registry as module_registry
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
    return report(result, as_json=args.json, annotate=args.annotate, screenshot=screenshot)
