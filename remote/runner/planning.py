"""Where a run's steps come from when no plan is given: the module's task templates (free), else the model's plan,
its steps marked by the sensitivity rules (a model cannot opt a payment out of confirmation); and a new plan
after a failed step."""

from __future__ import annotations

from collections.abc import Callable

from remote.apps import AppModule, ModuleRegistry
from remote.apps.near import did_you_mean
from remote.core.locate.screen import Screen
from remote.core.plan.sensitivity import mark
from remote.core.records import StepResult, TaskPlan
from remote.errors import ConfigError, ModelNotConfigured
from remote.runner.models import Models, ModelSource
from remote.runner.protocols import Listener
from remote.runner.scope import walk


class Planning:
    def __init__(self, registry: ModuleRegistry, source: ModelSource, listener: Listener) -> None:
        self.registry, self.source, self.listener = registry, source, listener

    def plan(self, task: str, module: AppModule, models: Models, screen_now: Callable[[], Screen]) -> TaskPlan:
        """The template's plan when one fits; else the model's, from the screen now. ModelNotConfigured /
        ConfigError when nothing can plan it, naming the template that nearly fits."""
        plan = self.registry.handler(module).plan(task)
        if plan is not None:
            return plan
        near = did_you_mean(self.registry.near_misses(task))
        if models.planner is None:
            missing = self.source.why_not()
            if missing is not None:
                raise ModelNotConfigured(f"no task template of module {module.name!r} fits {task!r}"
                                         + (f"; {near}" if near else ".") + f" No model can plan it: {missing.message}",
                                         hint=f"{missing.hint}; or see `python -m remote modules` for the templates")
            raise ConfigError((models.no_planner or "planning needs a model but --strategy opencv_only forbids "
                               "model calls") + (f"; {near}" if near else ""))
        if near:   # the model plans it; the person still hears which template was meant, nothing is routed to it
            self.listener.on_note(f"no template fits; {near}")
        screen = screen_now()
        plan = models.planner.plan(task, screen.pil, history=None, module=module, hierarchy=self.text_tree(screen))
        plan.module = module.name
        return self.marked(plan, module)

    def replan(self, task: str, module: AppModule, models: Models, failed: StepResult, current: Screen,
               executed: list[StepResult]) -> TaskPlan:
        """The model's plan for the rest of the task, from the screen after ``failed``."""
        assert models.planner is not None
        return self.marked(models.planner.replan(task, current.pil, failed.step, failed.error_message, executed,
                                                 module=module, hierarchy=self.text_tree(current)), module)

    @staticmethod
    def marked(plan: TaskPlan, module: AppModule) -> TaskPlan:
        """A model's steps get the sensitivity rules (a repeat's or retry's steps too)."""
        for step in walk(plan.steps):
            mark(step, module.sensitive)
        return plan

    def text_tree(self, screen: Screen) -> str | None:
        """A text-only model plans from the UI tree's texts; a vision model gets the screenshot instead."""
        if self.source.supports_vision and not screen.secure:
            return None
        return screen.xml
