"""Replay: re-decide every step of a recorded run from its stored screens, offline, and diff the decisions.

A decision is where a step's target was found (tier, box, success) and what the
before/after comparison concluded. Replay uses no device and no model: steps the
vision model located are reported as not replayable offline, not as changes.

run.json is not trusted (a record may come from another host, or be edited): it is
read within a size cap, every field replay uses is checked once (a wrong type is a
`BadInput` naming the field), and only files inside the record's folder are opened,
as `report` does (no absolute paths, no ``..``, no symlinks leading out).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from remote.core.imagefile import open_image
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import FrameLater, Screen
from remote.core.locate.ui_tree import UITreeError, parse_hierarchy
from remote.core.record.report import MAX_DUMP_BYTES, inside, load_record
from remote.core.records import LocateResult, UIElement
from remote.errors import BadInput, FrameGone
from remote.runner import focus
from remote.runner.looking import again as look_again

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from remote.apps import ModuleRegistry

CENTER_TOLERANCE_PX = 4
ARTIFACTS = ("before", "after", "before_xml", "after_xml")


@dataclass
class Decision:
    step: int
    kind: str          # "locate" | "verify" | "look" (a flow step's: is it there, what does it say)
    recorded: str
    replayed: str
    changed: bool
    note: str = ""


@dataclass(frozen=True)
class _Step:
    """What replay reads of one step of run.json, checked once."""

    n: int
    target: str | None               # the target the step located: of its alternatives, the one that matched
    expected: str | None             # the step's success condition
    located: dict[str, Any] | None   # success, method_used, bbox of the recorded locate result
    verified: dict[str, str]         # method, outcome of the recorded check after the step
    files: dict[str, str]            # before, after, before_xml, after_xml: names inside the record folder
    plan: dict[str, Any]             # the step as it ran (an extract's params, targets)
    looks: tuple[dict[str, Any], ...] = ()   # a flow step's looks: kind, target, seen, value, image, xml


class _Fields:
    """Typed reads of run.json's fields; a wrong type is a BadInput naming the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def bad(self, where: str, want: str, value: Any) -> BadInput:
        return BadInput(f"{self.path}: {where} must be {want}, not {type(value).__name__} {str(value)[:40]!r}",
                        hint="the record is damaged or was edited; replay a record as `remote run` wrote it")

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.bad(where, "an object", value)
        return value

    def text(self, value: Any, where: str) -> str | None:
        if value is None or isinstance(value, str):
            return value or None
        raise self.bad(where, "text", value)

    def number(self, value: Any, where: str, default: int = 0) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.bad(where, "a number", value)
        return int(value)

    def flag(self, value: Any, where: str) -> bool:
        if value is None or isinstance(value, bool):
            return bool(value)
        raise self.bad(where, "true or false", value)

    def box(self, value: Any, where: str) -> list[int] | None:
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != 4:
            raise self.bad(where, "a box of four numbers", value)
        return [self.number(v, f"{where}[{i}]") for i, v in enumerate(value)]

    def step(self, raw: Any, where: str) -> _Step:
        sr = self.obj(raw, where)
        plan = self.obj(sr.get("step"), f"{where}.step")
        arts = self.obj(sr.get("artifacts"), f"{where}.artifacts")
        files = {k: name for k in ARTIFACTS if (name := self.text(arts.get(k), f"{where}.artifacts.{k}"))}
        target = self.text(plan.get("target_ref"), f"{where}.step.target_ref")
        loc = self.obj(sr.get("locate_result"), f"{where}.locate_result")
        located = None
        if loc:
            element = self.obj(loc.get("element"), f"{where}.locate_result.element")
            located = {"success": self.flag(loc.get("success"), f"{where}.locate_result.success"),
                       "method_used": self.text(loc.get("method_used"), f"{where}.locate_result.method_used") or "",
                       "bbox": self.box(element.get("bbox"), f"{where}.locate_result.element.bbox")}
            target = target and (self.text(loc.get("matched_ref"), f"{where}.locate_result.matched_ref") or target)
        verdict = self.obj(sr.get("verify_result"), f"{where}.verify_result")
        verified = {k: self.text(verdict.get(k), f"{where}.verify_result.{k}") or "" for k in ("method", "outcome")}
        return _Step(self.number(plan.get("step"), f"{where}.step.step"), target,
                     self.text(plan.get("success_condition"), f"{where}.step.success_condition"), located, verified,
                     files, plan, self.looks(sr.get("looks"), f"{where}.looks"))

    def looks(self, value: Any, where: str) -> tuple[dict[str, Any], ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.bad(where, "a list", value)
        out = []
        for i, raw in enumerate(value):
            look = self.obj(raw, f"{where}[{i}]")
            out.append({**{k: self.text(look.get(k), f"{where}[{i}].{k}") for k in ("kind", "target", "image", "xml")},
                        "seen": None if look.get("seen") is None else self.flag(look.get("seen"), f"{where}[{i}].seen"),
                        "value": look.get("value")})
        return tuple(out)


def _file(run_dir: Path, name: str | None) -> Path | None:
    """The record's file ``name``; a name run.json gives that is no file inside the folder is said, not read."""
    path = inside(run_dir, name)
    if path is None and name:
        logger.warning("%s names %r, which is not a file inside the record's folder: not read", run_dir, name)
    return path


def _image(run_dir: Path, name: str | None) -> Image.Image | None:
    path = _file(run_dir, name)
    return open_image(path, "recorded screenshot") if path is not None else None


def _xml(run_dir: Path, name: str | None) -> str | None:
    path = _file(run_dir, name)
    if path is None:
        return None
    if path.stat().st_size > MAX_DUMP_BYTES:
        raise BadInput(f"{path} is larger than a UI dump ({MAX_DUMP_BYTES // 1_000_000} MB)")
    return path.read_text(encoding="utf-8", errors="replace")


def _center(bbox: Any) -> tuple[int, int] | None:
    return ((bbox[0] + bbox[2]) // 2, (bbox[1] + bbox[3]) // 2) if bbox else None


def _locate_decision(step: _Step, screen: Screen, locator: HybridLocator) -> Decision:
    recorded = step.located or {}
    rec_ok, rec_tier, rec_box = recorded.get("success", False), recorded.get("method_used", ""), recorded.get("bbox")
    if "vision" in rec_tier:
        return Decision(step.n, "locate", f"{rec_tier} {rec_box}", "-", False,
                        "located by the model: not replayable offline")
    res = locator.locate(step.target or "", screen)
    box = list(res.element.bbox) if res.element else None
    here, there = _center(box), _center(rec_box)
    same = res.success == rec_ok and (not res.success or (
        res.method_used.split("+")[0] == rec_tier.split("+")[0] and here is not None and there is not None
        and max(abs(a - b) for a, b in zip(here, there, strict=True)) <= CENTER_TOLERANCE_PX))
    return Decision(step.n, "locate", _said(rec_ok, rec_tier, rec_box), _said(res.success, res.method_used, box),
                    not same)


def _said(found: bool, tier: str, box: Any) -> str:
    return f"{'found' if found else 'not found'} {tier} {box or ''}".strip()


def _looks(run_dir: Path, step: _Step, locator: HybridLocator) -> list[Decision]:
    """A flow step's looks (its when, waits, scrolls, reads), decided again on the screens they were made on."""
    out = []
    for look in step.looks:
        what = f"{look['kind']} {look['target']}"
        screen = _screen(run_dir, look["image"], look["xml"])
        if screen is None:
            if look["kind"] in ("app", "version"):
                out.append(Decision(step.n, "look", f"{what}: {look['seen']}", "-", False,
                                    "decided by the phone (the app in front, its version): not replayable offline"))
            continue

        def again(look: dict[str, Any] = look, screen: Screen = screen, what: str = what) -> Decision:
            recorded, replayed = look_again(look, step.plan, screen, locator)
            return Decision(step.n, "look", f"{what}: {recorded}", f"{what}: {replayed}", recorded != replayed)
        out.append(_offline(step, "look", again))
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
    fields = _Fields(run_dir / "run.json")
    steps = data.get("steps")
    if steps is not None and not isinstance(steps, list):
        raise fields.bad("steps", "a list", steps)
    checked = [fields.step(sr, f"steps[{i}]") for i, sr in enumerate(steps or [])]
    locator = module_locator(registry or ModuleRegistry(), fields.text(data.get("module"), "module"))
    verifier = verifier or Verifier(None)
    out: list[Decision] = []
    for step in checked:
        try:
            out += _decisions(run_dir, step, locator, verifier)
        except UITreeError as exc:   # a dump of the record that is not one
            raise BadInput(f"step {step.n} of {run_dir}: {exc.message}", hint=exc.hint) from exc
    return out


def _decisions(run_dir: Path, step: _Step, locator: HybridLocator, verifier: Any) -> list[Decision]:
    out = []
    before = _screen(run_dir, step.files.get("before"), step.files.get("before_xml"))
    after = _screen(run_dir, step.files.get("after"), step.files.get("after_xml"))
    if step.target and step.located is not None and before is not None:
        out.append(_offline(step, "locate", lambda: _locate_decision(step, before, locator)))
    out += _looks(run_dir, step, locator)
    if before is not None and after is not None and step.verified["method"] == focus.METHOD:
        out.append(_offline(step, "verify", lambda: _focus_decision(step, before, after)))
    elif before is not None and after is not None and step.verified["method"] in ("pixel", "tree"):
        def verdict() -> Decision:
            again = verifier.classify(lambda: before.pil, lambda: after.pil, hierarchy_before=before.tree(),
                                      hierarchy_after=after.tree(), expected=step.expected)
            rec = step.verified["outcome"]
            return Decision(step.n, "verify", rec, again.outcome.value, again.outcome.value != rec)
        out.append(_offline(step, "verify", verdict))
    return out


def _screen(run_dir: Path, image: str | None, xml_name: str | None) -> Screen | None:
    """A recorded screen: its picture and tree, or (``--frames needed`` recorded no picture of it: the run judged
    it on the tree) its tree alone, whose pixels are said to be missing when something asks for them."""
    picture, xml = _image(run_dir, image), _xml(run_dir, xml_name)
    if picture is not None:
        return Screen(picture, xml)
    if xml is None:
        return None
    return Screen(FrameLater(parse_hierarchy(xml).screen_size, _no_picture), xml)


def _no_picture() -> tuple[Any, bool]:
    raise FrameGone("the record keeps this screen's tree, not its picture (the run did not read its pixels)")


def _offline(step: _Step, kind: str, decide: Callable[[], Decision]) -> Decision:
    """``decide()``, or, when it needs a picture the record does not keep, that said (not a change)."""
    try:
        return decide()
    except FrameGone:
        return Decision(step.n, kind, "-", "-", False, "needs a picture the record does not keep: not replayable")


def _focus_decision(step: _Step, before: Screen, after: Screen) -> Decision:
    """A tap the next step typed after, judged on the field the tree after it shows focused (`focus`): made
    again from the recorded trees and the box the step aimed at (the keyboard was only a further sign)."""
    box = (step.located or {}).get("bbox")
    element = UIElement(element_type="", bbox=tuple(box), confidence=1.0) if box else None
    again = focus.focus_on_tree(before, after, LocateResult(element is not None, element), keyboard=False)
    replayed = again.outcome.value if again is not None else "no focused field in the recorded trees"
    recorded = step.verified["outcome"]
    return Decision(step.n, "verify", recorded, replayed, replayed != recorded)
