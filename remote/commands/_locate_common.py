"""Shared by ``locate`` and ``match``: loading input files, printing and annotating a result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image

from remote.core.record.report import annotate
from remote.errors import ConfigError
from remote.records import LocateResult

EXIT_FOUND, EXIT_NOT_FOUND, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(ConfigError):
    """A file named on the command line is missing or unreadable (exit status 2)."""


def load_image(path: str, what: str) -> Image.Image:
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"{what} not found: {path}")
    try:
        with Image.open(p) as im:
            return im.convert("RGB")
    except OSError as exc:
        raise BadInput(f"{what} is not an image: {path} ({exc})") from exc


def load_text(path: str, what: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"{what} not found: {path}")
    return p.read_text(encoding="utf-8", errors="replace")


def report(result: LocateResult, *, as_json: bool, annotate: str | None, screenshot: Image.Image) -> int:
    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
    elif result.success and result.element is not None:
        el = result.element
        print(f"found by {result.method_used}: box {list(el.bbox)} center {list(el.center)} "
              f"confidence {el.confidence:.3f} in {result.elapsed_ms:.1f} ms"
              + ("" if result.reliable else f" (NOT reliable: {len(result.candidates)} candidates)"))
        for c in result.candidates[1:]:
            print(f"  candidate: box {list(c.bbox)} center {list(c.center)} confidence {c.confidence:.3f}")
    else:
        print(f"not found ({result.elapsed_ms:.1f} ms, tiers {', '.join(result.tiers_tried)}): {result.error}")
    if annotate:
        draw_result(screenshot, result).save(annotate)
        if not as_json:
            print(f"annotated copy: {annotate}")
    return EXIT_FOUND if result.success else EXIT_NOT_FOUND


def draw_result(screenshot: Image.Image, result: LocateResult) -> Image.Image:
    """The box, competing candidates and tap point, drawn as in run reports."""
    el = result.element
    return annotate(screenshot, el.bbox if el else None, el.center if el else None,
                    [c.bbox for c in result.candidates[1:]])


def bad_input(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
