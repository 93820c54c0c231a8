"""One offline turn of a phone-agent model (``remote plan SHOT "TASK" --agent``): the action it would take now.

The turn is asked and read by the run's own :class:`~remote.ai.agent_model.AgentModel`
and turned into steps by the run's own ``remote.runner.agent_steps.steps_for``: the
element its point snaps to, the tap in device pixels, and the sensitivity rules a run
applies (a point with no element under it is a raw-coordinate tap and needs a yes).
Nothing is touched: there is no phone.
"""

from __future__ import annotations

import json
from typing import Any

from PIL import Image

from remote.ai.agent_model import AgentModel, AgentTurn
from remote.ai.answers import Verb
from remote.ai.budget import BudgetedModel
from remote.ai.calls import summary
from remote.ai.families import family_for
from remote.ai.llm import LLMClient
from remote.config import LLMConfig
from remote.core.locate.screen import Screen
from remote.core.records import ModelUsage
from remote.errors import ConfigError, ExitCode
from remote.runner.agent_steps import Translated, steps_for
from remote.runner.models import Budget


def agent_for(config: LLMConfig, usage: ModelUsage) -> AgentModel:
    """The configured model's phone-agent protocol, with the run's client and budget; ``ConfigError`` for a
    family that has none."""
    family = family_for(config.model, config.family)
    if family.agent is None:
        raise ConfigError(f"model {config.model!r} (family {family.name}) has no phone-agent protocol",
                          hint="phone agents: AutoGLM-Phone, UI-TARS, Qwen VL (mobile_use), GLM-4.1V/4.5V, ShowUI; "
                               "`remote plan` without --agent plans with a model that writes JSON plans")
    if not config.supports_vision:
        raise ConfigError(f"model {config.model!r} cannot see images: a phone agent needs the screenshot")
    budget = Budget()
    client = BudgetedModel(LLMClient(config, usage), max_calls=budget.max_model_calls, max_tokens=budget.max_tokens)
    return AgentModel(config, client=client, family=family)


def turn_record(agent: AgentModel, turn: AgentTurn, translated: Translated, usage: ModelUsage) -> dict[str, Any]:
    steps = [{"action": s.action.value, "target_ref": s.target_ref, "params": s.params, "description": s.description,
              "sensitive": s.sensitive, "sensitive_reason": s.sensitive_reason} for s in translated.steps]
    return {"agent": agent.name, "family": agent.family.name, "protocol": agent.protocol.name,
            "turn": {"verb": turn.verb.value, "point": list(turn.point) if turn.point else None,
                     "end": list(turn.end) if turn.end else None, "text": turn.text, "direction": turn.direction,
                     "flagged": turn.sensitive, "claims_success": turn.success, "thought": turn.thought},
            "would_do": translated.note, "not_run": translated.problem, "steps": steps,
            "model_calls": list(agent.log.calls), "usage": usage.by_purpose}


def agent_turn(config: LLMConfig, task: str, screenshot: Image.Image, xml: str | None, words: tuple[str, ...],
               *, why: str = "", as_json: bool = False) -> int:
    """Ask the agent for its next action on ``screenshot`` and print what a run would do with it."""
    usage = ModelUsage()
    agent = agent_for(config, usage)
    turn = agent.next(task, screenshot)
    translated = Translated(note=f"{turn.verb.value}: {turn.text or 'the task is over'}") if turn.verb is Verb.FINISH \
        else steps_for(turn, Screen(screenshot, xml), words)
    record = turn_record(agent, turn, translated, usage)
    if as_json:
        print(json.dumps(record, ensure_ascii=False, indent=1))
        return ExitCode.OK if not translated.problem else ExitCode.FAILED
    if why:
        print(why)
    print(f"next action of {agent.name} for: {task}")
    if turn.thought:
        print(f"  thought: {' / '.join(turn.thought[:300].splitlines())}")
    print(f"  it says: {turn.verb.value}" + (f" {list(turn.point)} (device pixels)" if turn.point else "")
          + (f" {turn.text!r}" if turn.text else "") + (f" {turn.direction}" if turn.direction else ""))
    if translated.problem:
        print(f"  a run would not do it: {translated.problem}")
    elif translated.note:
        print(f"  a run would: {translated.note}")
    for step in translated.steps:
        ask = f"  [asks first: {step.sensitive_reason}]" if step.sensitive else ""
        target = f" {step.target_ref}" if step.target_ref else ""
        params = f" {json.dumps(step.params, ensure_ascii=False)}" if step.params else ""
        print(f"    {step.action.value}{target}{params}{ask}")
    for call in agent.log.calls:
        print(f"  model {summary(call)}")
    print("  (nothing was touched: no phone is connected to an offline turn)")
    return ExitCode.OK if not translated.problem else ExitCode.FAILED
