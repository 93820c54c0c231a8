"""The configured model for the offline commands (locate, flow, plan), built exactly as a run builds it.

``offline_models(...)`` goes through :class:`remote.runner.models.LLMModels`, the
same door ``remote run`` uses: the same family (from the model's name or
``LLM_MODEL_FAMILY``), the same client and budget, the same ``VisionAgent`` (its
frame, prompt, reader, snapping and confirmation) and the same phone-agent model.
Without a configured model it raises ``ModelNotConfigured`` ("no model
configured", exit status 2), never a quiet "not found".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from remote.ai.calls import summary
from remote.ai.vision_agent import VisionAgent
from remote.config import LLMConfig
from remote.core.locate.assets import AssetsManager
from remote.core.records import LocateStrategy, ModelUsage
from remote.errors import ModelNotConfigured
from remote.runner.models import Budget, LLMModels, Models


@dataclass
class Offline:
    models: Models
    usage: ModelUsage
    config: LLMConfig
    family: str

    @property
    def vision(self) -> VisionAgent | None:
        vision = self.models.vision
        return vision if isinstance(vision, VisionAgent) else None


def offline_models(assets: AssetsManager, why: str, *, strategy: LocateStrategy = LocateStrategy.OPENCV_FIRST,
                   config: LLMConfig | None = None, vision: bool = True) -> Offline:
    """The run's models for an offline command that needs one (that can see, with ``vision``) for ``why``;
    ``ModelNotConfigured`` otherwise."""
    config = config if config is not None else LLMConfig.from_env()
    source = LLMModels(config)
    problem = source.why_not()
    if problem is not None or source.config is None:
        message = problem.message if problem is not None else "no model is configured"
        raise ModelNotConfigured(f"no model configured: {why} needs {'a vision' if vision else 'a'} model ({message})",
                                 hint=problem.hint if problem is not None else "")
    if vision and not source.config.supports_vision:
        raise ModelNotConfigured(f"model {source.config.model!r} cannot see images: {why} needs a vision model",
                                 hint="configure a vision model, or set LLM_SUPPORTS_VISION=1 if it has one")
    usage = ModelUsage()
    models = source.start(usage, Budget(), assets, strategy)
    family = source.family.name if source.family is not None else "unknown"
    return Offline(models, usage, source.config, family)


def calls_of(element_or_vision: Any) -> list[dict[str, Any]]:
    """The model calls behind a located element (its ``model_calls``), else the vision agent's last ones."""
    metadata = getattr(element_or_vision, "metadata", None)
    if isinstance(metadata, dict) and "model_calls" in metadata:
        return list(metadata["model_calls"])
    log = getattr(element_or_vision, "log", None)
    return list(getattr(log, "calls", []) or [])


def call_lines(calls: list[dict[str, Any]]) -> list[str]:
    return [f"  model {summary(call)}" for call in calls]
