"""The seams of the runner, as Protocols: what it needs of a locator, the checks, a vision model, a
planner, a person and whoever listens to a run.

The real parts are ``HybridLocator``, ``remote.ai.verifier.Verifier``,
``remote.ai.vision_agent.VisionAgent``, ``remote.ai.planner.Planner``, the terminal
(``remote.commands.run``) and the recorder; tests hand in small scripted fakes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from PIL import Image

from remote.core.locate.protocols import VisionTier
from remote.core.locate.ui_tree import UITree
from remote.core.records import (
    Blocker,
    LocateResult,
    StepPlan,
    StepResult,
    TaskPlan,
    TaskResult,
    VerifyResult,
)

__all__ = ["Checks", "Listener", "Locator", "Person", "PlannerLike", "VisionTier"]


class Locator(Protocol):
    def locate(self, target_ref: str, screenshot: Any = None, element_type: str | None = None, *,
               hierarchy: str | UITree | None = None) -> LocateResult: ...

    def locate_with_fallback(self, target_ref: str, strategies: Sequence[str], screenshot: Any = None, *,
                             hierarchy: str | UITree | None = None,
                             element_type: str | None = None) -> LocateResult: ...

    def note_typed(self, text: str) -> None:
        """``text`` was typed: its echo in the field is never a target afterwards."""


class Checks(Protocol):
    """Did a step work, is something in the way: free checks first, a model only when configured."""

    @property
    def has_model(self) -> bool: ...

    def classify(self, before: Image.Image | Callable[[], Image.Image], after: Image.Image | Callable[[], Image.Image],
                 *, hierarchy_before: Any = None,
                 hierarchy_after: Any = None, expected: str | None = None,
                 expected_package: str | None = None) -> VerifyResult: ...

    def quick_check(self, before: Image.Image, after: Image.Image, expected_change: str) -> tuple[bool, str]: ...

    def detect_blocker(self, screenshot: Image.Image | None, hierarchy: Any, *, use_model: bool = True,
                       ime_shown: bool | None = None) -> Blocker | None: ...

    def verify_with_description(self, current_screenshot: Image.Image, expected_description: str,
                                previous_screenshot: Image.Image | None = None, *,
                                hierarchy: Any = None) -> VerifyResult: ...


class PlannerLike(Protocol):
    def plan(self, task: str, screenshot: Image.Image | None, history: Sequence[Any] | None = None,
             module: Any = None, *, hierarchy: str | None = None) -> TaskPlan: ...

    def replan(self, original_task: str, current_screenshot: Image.Image | None, failed_step: Any,
               failure_reason: str, executed_steps: Sequence[Any], *, module: Any = None,
               hierarchy: str | None = None) -> TaskPlan: ...


class Person(Protocol):
    """Whoever can answer at the phone. Without a terminal every answer is no."""

    def confirm(self, question: str) -> bool: ...
    def choose(self, question: str, options: Sequence[str]) -> int | None: ...
    def take_over(self, message: str) -> bool: ...


class Listener(Protocol):
    def on_plan(self, plan: TaskPlan) -> None: ...
    def on_step_start(self, step: StepPlan, total: int) -> None: ...
    def on_step_end(self, result: StepResult) -> None: ...
    def on_note(self, message: str) -> None: ...
    def on_finish(self, result: TaskResult) -> None: ...


class NoPerson:
    """Nobody at the phone (CI, pipes, an agent): sensitive steps are refused, nothing is chosen."""

    def confirm(self, question: str) -> bool:
        return False

    def choose(self, question: str, options: Sequence[str]) -> int | None:
        return None

    def take_over(self, message: str) -> bool:
        return False


class QuietListener:
    """Listens to nothing (the default)."""

    def on_plan(self, plan: TaskPlan) -> None:
        return None

    def on_step_start(self, step: StepPlan, total: int) -> None:
        return None

    def on_step_end(self, result: StepResult) -> None:
        return None

    def on_note(self, message: str) -> None:
        return None

    def on_finish(self, result: TaskResult) -> None:
        return None

