"""Planner: a task (and the current screen) -> a validated :class:`TaskPlan`, by a model.

Used only when no module template fits. The system prompt
(``prompts/planner.txt``, extended by a module's ``prompts/planner.txt``) lists
the reference names and aliases that exist and the ``target_ref`` grammar, so
the model prefers free targets over ``dynamic:``. A text-only model (DeepSeek)
plans from the UI tree's texts instead of the screenshot. The reply goes
through :func:`remote.core.plan.schema.parse_plan`; one corrective re-ask, then
:class:`ModelError` with the raw reply.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from remote.ai import finishing
from remote.ai.calls import sent_sizes
from remote.ai.families import family_for
from remote.ai.llm import UsesModel, ask_json
from remote.ai.prompting import render
from remote.ai.protocols import ChatModel
from remote.config import LLMConfig
from remote.core.locate.assets import AssetsManager
from remote.core.plan.schema import parse_plan
from remote.core.records import ActionName, ModelUsage, StepPlan, TaskPlan

logger = logging.getLogger(__name__)

MAX_REFERENCE_NAMES = 200
MAX_SCREEN_TEXTS = 80


def module_prompt_path(module: Any) -> Path | None:
    """A module's ``prompts/planner.txt``: ``module.prompt_path``, or inside a module folder."""
    if module is None:
        return None
    if isinstance(module, str | Path):
        folder: Path | None = Path(module)
    else:
        explicit = getattr(module, "prompt_path", None)
        if explicit:
            return Path(explicit)
        folder = getattr(module, "path", None) or getattr(module, "folder", None)
        folder = Path(folder) if folder else None
    if folder is None:
        return None
    candidate = folder / "prompts" / "planner.txt"
    return candidate if candidate.is_file() else None


def module_name(module: Any) -> str:
    if module is None:
        return ""
    if isinstance(module, str | Path):
        return Path(module).name
    return str(getattr(module, "name", "") or "")


def describe_step(step: Any) -> str:
    """One line for a step, a step result or a dict: ``3. tap text:发送 (发送消息) -> success``."""
    status = ""
    if hasattr(step, "step") and isinstance(step.step, StepPlan):   # a StepResult
        status = f" -> {getattr(step.status, 'value', step.status)}"
        if getattr(step, "error_message", ""):
            status += f" ({step.error_message})"
        step = step.step
    if isinstance(step, StepPlan):
        parts = [f"{step.step}. {step.action.value}"]
        if step.target_ref:
            parts.append(step.target_ref)
        if step.params:
            parts.append(str(step.params))
        if step.description:
            parts.append(f"({step.description})")
        return " ".join(parts) + status
    if isinstance(step, dict):
        return ", ".join(f"{k}={v}" for k, v in step.items() if v not in (None, "", {}, []))
    return str(step)


def _lines(items: Sequence[Any] | None) -> str:
    return "\n".join(describe_step(s) for s in items) if items else "(none)"


class Planner(UsesModel):
    """``Planner(config).plan("给张三发微信消息说你好", screenshot) -> TaskPlan``."""

    def __init__(self, llm_config: LLMConfig, *, client: ChatModel | None = None, assets: AssetsManager | None = None,
                 usage: ModelUsage | None = None) -> None:
        self.config = llm_config
        self.assets = assets
        self._client = client
        self._usage = usage

    # -- prompt pieces ---------------------------------------------------------------------

    def _references(self) -> tuple[str, str]:
        if self.assets is None:
            return "(none)", "(none)"
        refs = self.assets.get_available_refs()
        lines, count = [], 0
        for category, names in sorted(refs.items()):
            names = names[:max(0, MAX_REFERENCE_NAMES - count)]
            count += len(names)
            if names:
                lines.append(f"{category}: {', '.join(names)}")
        aliases = self.assets.aliases()
        alias_lines = [f"{alias} -> {name}" for alias, name in sorted(aliases.items())[:MAX_REFERENCE_NAMES]]
        return "\n".join(lines) or "(none)", "\n".join(alias_lines) or "(none)"

    def system_prompt(self, module: Any = None) -> str:
        references, aliases = self._references()
        values = {"actions": ", ".join(a.value for a in ActionName), "references": references,
                  "aliases": aliases}
        return render("planner", values, extra=module_prompt_path(module))

    def _screen(self, screenshot: Image.Image | None, hierarchy: str | None) -> tuple[str, list[Image.Image]]:
        if screenshot is not None and self.config.supports_vision:
            return render("screen_image", {"width": screenshot.width, "height": screenshot.height}), [screenshot]
        if hierarchy:
            from remote.core.locate.ui_tree import parse_hierarchy
            texts = parse_hierarchy(hierarchy, screenshot.size if screenshot else None).texts()
            return render("screen_tree", {"texts": "\n".join(texts[:MAX_SCREEN_TEXTS]) or "(no text)"}), []
        return render("screen_none"), []

    def _ask(self, user: str, images: list[Image.Image], module: Any, *, screen_size: tuple[int, int] | None,
             source: str) -> TaskPlan:
        messages = [{"role": "system", "content": self.system_prompt(module)}, {"role": "user", "content": user}]
        name = module_name(module)

        def expect(data: Any) -> TaskPlan:
            return parse_plan(finishing.by_protocol(data), screen_size=screen_size, source=source, module=name)

        plan: TaskPlan = ask_json(self.client, messages, purpose="plan", images=images, expect=expect)
        if images:   # the record says what the model saw (docs/models.md, "Reading a model call's record")
            family = family_for(self.config.model, self.config.family)
            plan.analysis["model_call"] = {"family": family.name, "source": list(images[0].size),
                                           "sent": (sent_sizes(self.client) or [list(images[0].size)])[-1]}
        logger.info("planned %d steps (%s)%s", len(plan.steps), source,
                    f", repairs: {plan.analysis['repairs']}" if plan.analysis.get("repairs") else "")
        return plan

    # -- public ----------------------------------------------------------------------------

    def plan(self, task: str, screenshot: Image.Image | None, history: Sequence[Any] | None = None,
             module: Any = None, *, hierarchy: str | None = None) -> TaskPlan:
        """A validated plan for ``task``; raises ``ModelError`` (with ``raw``) when the model fails."""
        screen, images = self._screen(screenshot, hierarchy)
        user = render("plan_task", {"task": task, "screen": screen, "history": _lines(history)})
        return self._ask(user, images, module, screen_size=screenshot.size if screenshot else None,
                         source="model")

    def replan(self, original_task: str, current_screenshot: Image.Image | None, failed_step: Any,
               failure_reason: str, executed_steps: Sequence[Any], *, module: Any = None,
               hierarchy: str | None = None) -> TaskPlan:
        """New steps from the current screen after ``failed_step`` failed for ``failure_reason``."""
        screen, images = self._screen(current_screenshot, hierarchy)
        user = render("replan", {"task": original_task, "executed": _lines(executed_steps),
                                 "failed_step": describe_step(failed_step) if failed_step else "(none)",
                                 "failure_reason": failure_reason or "(not given)", "screen": screen})
        size = current_screenshot.size if current_screenshot else None
        return self._ask(user, images, module, screen_size=size, source="replan")
