"""``remote match REF SCREENSHOT [--json] [--annotate OUT]``: template -> multiscale -> ORB, offline."""

from __future__ import annotations

import argparse

from remote.commands._locate_common import load_image, report
from remote.core.locate.hybrid_locator import HybridLocator


def run(args: argparse.Namespace) -> int:
    ref = load_image(args.ref, "reference image")
    screenshot = load_image(args.screenshot, "screenshot")
    result = HybridLocator(strategy="opencv_only").locate_image(ref, screenshot)
    return report(result, as_json=args.json, annotate=args.annotate, screenshot=screenshot)
