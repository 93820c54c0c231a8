"""What a model family declares, as data: how it is asked, how it answers, what frame it sees.

One small file per family in this folder builds one :class:`Family`; the shared
path (:mod:`remote.ai.vision_agent`, :mod:`remote.ai.agent_model`) uses it. Adding
a family is adding a file and listing it in ``families/__init__.py``
(docs/models.md, "Adding a family").
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from remote.ai.answers import Convention, Scale
from remote.ai.frames import FramePolicy

# Qwen's block (each vision token is 28x28 px on Qwen2.5-VL, 32x32 on Qwen3-VL and the 2025-08 qwen-vl-max).
QWEN_BLOCK = 28
QWEN3_BLOCK = 32
# DashScope shrinks an image over about 1280 tokens of 28x28 unless vl_high_resolution_images is honoured
# (Model Studio, 图像理解 / 视觉定位). Pixel families stay under it, so a gateway that drops the flag cannot
# move the frame the model's numbers refer to.
DASHSCOPE_PIXELS = 1280 * 28 * 28
# DashScope's OpenAI-compatible endpoints (Model Studio: Beijing and the international Singapore region).
DASHSCOPE_HOSTS = ("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com")
HIGH_RESOLUTION = (("vl_high_resolution_images", True),)
JSON_NOT_FOUND = '{"found": false, "reason": "what the screen shows instead"}'


@dataclass(frozen=True)
class AgentProtocol:
    """A phone-agent model's own protocol: its prompt file, how its actions give coordinates, and whether it
    can do anything else (``drives_alone``: it cannot write our JSON plans, so it drives every task no
    template covers)."""

    name: str                   # autoglm | ui-tars | mobile_use | glm-v | showui
    prompt: str                 # prompts/<prompt>.txt ($task; $width/$height of the frame; $history as text)
    convention: Convention
    drives_alone: bool = True
    history: int = 8            # earlier turns kept (text only; the current screenshot is the one image)


@dataclass(frozen=True)
class Family:
    """A model family. ``models`` are regular expressions searched in the model's name (lower case, ``_`` as
    ``-``); the first family in ``families.ALL`` that matches wins."""

    name: str
    models: tuple[str, ...]
    convention: Convention                  # how it writes a located box or point
    ask: str                                # the locate request in its own convention ($width, $height)
    shape: str                              # the reply shape, repeated in a corrective re-ask
    not_found: str = JSON_NOT_FOUND
    frame: FramePolicy = FramePolicy()
    trusted: bool = True                    # trained grounding; False: set-of-mark, or a confirmed answer
    json_prompts: bool = True               # follows our JSON prompts (plans, checks, set-of-mark)
    request: tuple[tuple[str, object], ...] = ()   # extra request fields ...
    request_hosts: tuple[str, ...] = ()     # ... sent only to these hosts and their subdomains (empty: to every host)
    agent: AgentProtocol | None = None
    thinking: bool = False                  # may write <think> drafts into the reply
    sources: tuple[str, ...] = ()

    def extra_body(self, base_url: str) -> dict[str, object]:
        """The request fields this family's provider understands at ``base_url``: decided by the URL's host
        name, never by text elsewhere in it (a path or a query naming the provider is not the provider).

        >>> from remote.ai.families import by_name
        >>> by_name("qwen3-vl").extra_body("https://dashscope.aliyuncs.com/compatible-mode/v1")
        {'vl_high_resolution_images': True}
        >>> by_name("qwen3-vl").extra_body("https://gateway.example/dashscope/v1?to=dashscope.aliyuncs.com")
        {}
        """
        if self.request_hosts and not on_hosts(base_url, self.request_hosts):
            return {}
        return dict(self.request)


def on_hosts(url: str, hosts: tuple[str, ...]) -> bool:
    """``url``'s host name is one of ``hosts`` or a subdomain of one (``urllib.parse``, case-insensitive)."""
    try:
        name = (urlsplit(url.strip()).hostname or "").rstrip(".")
    except ValueError:   # a malformed URL (an unclosed IPv6 bracket): no provider's host
        return False
    return any(name == host or name.endswith("." + host) for host in hosts)


PIXEL = Convention(Scale.PIXEL)
NORM1000 = Convention(Scale.NORM1000)
