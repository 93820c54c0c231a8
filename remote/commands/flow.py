"""`remote flow SCREENSHOT "TASK"`: route, plan (template or model) and locate every step on one screenshot; a
``dynamic:`` step by the configured model as a run does (none configured: "no model configured", exit 2)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

from PIL import Image

from remote.apps import AppModule, ModuleRegistry
from remote.apps.near import did_you_mean
from remote.commands._locate_common import load_image, load_text
from remote.commands._models import call_lines, calls_of, offline_models
from remote.commands._modules import registry as module_registry
from remote.config import LLMConfig
from remote.core.locate.screen import Screen
from remote.core.locate.target_ref import parse_target
from remote.core.record.report import annotate
from remote.core.records import LocateStrategy, StepPlan, TaskPlan, UIElement
from remote.errors import ModelNotConfigured
from remote.runner.offline import module_locator


@dataclass
class _Finders:
    """The free tiers for every target; the configured model (as a run's vision tier) for ``dynamic:`` ones."""

    locator: Any
    seer: Any = None
    offline: Any = None

    def for_step(self, step: StepPlan) -> Any:
        dynamic = any(parse_target(t)[0] == "dynamic" for t in step.targets)
        return self.seer if self.seer is not None and dynamic else self.locator


def run(args: argparse.Namespace) -> int:
    image = load_image(args.screenshot, "screenshot")
    xml = load_text(args.xml, "UI dump") if args.xml else None
    registry = module_registry()
    module, score = (registry.get(args.module), 1.0) if args.module else registry.route(args.task)
    finders = _Finders(module_locator(registry, module.name))
    plan = registry.handler(module).plan(args.task) or _model_plan(args, registry, module, finders, image, xml)
    dynamic = [t for step in plan.steps for t in step.targets if parse_target(t)[0] == "dynamic"]
    # dynamic: targets only a model can look for (as a run's vision tier); the others stay with the free tiers:
    # later steps are meant for later screens, and asking the model for them here would spend calls on guesses
    if dynamic:
        if finders.offline is None or finders.offline.vision is None:
            finders.offline = offline_models(finders.locator.assets, f"the target {dynamic[0]!r}")
        finders.seer = module_locator(registry, module.name, LocateStrategy.OPENCV_FIRST,
                                      vision=finders.offline.vision)
    screen = Screen(image, xml)
    located = [_located(step, finders, screen) for step in plan.steps]
    rows = [row for row, _ in located]
    if args.annotate:
        out = image
        for _, el in located:
            if el is not None:
                out = annotate(out, el.bbox, el.center)
        out.save(args.annotate)
    if args.json:
        print(json.dumps({"module": module.name, "score": score, "source": plan.source,
                          "steps": rows}, ensure_ascii=False, indent=1))
    else:
        _print(module.name, score, plan, rows, xml is None, args.annotate)
    # Later steps are meant for later screens: "not found" here is information, not failure.
    return 0


def _model_plan(args: argparse.Namespace, registry: ModuleRegistry, module: AppModule, finders: _Finders,
                image: Image.Image, xml: str | None) -> TaskPlan:
    """No template fits: the configured model plans on the screenshot, as a run's planner does
    (ModelNotConfigured, with the near misses, without one; a phone-agent family is pointed at ``plan --agent``)."""
    config = LLMConfig.from_env()
    if not config.configured:
        near = did_you_mean(registry.near_misses(args.task))
        try:
            config.require()
        except ModelNotConfigured as exc:
            raise ModelNotConfigured(f"no template of module {module.name!r} fits the task"
                                     + (f"; {near}" if near else ".") + f" No model can plan it: {exc.message}",
                                     hint=f"{exc.hint}; or pick a task from `python -m remote modules`") from exc
    finders.offline = offline = offline_models(finders.locator.assets, "planning this task", vision=False)
    if offline.models.planner is None:   # a phone-agent family: a run lets it drive, turn by turn
        raise ModelNotConfigured(f"{offline.models.no_planner}: a run lets it drive the task itself",
                                 hint=f'ask it for its first action: remote plan SHOT "{args.task}" --agent')
    plan: TaskPlan = offline.models.planner.plan(args.task, image, module=module, hierarchy=xml)
    return plan


def _located(step: StepPlan, finders: _Finders, screen: Screen) -> tuple[dict[str, Any], UIElement | None]:
    """The row of one step (where its target was found on the screenshot, if it has one) and the element."""
    row: dict[str, Any] = {"step": step.step, "action": step.action.value, "target_ref": step.target_ref,
                           "params": step.params}
    if not step.target_ref:
        return row, None
    finder = finders.for_step(step)
    res = next((r for r in (finder.locate(t, screen) for t in step.targets) if r.success),
               None) or finder.locate(step.target_ref, screen)
    el = res.element
    row.update(found=res.success, tier=res.method_used, reliable=res.reliable,
               bbox=list(el.bbox) if el else None, center=list(el.center) if el else None,
               confidence=round(el.confidence, 3) if el else None, ms=res.elapsed_ms, error=res.error)
    if res.method_used == "vision" or "vision" in res.tiers_tried:
        row["model_calls"] = calls_of(el) if el is not None and res.method_used == "vision" else \
            calls_of(finders.offline.vision if finders.offline is not None else None)
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
        for line in call_lines(r.get("model_calls", [])):
            print(f"    {line}")
    if annotated:
        print(f"annotated copy: {annotated}")
