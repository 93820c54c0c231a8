"""Replay: re-decide every step of a recorded run from its stored screens, offline, and diff the decisions.

A decision is where a step's target was found (tier, box, success) and what the
before/after comparison concluded. Replay uses no device and no model: steps the
vision model located are reported as not replayable offline, not as changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.core.record.report import load_record
from remote.runner.looking import again as look_again

if TYPE_CHECKING:
    from remote.apps import ModuleRegistry

CENTER_TOLERANCE_PX = 4


@dataclass
class Decision:
    step: int
    kind: str          # "locate" | "verify" | "look" (a flow step's: is it there, what does it say)
    recorded: str
    replayed: str
    changed: bool
    note: str = ""


def _image(run_dir: Path, name: str | None) -> Image.Image | None:
    if not name or not (run_dir / name).is_file():
        return None
    with Image.open(run_dir / name) as img:
        return img.convert("RGB")


def _xml(run_dir: Path, name: str | None) -> str | None:
    return (run_dir / name).read_text(encoding="utf-8") if name and (run_dir / name).is_file() else None


def _center(bbox: Any) -> tuple[int, int] | None:
    return ((bbox[0] + bbox[2]) // 2, (bbox[1] + bbox[3]) // 2) if bbox else None


def _locate_decision(n: int, step: dict[str, Any], recorded: dict[str, Any], screen: Screen,
                     locator: HybridLocator) -> Decision:
    target = recorded.get("matched_ref") or step["target_ref"]   # of a step's alternatives, the one that matched
    rec_ok, rec_tier = recorded.get("success", False), recorded.get("method_used", "")
    rec_box = (recorded.get("element") or {}).get("bbox")
    if "vision" in rec_tier:
        return Decision(n, "locate", f"{rec_tier} {rec_box}", "-", False, "located by the model: not replayable offline")
    res = locator.locate(target, screen)
    box = list(res.element.bbox) if res.element else None
    here, there = _center(box), _center(rec_box)
    same = res.success == rec_ok and (not res.success or (
        res.method_used.split("+")[0] == rec_tier.split("+")[0] and here is not None and there is not None
        and max(abs(a - b) for a, b in zip(here, there, strict=True)) <= CENTER_TOLERANCE_PX))
    return Decision(n, "locate", _said(rec_ok, rec_tier, rec_box), _said(res.success, res.method_used, box),
                    not same)


def _said(found: bool, tier: str, box: Any) -> str:
    return f"{'found' if found else 'not found'} {tier} {box or ''}".strip()


def _looks(run_dir: Path, n: int, sr: dict[str, Any], locator: HybridLocator) -> list[Decision]:
    """A flow step's looks (its when, waits, scrolls, reads), decided again on the screens they were made on."""
    out = []
    for look in sr.get("looks") or []:
        if not isinstance(look, dict):
            continue
        what = f"{look.get('kind')} {look.get('target')}"
        image = _image(run_dir, look.get("image"))
        if image is None:
            if look.get("kind") in ("app", "version"):
                out.append(Decision(n, "look", f"{what}: {look.get('seen')}", "-", False,
                                    "decided by the phone (the app in front, its version): not replayable offline"))
            continue
        recorded, replayed = look_again(look, sr.get("step") or {}, Screen(image, _xml(run_dir, look.get("xml"))), locator)
        out.append(Decision(n, "look", f"{what}: {recorded}", f"{what}: {replayed}", recorded != replayed))
    return out


def replay_run(run_dir: str | Path, *, verifier: Any = None,
               registry: ModuleRegistry | None = None) -> list[Decision]:
    """Every decision of the record, re-made; ``changed`` marks the ones that differ. ``registry``: the
    modules the run had (the CLI passes the shipped ones and REMOTE_MODULES'); default the shipped ones."""
    from remote.ai.verifier import Verifier
    from remote.apps import ModuleRegistry
    from remote.runner.offline import module_locator  # the same locator the CLI tools use

    run_dir = Path(run_dir)
    data = load_record(run_dir)
    locator = module_locator(registry or ModuleRegistry(), data.get("module"))
    verifier = verifier or Verifier(None)
    out: list[Decision] = []
    for sr in data.get("steps") or []:
        step, arts = sr.get("step") or {}, sr.get("artifacts") or {}
        n = step.get("step", 0)
        before = _image(run_dir, arts.get("before"))
        recorded = sr.get("locate_result")
        if step.get("target_ref") and recorded and before is not None:
            screen = Screen(before, _xml(run_dir, arts.get("before_xml")))
            out.append(_locate_decision(n, step, recorded, screen, locator))
        out += _looks(run_dir, n, sr, locator)
        after = _image(run_dir, arts.get("after"))
        verdict = sr.get("verify_result") or {}
        if before is not None and after is not None and verdict.get("method") in ("pixel", "tree"):
            again = verifier.classify(before, after, hierarchy_before=_xml(run_dir, arts.get("before_xml")),
                                      hierarchy_after=_xml(run_dir, arts.get("after_xml")),
                                      expected=step.get("success_condition"))
            rec = verdict.get("outcome", "")
            out.append(Decision(n, "verify", rec, again.outcome.value, again.outcome.value != rec))
    return out
