"""``remote locate SCREENSHOT TARGET [--xml DUMP] [--ref IMAGE] [--module M] [--json] [--annotate OUT]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from remote.commands._locate_common import BadInput, bad_input, load_image, load_text, report
from remote.core.assets import AssetsManager
from remote.core.hybrid_locator import HybridLocator, LocateStrategy

APPS_DIR = Path(__file__).resolve().parent.parent / "apps"


def _assets(module: str | None) -> AssetsManager:
    dirs = []
    if module:
        d = APPS_DIR / module
        if not d.is_dir():
            raise BadInput(f"module {module!r} not found in {APPS_DIR}")
        dirs.append(d)
    return AssetsManager(module_dirs=dirs)


def run(args: argparse.Namespace) -> int:
    try:
        screenshot = load_image(args.screenshot, "screenshot")
        xml = load_text(args.xml, "UI dump") if args.xml else None
        ref = load_image(args.ref, "reference image") if args.ref else None
        assets = _assets(args.module)
    except BadInput as exc:
        return bad_input(str(exc))
    locator = HybridLocator(assets=assets, strategy=LocateStrategy(args.strategy))
    if ref is not None:
        result = locator.locate_image(ref, screenshot)
    else:
        result = locator.locate(args.target, screenshot, hierarchy=xml)
    return report(result, as_json=args.json, annotate=args.annotate, screenshot=screenshot)
