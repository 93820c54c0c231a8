"""A task's budget of model calls and tokens, enforced before every call (raises `BudgetExceeded`).

``BudgetedModel`` wraps any :class:`~remote.ai.protocols.ChatModel`; the planner,
vision agent and verifier all talk through it, so corrective re-asks count too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PIL import Image

from remote.ai.llm import ask_json
from remote.ai.protocols import ChatModel
from remote.core.records import ModelUsage
from remote.errors import BudgetExceeded


class BudgetedModel:
    def __init__(self, inner: ChatModel, *, max_calls: int | None = None, max_tokens: int | None = None) -> None:
        self.inner = inner
        self.max_calls = max_calls
        self.max_tokens = max_tokens

    @property
    def usage(self) -> ModelUsage:
        return self.inner.usage

    def __getattr__(self, name: str) -> Any:  # config, scrub, last_images ... of the wrapped client
        return getattr(self.inner, name)

    def check(self) -> None:
        usage = self.inner.usage
        if self.max_calls is not None and usage.calls >= self.max_calls:
            raise BudgetExceeded(f"the task used its budget of {self.max_calls} model calls",
                                 hint="raise --max-model-calls, or add a task template so no model is needed")
        if self.max_tokens is not None and usage.total_tokens >= self.max_tokens:
            raise BudgetExceeded(f"the task used its budget of {self.max_tokens} model tokens "
                                 f"({usage.total_tokens} spent)", hint="raise --max-tokens")

    def complete(self, messages: Sequence[dict[str, Any]], *, purpose: str,
                 images: Sequence[Image.Image] = (), timeout: float | None = None, **kwargs: Any) -> str:
        self.check()
        return self.inner.complete(messages, purpose=purpose, images=images, timeout=timeout, **kwargs)

    def complete_json(self, messages: Sequence[dict[str, Any]], *, purpose: str,
                      images: Sequence[Image.Image] = (), timeout: float | None = None, expect: Any = None) -> Any:
        return ask_json(self, messages, purpose=purpose, images=images, timeout=timeout, expect=expect)
