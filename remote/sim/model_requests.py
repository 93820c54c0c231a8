"""What the loopback model server is asked and what it is told to answer (``remote.sim.model_server``):
a recorded request (its purpose, prompt text and images), a scripted fault, a standing rule."""

from __future__ import annotations

import base64
import binascii
import io
import re
import time
from dataclasses import dataclass, field
from typing import Any

from PIL import Image, UnidentifiedImageError

_PURPOSE_LINE = re.compile(r"^\s*purpose:\s*(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class Fault:
    """A scripted misbehaviour instead of a reply."""

    kind: str                   # rate_limit | status | slow | drop | bad_body
    status: int = 500
    retry_after: float | None = None
    delay: float = 0.0
    reply: Any = None           # for slow: what is finally sent

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1) -> Fault:
        return cls("rate_limit", status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls("status", status=status)

    @classmethod
    def auth(cls, status: int = 401) -> Fault:
        return cls("status", status=status)

    @classmethod
    def slow(cls, delay: float, reply: Any = "{}") -> Fault:
        return cls("slow", delay=delay, reply=reply)

    @classmethod
    def drop(cls) -> Fault:
        """Close the connection without answering."""
        return cls("drop")

    @classmethod
    def bad_body(cls) -> Fault:
        """HTTP 200 whose body is not JSON."""
        return cls("bad_body", status=200)


@dataclass(frozen=True)
class Rule:
    """A standing answer for every request that matches, until ``times`` runs out (None: forever).

    ``reply`` is sent as the message content (a str as is, a dict/list as JSON text); a
    ``status`` other than 200 answers that HTTP error instead (``retry_after`` adds the
    header); ``delay`` waits first; ``drip`` sends the body at that many bytes per second
    (a reply that trickles in, for deadlines). ``where`` names the rule in logs (file:line).
    """

    reply: Any = None
    purpose: str | None = None
    prompt: str | None = None
    delay: float = 0.0
    status: int = 200
    retry_after: float | None = None
    drip: int | None = None
    times: int | None = None
    where: str = ""

    def matches(self, purpose: str, text: str) -> bool:
        return (self.purpose is None or self.purpose == purpose) and (self.prompt is None or self.prompt in text)


@dataclass
class RecordedRequest:
    purpose: str
    body: dict[str, Any]
    headers: dict[str, str]
    path: str
    size: int = 0               # bytes of the body as received
    at: float = field(default_factory=time.monotonic)
    answer: str = ""            # what was sent back, in a few words ("rule s.yaml:3", "404: nothing scripted")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def text(self) -> str:
        """All text parts of all messages, joined (for assertions on prompts)."""
        out = []
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out += [p.get("text", "") for p in content if p.get("type") == "text"]
        return "\n".join(out)

    @property
    def image_urls(self) -> list[str]:
        return [p["image_url"]["url"] for m in self.messages if isinstance(m.get("content"), list)
                for p in m["content"] if p.get("type") == "image_url"]

    def image_sizes(self) -> list[tuple[int, int]]:
        """The sizes of the images sent (data URLs), in order; an unreadable one is left out."""
        sizes = []
        for url in self.image_urls:
            try:
                data = base64.b64decode(url.split(",", 1)[1], validate=False)
                with Image.open(io.BytesIO(data)) as img:
                    sizes.append(img.size)
            except (IndexError, ValueError, binascii.Error, UnidentifiedImageError, OSError):
                continue
        return sizes


def purpose_of(body: dict[str, Any], headers: dict[str, str]) -> str:
    purpose = headers.get("x-remote-purpose")
    if purpose:
        return purpose
    for m in body.get("messages", []):
        if m.get("role") == "system" and isinstance(m.get("content"), str):
            match = _PURPOSE_LINE.search(m["content"])
            if match:
                return match.group(1)
    return "default"


def tokens_of(text: str) -> int:
    return max(1, len(text) // 4)
