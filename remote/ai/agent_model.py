"""A phone-agent model asked in its own protocol: AutoGLM-Phone, UI-TARS (MOBILE_USE), Qwen / GUI-Owl mobile_use,
GLM-4.1V / 4.5V's mobile agent (``Memory: … Reason: … Action: {"action_type": …}``) and ShowUI's navigation dict.

``AgentModel.next(task, screenshot, history)`` sends the protocol's prompt (its own
action grammar, its own coordinate system), the earlier turns as text and the current
screenshot at the family's frame, and returns one :class:`AgentTurn` whose points are
already device pixels. A reply that cannot be read, names an action outside the
protocol, or points outside the screen gets one corrective re-ask in the protocol's
own words; then :class:`~remote.errors.ModelError`. What the turn *means* (tap a real
element, type and read back, ask a person, stop) is the runner's business
(``remote.runner.agent_loop``): the model's ``finish`` is a claim, never a success.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from remote.ai.answers import Action, Point, Scale, Verb
from remote.ai.calls import CallLog
from remote.ai.families import AgentProtocol, Family, family_for
from remote.ai.frames import Frame, send_size
from remote.ai.llm import UsesModel, ask_read
from remote.ai.prompting import load_template as _template
from remote.ai.prompting import placeholders, render_text
from remote.ai.protocols import ChatModel
from remote.ai.reader import read_reply
from remote.config import LLMConfig
from remote.core.records import ModelUsage
from remote.errors import ConfigError

PURPOSE = "agent"


@dataclass(frozen=True)
class AgentTurn:
    """One step a phone agent asked for, with its points in device pixels."""

    verb: Verb
    point: tuple[int, int] | None = None
    end: tuple[int, int] | None = None
    text: str = ""
    direction: str = ""
    seconds: float = 0.0
    sensitive: str = ""
    success: bool | None = None
    thought: str = ""
    raw: str = ""


@dataclass(frozen=True)
class Past:
    """An earlier turn, as the model wrote it, and what came of it (fed back as text)."""

    raw: str
    outcome: str


class AgentModel(UsesModel):
    """``AgentModel(config).next("打开深色模式", screenshot, history) -> AgentTurn``."""

    def __init__(self, llm_config: LLMConfig, *, client: ChatModel | None = None, usage: ModelUsage | None = None,
                 family: Family | None = None) -> None:
        self.config = llm_config
        self.family = family or family_for(llm_config.model, llm_config.family)
        if self.family.agent is None:
            raise ConfigError(f"model {llm_config.model!r} (family {self.family.name}) has no phone-agent protocol",
                              hint="a phone agent is AutoGLM-Phone, UI-TARS, a Qwen VL model, GLM-4.1V/4.5V or ShowUI")
        self.protocol: AgentProtocol = self.family.agent
        self._client = client
        self._usage = usage
        self.log = CallLog(self.family.name)   # the last turn's call: what was sent, what came back

    @property
    def name(self) -> str:
        return f"{self.family.name} ({self.protocol.name})"

    def frame(self, size: tuple[int, int]) -> Frame:
        return Frame(size, send_size(size, self.config.max_image_side, self.family.frame))

    def next(self, task: str, screenshot: Image.Image, history: Sequence[Past] = ()) -> AgentTurn:
        frame = self.frame(screenshot.size)
        messages = self._messages(task, frame, history[-self.protocol.history:])
        shape = f"one action of your action space ({self._coordinates(frame)})"
        self.log.clear()
        read = self.log.reader(self.client, "agent", frame, self.protocol.convention,
                               lambda raw: self.read(raw, frame), _noted)
        turn: AgentTurn = ask_read(self.client, messages, purpose=PURPOSE, images=[screenshot],
                                   read=read, shape=shape, images_to="last")
        return turn

    # -- reading ---------------------------------------------------------------------------------

    def read(self, raw: str, frame: Frame) -> AgentTurn:
        """One reply -> an :class:`AgentTurn` in device pixels; ``ValueError`` naming what is wrong."""
        reading = read_reply(raw, self.protocol.convention)
        action = reading.first
        if not isinstance(action, Action):
            raise ValueError(f"the reply is not one action of the protocol ({type(action).__name__.lower()} given)")
        point = self._device(action.point, frame)
        end = self._device(action.end, frame)
        return AgentTurn(action.verb, point, end, action.text, action.direction, action.seconds, action.sensitive,
                         action.success, reading.thought[:500], raw[:4000])

    def _device(self, point: Point | None, frame: Frame) -> tuple[int, int] | None:
        if point is None:
            return None
        device = frame.point(point)
        if device is None:
            raise ValueError(f"the point ({point.x:g}, {point.y:g}) lies outside the screen: coordinates must be "
                             f"{self._coordinates(frame)}")
        return device

    def _coordinates(self, frame: Frame) -> str:
        scale = self.protocol.convention.scale
        if scale is Scale.PIXEL:
            return f"pixels of the {frame.seen[0]}x{frame.seen[1]} screenshot"
        top = int(scale.full or 1000) - (1 if scale is Scale.NORM1000 and self.protocol.name == "autoglm" else 0)
        return f"x and y from 0 to {top}, (0,0) the top-left corner"

    # -- asking ----------------------------------------------------------------------------------

    def _system(self, task: str, frame: Frame, history: str = "") -> str:
        template = _template(self.protocol.prompt)
        side = 999 if self.protocol.convention.scale is Scale.NORM999 else None
        values = {"task": task, "width": str(side or frame.seen[0]), "height": str(side or frame.seen[1]),
                  "history": history}
        return render_text(template, {k: values[k] for k in placeholders(template)},
                           source=f"prompts/{self.protocol.prompt}.txt")

    def _messages(self, task: str, frame: Frame, history: Sequence[Past]) -> list[dict[str, str]]:
        if self.protocol.name in ("glm-v", "showui"):   # one user turn: the prompt, the task, the history as text
            done = "\n".join(f"Step {i}: {p.raw.strip()[-600:]}\n(result: {p.outcome})"
                              for i, p in enumerate(history)) or "None"
            return [{"role": "user", "content": self._system(task, frame, done)}]
        system = self._system(task, frame)
        if self.protocol.name == "mobile_use":   # Qwen's cookbook: the history as text in one user turn
            done = "".join(f"Step {i}: {p.outcome}; " for i, p in enumerate(history, 1)) or "(none)"
            user = (f"The user query: {task}\nTask progress (You have done the following operation on the current "
                    f"device): {done}")
            return [{"role": "system", "content": system}, {"role": "user", "content": user}]
        if self.protocol.name == "ui-tars":      # the template is the first user turn, then Thought/Action turns
            messages = [{"role": "user", "content": system}]
            for past in history:
                messages += [{"role": "assistant", "content": past.raw},
                             {"role": "user", "content": f"({past.outcome})"}]
            return messages
        first = f"{task}\n\n** Screen Info **\n当前屏幕截图见图片。"   # AutoGLM: task, then a screen per turn
        messages = [{"role": "system", "content": system}, {"role": "user", "content": first}]
        for past in history:
            messages += [{"role": "assistant", "content": past.raw},
                         {"role": "user", "content": f"** Screen Info **\n上一步结果：{past.outcome}"}]
        return messages


def _noted(turn: AgentTurn) -> dict[str, object]:
    """What an agent reply was read as, in device pixels."""
    return {"verb": turn.verb.value, "point": list(turn.point) if turn.point else None,
            "end": list(turn.end) if turn.end else None, "text": turn.text, "direction": turn.direction,
            "sensitive": turn.sensitive, "success": turn.success}
