"""The models of one run: a planner, a vision tier and the checks, sharing one budget of calls and tokens.

``LLMModels(config)`` builds them from an OpenAI-compatible endpoint for each run
(the budget and the usage are per run); without a configured model the run gets
the free checks only, and planning or a ``dynamic:`` target says a model is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from remote.ai.agent_model import AgentModel
from remote.ai.budget import BudgetedModel
from remote.ai.families import Family, family_for
from remote.ai.llm import LLMClient
from remote.ai.planner import Planner
from remote.ai.verifier import Verifier
from remote.ai.vision_agent import VisionAgent
from remote.config import LLMConfig
from remote.core.locate.assets import AssetsManager
from remote.core.records import LocateStrategy, ModelUsage
from remote.errors import ConfigError, ModelNotConfigured
from remote.runner.protocols import Checks, PlannerLike, VisionTier


@dataclass(frozen=True)
class Budget:
    max_model_calls: int = 20
    max_tokens: int = 200_000


@dataclass
class Models:
    checks: Checks
    planner: PlannerLike | None = None
    vision: VisionTier | None = None
    agent: AgentModel | None = None     # a phone-agent model that drives tasks in its own protocol
    agent_always: bool = False          # ... every task (LLM_AGENT=always), not only those no template covers
    no_planner: str = ""                # why there is no planner, when a model is configured


class ModelSource(Protocol):
    @property
    def configured(self) -> bool: ...

    def why_not(self) -> ModelNotConfigured | None:
        """Why no model can be called (naming what to set), or None when one can."""

    @property
    def supports_vision(self) -> bool: ...

    def start(self, usage: ModelUsage, budget: Budget, assets: AssetsManager, strategy: LocateStrategy) -> Models: ...
    def scrub(self, text: str) -> str: ...
    def redacted(self) -> dict[str, Any] | None: ...


class LLMModels:
    """Models from one OpenAI-compatible endpoint (or none: free checks only)."""

    def __init__(self, config: LLMConfig | None) -> None:
        self.config = config if config is not None and config.configured else None
        self._given = config or LLMConfig.none()
        # The family is known (and a bad LLM_MODEL_FAMILY refused) before any run starts.
        self.family: Family | None = family_for(self.config.model, self.config.family) if self.config else None
        if self.config is not None and self.config.agent == "always" and self.family and self.family.agent is None:
            raise ConfigError(f"LLM_AGENT=always, but {self.config.model!r} (family {self.family.name}) has no "
                              "phone-agent protocol",
                              hint="use AutoGLM-Phone, UI-TARS or a Qwen VL model, or LLM_AGENT=auto")

    @property
    def configured(self) -> bool:
        return self.config is not None

    def why_not(self) -> ModelNotConfigured | None:
        try:
            self._given.require()
        except ModelNotConfigured as exc:
            return exc
        return None

    @property
    def supports_vision(self) -> bool:
        return self.config is not None and self.config.supports_vision

    def start(self, usage: ModelUsage, budget: Budget, assets: AssetsManager, strategy: LocateStrategy) -> Models:
        if self.config is None or strategy is LocateStrategy.OPENCV_ONLY:
            return Models(checks=Verifier(None, usage=usage))
        client = BudgetedModel(LLMClient(self.config, usage), max_calls=budget.max_model_calls,
                               max_tokens=budget.max_tokens)
        family = self.family or family_for(self.config.model)
        vision = VisionAgent(self.config, client=client, assets=assets) if self.config.supports_vision else None
        agent_mode = self.config.agent
        drives = family.agent is not None and self.config.supports_vision and agent_mode != "off" and (
            agent_mode == "always" or family.agent.drives_alone)
        agent = AgentModel(self.config, client=client, family=family) if drives else None
        if not family.json_prompts:   # it cannot answer our plan and check prompts: free checks, no planner
            why = (f"model {self.config.model!r} (family {family.name}) cannot write plans"
                   + ("; LLM_AGENT=off keeps it from driving the task itself" if family.agent else ""))
            return Models(checks=Verifier(None, usage=usage), vision=vision, agent=agent,
                          agent_always=agent_mode == "always", no_planner=why)
        return Models(checks=Verifier(self.config, client=client, usage=usage),
                      planner=Planner(self.config, client=client, assets=assets), vision=vision, agent=agent,
                      agent_always=agent_mode == "always")

    def scrub(self, text: str) -> str:
        key = self.config.api_key if self.config is not None else ""
        return text.replace(key, "***") if key and text else text

    def redacted(self) -> dict[str, Any] | None:
        return self.config.redacted() if self.config is not None else None
