"""One client for any OpenAI-compatible chat-completions endpoint.

`LLMClient` implements the :class:`remote.ai.protocols.ChatModel` seam over the
official ``openai`` SDK. It is the one place where the SDK's errors become ours
(``raise ModelError(...) from exc``), where retries happen (tenacity; the SDK's
own retries are off), where images are downscaled and encoded, and where usage
is counted by purpose (``plan``, ``locate``, ``verify``).

Error policy:

- 401/403 -> :class:`ModelNotConfigured` naming the key variable (no retry);
- 429, timeouts, connection errors, 5xx -> retried with exponential backoff and
  jitter (``Retry-After`` honoured, capped), at most ``config.max_retries`` retries;
  then :class:`ModelError`;
- any other 4xx, an unreadable body, an empty reply -> :class:`ModelError` at once.

Every attempt has a deadline for the whole exchange (connect, send, read the
last byte), ``config.timeout``: the SDK's own timeout is between bytes, so a
server that drips one byte a second would hold a run forever. Past the deadline
the connection is closed and the attempt counts as a timeout.

The API key never appears in a log line, an exception, a repr or a record:
every text that leaves this module is scrubbed with ``config.mask_secret``.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import tenacity
from PIL import Image

from remote.ai import images as imaging
from remote.ai.families import Family, family_for
from remote.ai.frames import send_size
from remote.ai.prompting import render
from remote.ai.protocols import ChatModel
from remote.ai.reply import Expect, check_expected, parse_json_reply
from remote.config import LLMConfig, mask_secret
from remote.core.records import ModelUsage
from remote.errors import ModelError, ModelNotConfigured, ModelUnreachable

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)

PURPOSE_HEADER = "X-Remote-Purpose"
PURPOSES = ("plan", "locate", "verify", "agent")
JSON_SHAPE = "only the corrected JSON object, no prose and no code fences"


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff between attempts: ``base * 2**n`` plus up to ``base`` of jitter, at most
    ``max_wait``; a server's ``Retry-After`` wins but is capped at ``retry_after_cap``."""

    base: float = 0.5
    max_wait: float = 8.0
    retry_after_cap: float = 30.0


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _sdk() -> Any:
    """The ``openai`` SDK, imported when a model is first called (about 1 s of imports a command without a
    model never pays: docs/testing.md, "What a command costs")."""
    import openai

    return openai


class DeadlinePassed(Exception):
    """The whole exchange took longer than the deadline (a slow or dripping server): a timeout, retried."""


def _is_transient(exc: BaseException) -> bool:
    openai = _sdk()
    if isinstance(exc, DeadlinePassed | openai.RateLimitError | openai.APIConnectionError | openai.InternalServerError):
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code >= 500 or exc.status_code == 408)


class LLMClient:
    """``LLMClient(config).complete([{"role": "user", "content": "hi"}], purpose="plan")``.

    ``retry`` and ``sleep`` are seams for tests (tiny backoff, recorded waits).
    """

    def __init__(self, config: LLMConfig, usage: ModelUsage | None = None, *,
                 retry: RetryPolicy | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config.require()
        self.family: Family = family_for(config.model, config.family)
        self.usage = usage if usage is not None else ModelUsage()
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self.waits: list[float] = []                       # backoff waits of the last call
        self.last_images: list[imaging.EncodedImage] = []  # sizes the model saw in the last call
        self._encoded: list[tuple[weakref.ref[Image.Image], imaging.EncodedImage]] = []   # `_encode`
        self._client = self._new_client()

    def _new_client(self) -> openai.OpenAI:
        client: openai.OpenAI = _sdk().OpenAI(base_url=self.config.base_url, api_key=self.config.api_key or "no-key",
                                              timeout=self.config.timeout, max_retries=0)
        return client

    def __repr__(self) -> str:
        return (f"LLMClient(provider={self.config.provider!r}, model={self.config.model!r}, "
                f"base_url={self.config.base_url!r}, api_key={mask_secret(self.config.api_key)!r})")

    # -- public -----------------------------------------------------------------------------

    def complete(self, messages: Sequence[dict[str, Any]], *, purpose: str,
                 images: Sequence[Image.Image] = (), timeout: float | None = None,
                 drop_images: bool = False, images_to: str = "first") -> str:
        """The reply text. Images go with the first user message (``images_to="last"``: the last one, as a
        phone agent's current screen), in order, at the size the model's family prefers.

        A model without vision gets no images: a ``ModelError`` unless ``drop_images``.
        """
        if images and not self.config.supports_vision:
            if not drop_images:
                raise ModelError(f"model {self.config.model!r} does not accept images", purpose=purpose,
                                 hint="use a vision model for this, or set LLM_SUPPORTS_VISION=1 if it has one")
            images = ()
        payload = self._with_images(messages, images, images_to)
        timeout = timeout or self.config.timeout
        start = time.monotonic()
        response = self._call_with_retries(payload, purpose, timeout)
        seconds = time.monotonic() - start
        choices = getattr(response, "choices", None)
        if not choices:
            raise ModelError(f"{purpose}: the server's answer has no choices", raw=self.scrub(str(response)[:2000]),
                             purpose=purpose)
        content = choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        self.usage.add(purpose, prompt_tokens, completion_tokens, seconds)
        logger.info("model %s purpose=%s tokens=%d+%d %.2fs attempts=%d", self.config.model, purpose,
                    prompt_tokens, completion_tokens, seconds, len(self.waits) + 1)
        if not content.strip():
            raise ModelError(f"{purpose}: the model returned an empty reply", raw="", purpose=purpose)
        return content

    def complete_json(self, messages: Sequence[dict[str, Any]], *, purpose: str,
                      images: Sequence[Image.Image] = (), timeout: float | None = None,
                      expect: Expect = None) -> Any:
        """The reply as validated JSON (see :func:`ask_json`)."""
        return ask_json(self, messages, purpose=purpose, images=images, timeout=timeout, expect=expect)

    def scrub(self, text: str) -> str:
        """``text`` with the API key masked."""
        key = self.config.api_key
        return text.replace(key, mask_secret(key)) if key and text else text

    # -- internals --------------------------------------------------------------------------

    def sent_size(self, size: tuple[int, int]) -> tuple[int, int]:
        """The size an image of ``size`` is sent at (the frame the model sees)."""
        return send_size(size, self.config.max_image_side, self.family.frame)

    def _encode(self, img: Image.Image) -> imaging.EncodedImage:
        """``img`` as sent, encoded once for the last few images this client sent (the same screen asked about
        again: a reply that could not be read, the next question on one screen). By identity: nothing draws on
        a screenshot in place (marks and report boxes are drawn on copies). 40-50 ms a 1080x2400 screen."""
        size = self.sent_size(img.size)
        for kept, encoded in self._encoded:
            if kept() is img and encoded.sent_size == size:
                return encoded
        encoded = imaging.encode_image(img, size)
        self._encoded = [*self._encoded[-3:], (weakref.ref(img), encoded)]
        return encoded

    def _with_images(self, messages: Sequence[dict[str, Any]], images: Sequence[Image.Image],
                     images_to: str = "first") -> list[dict[str, Any]]:
        self.last_images = [self._encode(img) for img in images]
        out = [dict(m) for m in messages]
        if not self.last_images:
            return out
        users = [m for m in out if m.get("role") == "user"]
        target = (users[-1] if images_to == "last" else users[0]) if users else None
        if target is None:
            target = {"role": "user", "content": ""}
            out.append(target)
        parts: list[dict[str, Any]] = [{"type": "text", "text": str(target.get("content", ""))}]
        parts += [{"type": "image_url", "image_url": {"url": e.url}} for e in self.last_images]
        target["content"] = parts
        return out

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        after = _retry_after(exc) if exc else None
        if after is not None:
            return min(after, self.retry.retry_after_cap)
        exponential = self.retry.base * 2 ** (state.attempt_number - 1)
        return float(min(self.retry.max_wait, exponential + random.uniform(0, self.retry.base)))

    def _record_sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self._sleep(seconds)

    def _log_retry(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        logger.warning("model call failed (%s), attempt %d of %d", self.scrub(type(exc).__name__),
                       state.attempt_number, self.config.max_retries + 1)

    def _create(self, payload: list[dict[str, Any]], purpose: str, timeout: float) -> Any:
        """One attempt, bounded as a whole by ``timeout`` seconds (connect + send + read)."""
        client = self._client
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["reply"] = client.chat.completions.create(
                    model=self.config.model, messages=payload, timeout=timeout,  # type: ignore[arg-type]
                    temperature=0, extra_headers={PURPOSE_HEADER: purpose},
                    extra_body=self.family.extra_body(self.config.base_url) or None)
            except BaseException as exc:  # handed to the caller's thread as it is
                outcome["error"] = exc

        worker = threading.Thread(target=call, name=f"model-{purpose}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            client.close()                   # the worker's read fails and it ends
            self._client = self._new_client()
            raise DeadlinePassed()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["reply"]

    def _call_with_retries(self, payload: list[dict[str, Any]], purpose: str, timeout: float) -> Any:
        self.waits = []
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.config.max_retries + 1), wait=self._wait,
            retry=tenacity.retry_if_exception(_is_transient), sleep=self._record_sleep,
            before_sleep=self._log_retry, reraise=True)
        attempts, openai = self.config.max_retries + 1, _sdk()
        try:
            return retrying(self._create, payload, purpose, timeout)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ModelNotConfigured(f"authentication failed (HTTP {exc.status_code}) at {self.config.base_url}",
                                     hint=f"check {self.config.key_env}") from exc
        except (openai.APITimeoutError, DeadlinePassed) as exc:
            raise ModelError(f"{purpose}: no reply within {timeout:g} s ({attempts} attempts)",
                             purpose=purpose, hint="raise LLM_TIMEOUT or try later") from exc
        except openai.RateLimitError as exc:
            raise ModelError(f"{purpose}: rate limited by the provider ({attempts} attempts)",
                             raw=self._body(exc), purpose=purpose, hint="wait and retry, or lower the load") from exc
        except openai.APIConnectionError as exc:   # nothing answered: the environment, exit status 2
            raise ModelUnreachable(f"{purpose}: cannot reach {self.config.base_url} ({attempts} attempts): "
                             f"{self.scrub(str(exc))}", purpose=purpose) from exc
        except openai.APIStatusError as exc:
            raise ModelError(f"{purpose}: HTTP {exc.status_code} from {self.config.base_url}",
                             raw=self._body(exc), purpose=purpose) from exc
        except (openai.OpenAIError, ValueError) as exc:   # unreadable body, validation of the answer
            raise ModelError(f"{purpose}: unreadable answer from the server ({type(exc).__name__})",
                             raw=self.scrub(str(exc))[:2000], purpose=purpose) from exc

    def _body(self, exc: openai.APIStatusError) -> str:
        try:
            return self.scrub(exc.response.text)[:2000]
        except (AttributeError, UnicodeDecodeError):
            return ""


class UsesModel:
    """A component whose model client is made on first use, so building it costs nothing.

    Subclasses set ``config``, ``_client`` (a given client, or None) and ``_usage``.
    """

    config: LLMConfig
    _client: ChatModel | None
    _usage: ModelUsage | None

    @property
    def client(self) -> ChatModel:
        if self._client is None:
            self._client = LLMClient(self.config, self._usage)
        return self._client


def ask_json(model: ChatModel, messages: Sequence[dict[str, Any]], *, purpose: str,
             images: Sequence[Image.Image] = (), timeout: float | None = None, expect: Expect = None) -> Any:
    """Ask ``model`` and parse its reply leniently; one corrective re-ask, then ``ModelError``.

    ``expect`` is a validator (returns what to use, raises ``ValueError`` listing the
    problems) or a list of required keys. Works with any :class:`ChatModel`.
    """
    return ask_read(model, messages, purpose=purpose, images=images, timeout=timeout,
                    read=lambda raw: check_expected(parse_json_reply(raw), expect), shape=JSON_SHAPE)


def ask_read(model: ChatModel, messages: Sequence[dict[str, Any]], *, purpose: str, read: Callable[[str], Any],
             shape: str, images: Sequence[Image.Image] = (), timeout: float | None = None,
             images_to: str = "first") -> Any:
    """Ask ``model``; ``read`` turns the reply into what the caller uses (raises ``ValueError`` naming what is
    wrong). One corrective re-ask that names the problem and the ``shape`` to answer in (the family's own
    convention, for a locate), then ``ModelError`` with the raw reply.
    """
    where: dict[str, Any] = {"images_to": images_to} if images_to != "first" else {}
    raw = model.complete(messages, purpose=purpose, images=images, timeout=timeout, **where)
    try:
        return read(raw)
    except ValueError as exc:
        problem = str(exc)
    logger.info("model reply for %s unusable (%s); asking once more", purpose, problem)
    correction = render("correction", {"problem": problem, "shape": shape})
    retry_messages = [*messages, {"role": "assistant", "content": raw}, {"role": "user", "content": correction}]
    raw2 = model.complete(retry_messages, purpose=purpose, images=images, timeout=timeout, **where)
    try:
        return read(raw2)
    except ValueError as exc:
        raise ModelError(f"{purpose}: the model's reply stayed unusable after a corrective re-ask: {exc}",
                         raw=raw2, purpose=purpose, hint="see the raw reply in the run record") from exc
