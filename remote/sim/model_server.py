"""A loopback chat-completions server with scripted replies (for tests and offline demos).

A real HTTP server (``http.server`` in a thread, port 0 by default) that speaks
``POST /v1/chat/completions`` (non-streaming), so the real ``openai`` client is
pointed at it by ``base_url``. Replies are queued per purpose (FIFO)::

    with ModelServer() as server:
        server.script("plan", {"analysis": {}, "steps": [...]})   # a dict is sent as JSON text
        server.script("locate", "not json at all")                # a string is sent as is
        server.script("verify", Fault.rate_limit(retry_after=1), {"verified": True})
        config = LLMConfig.custom(api_key="sk-test", base_url=server.url, model="test-vl")

A request's purpose is the ``X-Remote-Purpose`` header, else a line
``purpose: <name>`` in its system prompt, else ``default``. A purpose with an
empty queue falls back to the ``*`` queue, then to the standing rules
(``server.rules(...)``, what ``remote model-sim --script`` loads): tried in order,
each matching on purpose and/or a substring of the prompt, answering ``times``
times or forever, with a delay, an HTTP status or a body dripped at N bytes/s.
With nothing that fits, the answer is HTTP 404 naming the purpose. Every request
is recorded in ``server.requests`` (the newest ``keep_requests`` when set, and at
most ``keep_bytes`` of request bodies).

With ``family=`` (``remote model-sim --family NAME``) the server answers in that
model family's dialect (:mod:`remote.sim.dialects`): a *neutral* reply such as
``{"box": [804, 78, 936, 210]}`` (phone pixels of a ``screen``-sized phone) or
``{"action": "tap", "box": [...]}`` is written the way the family writes it, in the
frame its server made of the image received. A reply may also be a function of the
:class:`RecordedRequest` (a scripted model that looks at the phone).

Bounded, since it checks no key: a request body over ``MAX_BODY`` is refused (413)
before it is read; at most ``MAX_CONNECTIONS`` connections (`remote.sim.bounded_http`) are served at once (the
next one gets 503 and is closed); a connection silent for ``IDLE_TIMEOUT_S`` seconds
is closed (a stalled client frees its thread).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from remote.sim.bounded_http import BoundedHTTPServer
from remote.sim.dialects import DIALECTS, is_neutral, render, seen_frame
from remote.sim.model_requests import Fault, RecordedRequest, Rule, purpose_of, tokens_of

MAX_BODY = 16 * 1024 * 1024   # remote sends screenshots as JPEG: a request with a few is 1-3 MB
IDLE_TIMEOUT_S = 30.0         # per read or write of a connection (not the scripted delays)


class ModelServer:
    """See the module docstring. ``url`` ends in ``/v1``; ``stop()`` ends slow replies early."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, model: str = "test-vl",
                 keep_requests: int | None = None, keep_bytes: int | None = None,
                 idle_timeout: float = IDLE_TIMEOUT_S,
                 on_request: Callable[[RecordedRequest], None] | None = None,
                 family: str | None = None, screen: tuple[int, int] = (1080, 2400)) -> None:
        if family is not None and family not in DIALECTS:
            raise ValueError(f"no dialect {family!r}; known: {', '.join(DIALECTS)}")
        self.model = model
        self.family = family
        self.screen = screen
        self.idle_timeout = idle_timeout
        self.requests: list[RecordedRequest] = []
        self.keep_requests = keep_requests
        self.keep_bytes = keep_bytes
        self._kept_bytes = 0
        self.on_request = on_request      # called after each answer (the model-sim command prints it)
        self._queues: dict[str, deque[Any]] = defaultdict(deque)
        self._rules: list[list[Any]] = []   # [rule, answers left or None]
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = BoundedHTTPServer((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host if isinstance(host, str) else host.decode()}:{port}/v1"

    def start(self) -> ModelServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="model-server", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, purpose: str, *replies: Any) -> ModelServer:
        """Queue replies for ``purpose`` (``*`` for any): str, dict/list (sent as JSON text) or a Fault."""
        with self._lock:
            self._queues[purpose].extend(replies)
        return self

    def rules(self, *rules: Rule) -> ModelServer:
        """Add standing rules, tried in order after the scripted queues."""
        with self._lock:
            self._rules.extend([rule, rule.times] for rule in rules)
        return self

    def pending(self, purpose: str | None = None) -> int:
        with self._lock:
            if purpose is not None:
                return len(self._queues[purpose])
            return sum(len(q) for q in self._queues.values())

    def requests_for(self, purpose: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.purpose == purpose]

    def _next(self, purpose: str, text: str) -> Any:
        with self._lock:
            for name in (purpose, "*"):
                if self._queues[name]:
                    return self._queues[name].popleft()
            for slot in self._rules:
                rule, left = slot
                if left != 0 and rule.matches(purpose, text):
                    if left is not None:
                        slot[1] = left - 1
                    return rule
        return None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._kept_bytes += request.size
            while self.requests and (
                    (self.keep_requests is not None and len(self.requests) > self.keep_requests)
                    or (self.keep_bytes is not None and self._kept_bytes > self.keep_bytes)):
                self._kept_bytes -= self.requests.pop(0).size

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"owner": self, "timeout": self.idle_timeout})


class _Handler(BaseHTTPRequestHandler):
    """One request of a :class:`ModelServer` (``owner``): recorded, then answered as scripted."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S   # socket timeout of each read and write: a stalled client is let go
    owner: ModelServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True
            self._json(413, {"error": {"message": f"request body must be 0-{MAX_BODY} bytes"}})
            return
        try:
            raw = self.rfile.read(length) if length else b""
        except OSError:   # silent past IDLE_TIMEOUT_S, or gone: nothing to answer
            self.close_connection = True
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._json(400, {"error": {"message": "request body is not a JSON object"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest(purpose_of(body, headers), body, headers, self.path, len(raw))
        self.owner._record(request)
        request.answer = self._route(request)
        if self.owner.on_request is not None:
            self.owner.on_request(request)

    def _route(self, request: RecordedRequest) -> str:
        """Answer ``request``; returns what was sent, in a few words."""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return "404: no such route"
        reply = self.owner._next(request.purpose, request.text)
        if reply is None:
            self._json(404, {"error": {"message": f"no scripted reply for purpose {request.purpose!r}"}})
            return "404: nothing scripted fits"
        if isinstance(reply, Rule):
            return self._rule(reply, request)
        self._answer(reply, request)
        return f"fault {reply.kind}" if isinstance(reply, Fault) else "scripted reply"

    def _rule(self, rule: Rule, request: RecordedRequest) -> str:
        where = f"rule {rule.where}" if rule.where else "rule"
        if rule.delay and self.owner._stopping.wait(rule.delay):
            return f"{where}: stopped while waiting"
        if rule.status == 200:
            self._completion(rule.reply, request, rule.drip)
            return f"{where}: 200"
        headers = {"Retry-After": f"{rule.retry_after:g}"} if rule.retry_after is not None else {}
        error = rule.reply if isinstance(rule.reply, dict) else \
            {"error": {"message": rule.reply or f"scripted HTTP {rule.status}", "type": "scripted"}}
        self._json(rule.status, error, headers, rule.drip)
        return f"{where}: HTTP {rule.status}"

    def _answer(self, reply: Any, request: RecordedRequest) -> None:
        if not isinstance(reply, Fault):
            self._completion(reply, request)
        elif reply.kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif reply.kind == "slow":
            if not self.owner._stopping.wait(reply.delay):
                self._answer(reply.reply, request)
        elif reply.kind == "bad_body":
            self._send(200, b"<html>upstream error</html>", "text/html")
        else:
            headers = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = f"{reply.retry_after:g}"
            self._json(reply.status, {"error": {"message": f"scripted HTTP {reply.status}",
                                                "type": "scripted"}}, headers)

    def _completion(self, reply: Any, request: RecordedRequest, drip: int | None = None) -> None:
        body = request.body
        if callable(reply):
            reply = reply(request)
        family = self.owner.family
        if family is not None and is_neutral(reply):
            dialect = DIALECTS[family]
            sizes = request.image_sizes()
            size = sizes[-1] if sizes else self.owner.screen
            frame = seen_frame(dialect, size, bool(body.get("vl_high_resolution_images")))
            reply = render(dialect, reply, self.owner.screen, frame)
        content = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
        self._json(200, {
            "id": f"chatcmpl-{len(self.owner.requests)}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", self.owner.model),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": tokens_of(prompt), "completion_tokens": tokens_of(content),
                      "total_tokens": tokens_of(prompt) + tokens_of(content)},
        }, drip=drip)

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None,
              drip: int | None = None) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                   "application/json", headers, drip)

    def _send(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None,
              drip: int | None = None) -> None:
        # One exchange per connection: a client that keeps its connection open and idle (an openai client
        # nobody closed) would otherwise hold one of the server's MAX_CONNECTIONS slots until its idle timeout.
        self.close_connection = True
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if not drip:
                self.wfile.write(data)
                return
            chunk = max(1, drip // 10)   # ten writes a second
            for i in range(0, len(data), chunk):
                if self.owner._stopping.wait(chunk / drip):
                    self.close_connection = True
                    return
                self.wfile.write(data[i:i + chunk])
        except OSError:   # the client gave up (timeout) before we answered
            self.close_connection = True
