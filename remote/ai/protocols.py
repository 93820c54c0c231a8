"""What the AI layer needs of a model, as a Protocol (``remote.ai.llm.LLMClient`` implements it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from PIL import Image

from remote.core.records import ModelUsage


class ChatModel(Protocol):
    """One chat-completions endpoint. Images are PIL images (with the first user message, or the last with
    ``images_to="last"``); the reply is text."""

    @property
    def usage(self) -> ModelUsage: ...

    def complete(self, messages: Sequence[dict[str, Any]], *, purpose: str,
                 images: Sequence[Image.Image] = (), timeout: float | None = None,
                 images_to: str = "first") -> str: ...
