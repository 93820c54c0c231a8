"""Shared by the offline commands (locate, match, verify, flow, plan): input files, printing a result."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PIL import Image

from remote.core.coords import describe_visibility
from remote.core.imagefile import open_image
from remote.core.record.report import annotate
from remote.core.records import LocateFailure, LocateResult
from remote.errors import BadInput, ExitCode

MAX_TEXT_BYTES = 20_000_000   # a UI dump is 20-500 kB


def load_image(path: str, what: str) -> Image.Image:
    return open_image(path, what)


def load_text(path: str, what: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"{what} not found: {path}")
    if p.stat().st_size > MAX_TEXT_BYTES:
        raise BadInput(f"{what} {p.name} is larger than {MAX_TEXT_BYTES // 1_000_000} MB")
    return p.read_text(encoding="utf-8", errors="replace")


def report(result: LocateResult, *, as_json: bool, annotate: str | None, screenshot: Image.Image,
           extra: dict[str, Any] | None = None) -> int:
    """Print a locate result (``extra`` keys added to its JSON); exit 0 when found reliably, 1 when not found or
    ambiguous."""
    found = result.success and result.reliable and result.element is not None
    if result.failure is LocateFailure.UNAVAILABLE:   # a broken install: the environment failed, exit 2
        if as_json:
            print(json.dumps({**result.to_dict(), **(extra or {})}, ensure_ascii=False, indent=1))
        print(f"error: {result.error}", file=sys.stderr)
        return ExitCode.ENVIRONMENT
    if as_json:
        print(json.dumps({**result.to_dict(), **(extra or {})}, ensure_ascii=False, indent=1))
    elif result.success and result.element is not None:
        el = result.element
        where = f"box {list(el.bbox)} center {list(el.center)} confidence {el.confidence:.3f}"
        if result.reliable:
            print(f"found by {result.method_used}: {where} in {result.elapsed_ms:.1f} ms")
        else:   # the verdict first: a best candidate is shown, but it is no find (exit 1)
            print(f"AMBIGUOUS ({result.method_used}, {result.elapsed_ms:.1f} ms): {len(result.candidates)} places "
                  "match nearly as well, so a run would not tap any of them (exit 1)")
            print(f"  best: {where}")
        for c in result.candidates[1:]:
            print(f"  candidate: box {list(c.bbox)} center {list(c.center)} confidence {c.confidence:.3f}")
    else:
        why = result.error
        if result.failure is LocateFailure.NOT_INTERACTABLE and result.element is not None:
            why = f"found at {list(result.element.bbox)}, but {describe_visibility(result.element.visible_region)}"
        print(f"not found ({result.elapsed_ms:.1f} ms, tiers {', '.join(result.tiers_tried) or '-'}): {why}")
        for c in result.candidates[:3]:
            print(f"  near: box {list(c.bbox)} {c.description[:40]!r} confidence {c.confidence:.3f}")
    if annotate:
        draw_result(screenshot, result).save(annotate)
        if not as_json:
            print(f"annotated copy: {annotate}")
    return ExitCode.OK if found else ExitCode.FAILED


def draw_result(screenshot: Image.Image, result: LocateResult) -> Image.Image:
    """The box (green), competing candidates and the tap point, drawn as in run reports."""
    el = result.element
    return annotate(screenshot, el.bbox if el else None, el.center if el else None,
                    [c.bbox for c in result.candidates[1:]])
