"""Learning: a run the model solved becomes a candidate template that runs again with no model.

``compile_run(task, result, locator)`` reads what the run did (each step that
succeeded, the screen it decided on, the element it touched, the text it typed and
the final check that passed) and writes it as a task template (the ``tasks.yaml``
schema), with:

* targets a release cannot rename: the element's text, content-desc, role and
  label or ``editable:``, each kept only when it finds that same element on the
  screen it was learned on; a reference crop when the element shows no text; raw
  coordinates only where no element was there;
* slots: values of the sentence that the run typed (or that the model named as the
  task's values) become ``{slots}``, in the pattern, the steps and the final check;
* anchors: one or two stable labels of each step's screen, so a replay on another
  screen is caught before it taps;
* refusals: a run that typed into a password field is not learned (its value is never
  stored), nor one whose final check did not pass.

Pure but for the locator, which only reads the recorded screens.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from remote.core.locate.screen import Screen
from remote.core.locate.target_ref import parse_target
from remote.core.locate.tree_roles import is_editable
from remote.core.locate.ui_tree import UINode, UITree
from remote.core.plan.actions import InputText, LaunchApp, LongPress, Tap
from remote.core.plan.flow import is_flow
from remote.core.records import StepPlan, StepResult, StepStatus, TaskResult, TaskStatus
from remote.runner.learn_slots import generalise, patterns_for, slot_values
from remote.runner.protocols import Locator

LEARNABLE_SOURCES = ("model", "replan", "agent", "mcp")   # a planner's plan, a phone agent's turns, an MCP agent's calls
LEARNED_FROM = {"agent": "the phone agent's run", "mcp": "an MCP agent's calls"}
STEP_FIELDS = ("params", "wait_after", "description")
MAX_ANCHOR_CHARS = 12
_DIGIT = re.compile(r"\d")


@dataclass
class Compiled:
    """A candidate template (``task`` is one entry of ``tasks:``), its crops, or why nothing was learned."""

    task: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    crops: dict[str, Image.Image] = field(default_factory=dict)
    refused: str = ""


def learnable(result: TaskResult) -> str:
    """Why ``result`` cannot be learned ("" when it can)."""
    plan = result.plan
    if result.status is not TaskStatus.SUCCESS or result.final_check is None or result.final_check.passed is not True:
        return "only a run whose final check passed is learned"
    if plan is None or plan.source not in LEARNABLE_SOURCES:
        return "the plan did not come from the model (a template's run teaches nothing new)"
    return ""


def compile_run(task: str, result: TaskResult, locator: Locator, *, stable_ids: bool = False,
                source_run: str = "") -> Compiled:
    """The candidate template of a successful model-planned run (or the reason there is none)."""
    why = learnable(result)
    if why:
        return Compiled(refused=why)
    assert result.plan is not None
    done = _done_steps(result.step_results)
    if not done:
        return Compiled(refused="no step that acted succeeded")
    typed = [str(sr.step.params.get("text")) for sr, _ in done if isinstance(sr.step.args, InputText)]
    slots = slot_values(task, result.plan.analysis.get("slots"), typed)
    patterns = patterns_for(task, slots)
    if not patterns:
        return Compiled(refused="the sentence has too little of its own besides its values to be a pattern")
    out = Compiled()
    steps: list[dict[str, Any]] = []
    seen = [labels_of(screen) for _, screen in done]
    for n, (sr, screen) in enumerate(done, start=1):
        elsewhere = set().union(*(other for other in seen if _another_screen(other, seen[n - 1])))
        problem = _password(sr, screen)
        if problem:
            return Compiled(refused=f"step {sr.step.step} typed into a password field: {problem}; a password is "
                                    "never stored, so this task is not learned")
        step = _step(sr, screen, locator, slots, stable_ids=stable_ids, crops=out.crops, number=n,
                     elsewhere=elsewhere)
        steps.append(step)
    steps = with_way_back(steps)
    check = generalise(_final_check(result), slots)
    if not check:
        return Compiled(refused="the run's final check cannot be written as a success_check")
    digest = hashlib.sha1("|".join(patterns).encode("utf-8")).hexdigest()[:8]
    name = f"learned_{digest}"
    out.crops = {f"{name}_{k}": v for k, v in out.crops.items()}
    for step in steps:
        _name_crops(step, name)
    by = LEARNED_FROM.get(result.plan.source, "the model's run")
    out.task = {"name": name, "description": f"learned from {by} of {task!r}", "patterns": patterns,
                "steps": steps, "success_check": check}
    out.meta = {"task": task, "slots": dict(slots), "source_run": source_run, "module": result.module,
                "learned_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "model_calls": result.model_usage.calls,
                "tokens": result.model_usage.total_tokens, "seconds": round(result.total_time, 2)}
    return out


def _name_crops(step: dict[str, Any], name: str) -> None:
    """The step's ``crop:sN`` targets named after the learned task (``learned_1a2b3c4d_sN``); a single
    target written alone, no target at all left out."""
    ref = step.get("target_ref")
    refs = ref if isinstance(ref, list) else [ref]
    step["target_ref"] = [f"{name}_{r[len('crop:'):]}" if isinstance(r, str) and r.startswith("crop:") else r
                          for r in refs]
    if len(step["target_ref"]) == 1:
        step["target_ref"] = step["target_ref"][0]
    if step["target_ref"] in (None, [None]):
        del step["target_ref"]


# ---------------------------------------------------------------------- the steps that did the task
def _done_steps(results: list[StepResult]) -> list[tuple[StepResult, Screen | None]]:
    """Each step that succeeded, with the screen it decided on (its own, else the one the step before left)."""
    out: list[tuple[StepResult, Screen | None]] = []
    last: Screen | None = None
    for sr in results:
        before = sr.screenshot_before if isinstance(sr.screenshot_before, Screen) else last
        # a block's own steps are learned inside it; a step skipped by its `when` may be needed next time
        kept = sr.status is StepStatus.SUCCESS or (sr.status is StepStatus.SKIPPED and sr.step.when is not None)
        if kept and sr.step.action.value != "finish" and not sr.step.parent:
            out.append((sr, before))
        # after a blind act (a key, a launch, typing) the screen is unknown until a step looks again
        last = sr.screenshot_after if isinstance(sr.screenshot_after, Screen) else None
    return out


def with_way_back(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """After each ``launch_app``, BACK to the screen the run went on from (the next step's anchors), unless the
    run did so itself: an app that was left on a deeper screen resumes there, not where it was learned."""
    out: list[dict[str, Any]] = []
    for i, step in enumerate(steps):
        out.append(step)
        following = steps[i + 1] if i + 1 < len(steps) else None
        if step.get("action") == "launch_app" and following is not None and following.get("anchors") \
                and following.get("action") not in ("back_to_home", "go_home", "launch_app"):
            out.append({"action": "back_to_home", "target_ref": list(following["anchors"]),
                        "description": "back to the screen the task was learned from"})
    return out


def labels_of(screen: Screen | None) -> set[str]:
    tree = screen.tree() if screen is not None else None
    return {label.strip() for label in tree.texts()} if tree is not None else set()


def _another_screen(a: set[str], b: set[str]) -> bool:
    """Two screens of the run are different screens (not the same one seen twice) when few labels are shared."""
    return bool(a or b) and len(a & b) < 0.8 * max(len(a | b), 1)


def _step(sr: StepResult, screen: Screen | None, locator: Locator, slots: dict[str, str], *,
          stable_ids: bool, crops: dict[str, Image.Image], number: int, elsewhere: set[str]) -> dict[str, Any]:
    plan = sr.step
    if is_flow(plan.action.value) or sr.status is StepStatus.SKIPPED:
        # written as the plan wrote it (a check, a wait, a block with its steps, a step its `when` skipped)
        written: dict[str, Any] = generalise(plan.to_template(), slots)
        return written
    step = _as_written(plan, slots)
    point = sr.tap_point
    if plan.targets and point is not None and screen is not None:
        refs = _refs(sr, screen, point, locator, stable_ids=stable_ids, crops=crops, number=number)
        step["target_ref"] = [str(generalise(r, slots, whole=True)) for r in refs]
        # a target that carries the task's own value (text:{contact}) says by itself where it is; a generic one
        # (text:发送, desc:搜索, text:确定) gets the labels that tell its screen from the run's other screens
        own = any("{" in ref for ref in step["target_ref"])
        anchors = [] if own else anchors_of(screen, point, avoid=set(slots.values()) | _typed(plan),
                                            elsewhere=elsewhere)
        if anchors:
            step["anchors"] = [str(generalise(a, slots, whole=True)) for a in anchors]
        what = _label_at(screen, point) or (refs[0] if refs else "")
        step["description"] = str(generalise(plan.description or f"{plan.action.value} {what}".strip(), slots))
    elif plan.description:
        step["description"] = str(generalise(plan.description, slots))
    return step


def _as_written(plan: StepPlan, slots: dict[str, str]) -> dict[str, Any]:
    """The step's action, ``when``, params (the slots' values as placeholders), wait and sensitivity."""
    step: dict[str, Any] = {"action": plan.action.value}
    if plan.when is not None:
        step["when"] = generalise(plan.when.to_dict(), slots)
    params = {k: v for k, v in plan.params.items() if k != "toggle" or isinstance(plan.args, Tap)}
    if params:
        step["params"] = generalise(params, slots)
    if isinstance(plan.args, LaunchApp) and "package" not in params and plan.args.package:
        step["params"] = {"package": plan.args.package}
    if plan.wait_after != 300:
        step["wait_after"] = plan.wait_after
    if plan.sensitive:
        step["sensitive"] = True
    return step


def _refs(sr: StepResult, screen: Screen, point: tuple[int, int], locator: Locator, *, stable_ids: bool,
          crops: dict[str, Image.Image], number: int) -> list[str]:
    """The target forms that find what the step touched at ``point``: a text/desc/id form, else a crop of the
    screen there (kept in ``crops``), else the point itself."""
    refs = target_forms(screen, point, locator, used=sr.locate_result.matched_ref if sr.locate_result else "",
                        stable_ids=stable_ids)
    if refs:
        return refs
    crop = crop_at(screen, point)
    if crop is not None:
        crops[f"s{number}"] = crop
        return [f"crop:s{number}"]
    return [f"xy:{point[0]},{point[1]}"]


def _typed(plan: Any) -> set[str]:
    return {str(plan.params["text"])} if "text" in plan.params else set()


def _password(sr: StepResult, screen: Screen | None) -> str:
    """Why a typing step must not be learned ("" when it may): the field it typed into is a password field."""
    if not isinstance(sr.step.args, InputText) or screen is None:
        return ""
    tree = screen.tree()
    if tree is None:
        return ""
    node = _node_at(tree, sr.tap_point) if sr.tap_point is not None else tree.focused_node()
    if node is not None and node.password:
        return f"the field at {node.bounds} is marked password"
    return ""


def _final_check(result: TaskResult) -> dict[str, Any]:
    """The success_check that passed: the last replan's when it brought one, else the plan's."""
    assert result.plan is not None
    replans = result.plan.analysis.get("replans") or []
    for replan in reversed(replans):
        check = replan.get("success_check") if isinstance(replan, dict) else None
        if check:
            return dict(check)
    return result.plan.success_check.to_dict()


# ---------------------------------------------------------------------- targets a release cannot rename
def _node_at(tree: UITree, point: tuple[int, int]) -> UINode | None:
    """The smallest on-screen node under ``point`` that shows something or takes a tap."""
    x, y = point
    hits = [n for n in tree.nodes if tree.on_screen(n) and n.bounds[0] <= x < n.bounds[2]
            and n.bounds[1] <= y < n.bounds[3] and (n.label.strip() or n.clickable or is_editable(n))]
    return min(hits, key=lambda n: n.width * n.height) if hits else None


def _label_at(screen: Screen, point: tuple[int, int]) -> str:
    tree = screen.tree()
    return tree.label_at(point) if tree is not None else ""


def _labels_of(tree: UITree, node: UINode) -> list[UINode]:
    """The node and its descendants that carry a label, the node first."""
    out = [node] if node.label.strip() else []
    stack = list(node.children)
    while stack:
        child = tree.nodes[stack.pop(0)]
        if child.label.strip() and tree.on_screen(child):
            out.append(child)
        stack.extend(child.children)
    return out


def target_forms(screen: Screen, point: tuple[int, int], locator: Locator, *, used: str = "",
                 stable_ids: bool = False) -> list[str]:
    """Every ``target_ref`` form that finds, on this screen and without a model, the element under ``point``:
    the one the run used first (when it is such a form), then text, desc, role and label, editable."""
    out: list[str] = []
    for form in candidate_forms(screen, point, used=used, stable_ids=stable_ids):
        found = locator.locate_with_fallback(form, ["tree"], screen)
        element = found.element
        if found.success and found.reliable and element is not None and _contains(element.bbox, point):
            out.append(form)
        if len(out) >= 3:
            break
    return out


def candidate_forms(screen: Screen, point: tuple[int, int], *, used: str = "", stable_ids: bool = False) -> list[str]:
    """The ``target_ref`` forms that may name the element under ``point``, best first (not yet tried on the
    screen: `target_forms` keeps those that find it, the studio shows each with what it finds)."""
    tree = screen.tree()
    if tree is None:
        return []
    node = _node_at(tree, point)
    if node is None:
        return []
    target = tree.clickable_target(node)
    forms: list[str] = []
    kind, _ = parse_target(used) if used else ("", "")
    if used and kind in ("text", "desc", "role", "editable") or kind == "id" and stable_ids:
        forms.append(used)
    if is_editable(node) or is_editable(target):
        forms.append("editable:")
    for labelled in _labels_of(tree, target) or _labels_of(tree, node):
        if labelled.text.strip():
            forms.append(f"text:{labelled.text.strip()}")
        if labelled.content_desc.strip():
            forms.append(f"desc:{labelled.content_desc.strip()}")
            # text: finds a content-desc too, and the same label drawn as text in another release (a bar)
            forms.append(f"text:{labelled.content_desc.strip()}")
        short = labelled.class_name.rsplit(".", 1)[-1]
        if short and labelled.label.strip():
            forms.append(f"role:{short}:{labelled.label.strip()}")
        break
    if stable_ids and target.resource_id:
        forms.append(f"id:{target.resource_id}")
    return list(dict.fromkeys(forms))


def _contains(box: tuple[int, int, int, int], point: tuple[int, int]) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def crop_at(screen: Screen, point: tuple[int, int], *, icon: bool = False) -> Image.Image | None:
    """A reference crop of the element under ``point`` (its tap target's box), when it is a sensible size;
    with ``icon``, when the target is larger (a list row), the smallest node under the point that is (its icon)."""
    tree = screen.tree()
    node = _node_at(tree, point) if tree is not None else None
    if node is None or tree is None or not screen.frame_taken:   # a screen read as a tree alone has no picture
        return None
    box = tree.clickable_target(node).bounds
    if _sensible(box, screen.size):
        return screen.pil.crop(box)
    inner = [n.bounds for n in tree.nodes if tree.on_screen(n) and _contains(n.bounds, point)
             and _sensible(n.bounds, screen.size)] if icon else []
    return screen.pil.crop(min(inner, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))) if inner else None


def _sensible(box: tuple[int, int, int, int], size: tuple[int, int]) -> bool:
    return 8 <= box[2] - box[0] <= size[0] * 0.6 and 8 <= box[3] - box[1] <= size[1] * 0.3


def anchors_of(screen: Screen, point: tuple[int, int], *, avoid: set[str], elsewhere: Set[str] = frozenset(),
               limit: int = 2) -> list[str]:
    """One or two labels that say which screen this is: short, without digits, shown once, not the task's
    values or the typed text, not under the tap, not a row of a list, not seen on the run's other screens
    (``elsewhere``: a 返回 or a ＋ that every screen has says nothing); bars (top, bottom fifth) first."""
    tree = screen.tree()
    if tree is None:
        return []
    height = screen.size[1]
    scored: list[tuple[int, int, str]] = []
    for node in tree.visible_nodes():
        label = node.text.strip()
        kind = "text"
        if not label:
            label, kind = node.content_desc.strip(), "desc"
        if not label or len(label) > MAX_ANCHOR_CHARS or _DIGIT.search(label) or label in avoid or \
                any(a and a in label for a in avoid) or _contains(node.bounds, point) or is_editable(node) or \
                label in elsewhere:
            continue
        if len(tree.find_by_text(label, exact=True)) != 1:
            continue
        # bars (titles, tabs, toolbars) say which screen this is; a list's rows are its content, which changes
        if not _in_list(tree, node):
            in_bar = node.bounds[3] <= height * 0.2 or node.bounds[1] >= height * 0.8
            scored.append((0 if in_bar else 1, node.position, f"{kind}:{label}"))
    return [ref for _, _, ref in sorted(scored)[:limit]]


LIST_CLASSES = ("ListView", "RecyclerView", "ScrollView", "GridView", "ViewPager", "WebView")


def _in_list(tree: UITree, node: UINode) -> bool:
    """Inside a list, a scrolling view or a web page: content, not the screen's own furniture."""
    cur = node.parent
    while cur is not None:
        parent = tree.nodes[cur]
        if parent.scrollable or parent.class_name.rsplit(".", 1)[-1] in LIST_CLASSES:
            return True
        cur = parent.parent
    return False


def is_targeted(sr: StepResult) -> bool:
    return isinstance(sr.step.args, Tap | LongPress | InputText) and bool(sr.step.targets)
