"""`remote flow SCREENSHOT "TASK"`: route, plan (template or model) and locate every step on one screenshot."""

from __future__ import annotations

import argparse
import json
from typing import Any

from PIL import Image

from remote.apps import AppModule, ModuleRegistry
from remote.apps.near import did_you_mean
from remote.commands._locate_common import load_image, load_text
from remote.commands._modules import registry as module_registry
from remote.config import LLMConfig
from remote.core.locate.screen import Screen
from remote.core.record.report import annotate
from remote.core.records import StepPlan, TaskPlan, UIElement
from remote.errors import ModelNotConfigured
from remote.runner.offline import module_locator


def run(args: argparse.Namespace) -> int:
    image = load_image(args.screenshot, "screenshot")
    xml = load_text(args.xml, "UI dump") if args.xml else None
    registry = module_registry()
    module, score = (registry.get(args.module), 1.0) if args.module else registry.route(args.task)
    plan = registry.handler(module).plan(args.task) or _model_plan(args, registry, module, image, xml)
    locator = module_locator(registry, module.name)
    screen = Screen(image, xml)
    rows: list[dict[str, Any]] = []
    boxes = []
    for step in plan.steps:
        row, el = _located(step, locator, screen)
        rows.append(row)
        if el is not None:
            boxes.append((step.step, el))
    if args.annotate:
        out = image
        for _, el in boxes:
            out = annotate(out, el.bbox, el.center)
        out.save(args.annotate)
    if args.json:
        print(json.dumps({"module": module.name, "score": score, "source": plan.source,
                          "steps": rows}, ensure_ascii=False, indent=1))
    else:
        _print(module.name, score, plan, rows, xml is None, args.annotate)
    # Later steps are meant for later screens: "not found" here is information, not failure.
    return 0


def _model_plan(args: argparse.Namespace, registry: ModuleRegistry, module: AppModule, image: Image.Image,
                xml: str | None) -> TaskPlan:
    """No template fits: the model plans on the screenshot (ModelNotConfigured, with the near misses, without one)."""
    config = LLMConfig.from_env()
    if not config.configured:
        near = did_you_mean(registry.near_misses(args.task))
        try:
            config.require()
        except ModelNotConfigured as exc:
            raise ModelNotConfigured(f"no template of module {module.name!r} fits the task"
                                     + (f"; {near}" if near else ".") + f" No model can plan it: {exc.message}",
                                     hint=f"{exc.hint}; or pick a task from `python -m remote modules`") from exc
    from remote.ai.planner import Planner

    return Planner(config).plan(args.task, image, module=module, hierarchy=xml)


def _located(step: StepPlan, locator: Any, screen: Screen) -> tuple[dict[str, Any], UIElement | None]:
    """The row of one step (where its target was found on the screenshot, if it has one) and the element."""
    row: dict[str, Any] = {"step": step.step, "action": step.action.value, "target_ref": step.target_ref,
                           "params": step.params}
    if not step.target_ref:
        return row, None
    res = next((r for r in (locator.locate(t, screen) for t in step.targets) if r.success),
               None) or locator.locate(step.target_ref, screen)
    el = res.element
    row.update(found=res.success, tier=res.method_used, reliable=res.reliable,
               bbox=list(el.bbox) if el else None, center=list(el.center) if el else None,
               confidence=round(el.confidence, 3) if el else None, ms=res.elapsed_ms, error=res.error)
    return row, el


def _print(module: str, score: float, plan: TaskPlan, rows: list[dict[str, Any]], no_xml: bool,
           annotated: str | None) -> None:
    print(f"module {module} (score {score:.2f}), plan from {plan.source}, {len(plan.steps)} steps")
    if no_xml:
        print("(no --xml: text:, desc:, role:, id: and editable: targets can only be read by OCR here; "
              "give the screenshot's uiautomator dump to see what a run finds in the UI tree)")
    for r in rows:
        head = f"{r['step']:>2}. {r['action']:<13} {r['target_ref'] or ''} {r['params'] or ''}".rstrip()
        if "found" not in r:
            print(f"{head}\n      (no target to locate)")
        elif r["found"]:
            print(f"{head}\n      {r['tier']}: box {r['bbox']} center {r['center']} confidence {r['confidence']}"
                  f" ({r['ms']:.0f} ms){'' if r['reliable'] else ' AMBIGUOUS'}")
        else:
            print(f"{head}\n      not found: {r['error']}")
    if annotated:
        print(f"annotated copy: {annotated}")
