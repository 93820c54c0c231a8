"""`remote model-sim --script FILE`: the loopback chat-completions server for testers, scripted in YAML.

A script is a list of rules, tried in order for every request; the first that
matches answers (docs/testing.md, "model-sim")::

    model: test-vl                      # optional: the model name the server reports
    rules:
      - match: {purpose: plan, prompt: 深色模式}   # purpose: plan | locate | verify | default
        reply: {analysis: {current_screen: 设置}, steps: [...], success_check: {...}}
        times: 1                        # answer once, then let the next rule answer; default: forever
      - match: {purpose: verify}
        status: 429                     # an HTTP error instead of a reply
        retry_after: 2
      - reply: "not JSON at all"        # no match: every request; a string is sent as is
        delay: 3                        # seconds before answering
        drip: 20                        # bytes per second: a reply that trickles in

With ``family: NAME`` (or ``--family NAME``) replies may be neutral, written in that
family's dialect by the server (remote/sim/dialects.py)::

    family: ui-tars-1.5
    screen: 1080x2400                   # the phone the pixels below refer to
    rules:
      - match: {purpose: locate}
        reply: {box: [804, 78, 936, 210]}          # or {point: [870, 144]}; variant: thinking | corrected ...
      - match: {purpose: agent}
        reply: {action: tap, box: [804, 78, 936, 210], thought: 点搜索}

The file is loaded and checked here (the server in ``remote.sim`` imports nothing
of the product): every problem is a ConfigError with the file and line.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remote.errors import ConfigError
from remote.sim.dialects import DIALECTS
from remote.sim.model_requests import RecordedRequest, Rule
from remote.sim.model_server import ModelServer
from remote.yamlfile import LineDict, line_of, line_of_key, load_yaml

PURPOSES = ("plan", "locate", "verify", "agent", "default")
RULE_KEYS = ("match", "reply", "delay", "status", "retry_after", "drip", "times")
MATCH_KEYS = ("purpose", "prompt")
MAX_SECONDS = 3600.0
KEEP_REQUESTS = 200
KEEP_BYTES = 64 * 1024 * 1024   # of request bodies kept for inspection: a few large requests push old ones out


@dataclass(frozen=True)
class Script:
    """A loaded script: the model name the server reports, the rules in order, and the dialect (family, and the
    phone size neutral replies refer to)."""

    model: str
    rules: list[Rule]
    family: str | None = None
    screen: tuple[int, int] = (1080, 2400)


def load_script(path: str | Path) -> Script:
    """Read and check a model-sim script; ConfigError (file:line) on any problem."""
    file = Path(path)
    data = load_yaml(file)
    model, list_line, family, screen = "test-vl", 1, None, (1080, 2400)
    if isinstance(data, dict):
        list_line = line_of_key(data, "rules") or 1
        _only(data, ("model", "rules", "family", "screen"), file, "the script")
        if "model" in data:
            if not isinstance(data["model"], str) or not data["model"].strip():
                raise _error("model: must be a model name", file, data, "model")
            model = data["model"].strip()
        if "family" in data:
            family = _family(data["family"], lambda m: _error(m, file, data, "family"))
        if "screen" in data:
            screen = _screen(data["screen"], lambda m: _error(m, file, data, "screen"))
        data = data.get("rules")
    if not isinstance(data, list) or not data:
        raise ConfigError("a script is a list of rules (or `rules:` with that list), and it has none", path=str(file),
                          line=line_of(data, 1), hint="see `python -m remote model-sim --help` for an example")
    rules = []
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise ConfigError(f"rule {i} must be a mapping (match:, reply:, ...), not {type(item).__name__}",
                              path=str(file), line=line_of(item) or list_line)  # YAML lists keep no lines
        rules.append(Rule(**_rule_fields(item, file), where=f"{file.name}:{line_of(item, 0)}"))
    return Script(model, rules, family, screen)


def _family(value: Any, error: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in DIALECTS:
        raise error(f"family: must be one of {', '.join(DIALECTS)}, not {str(value)[:40]!r}")
    return value.strip().lower()


def _screen(value: Any, error: Any) -> tuple[int, int]:
    parts = str(value).lower().replace("×", "x").split("x")
    try:
        w, h = (int(p) for p in parts)
    except ValueError:
        raise error(f"screen: must be WIDTHxHEIGHT such as 1080x2400, not {str(value)[:40]!r}") from None
    if not (100 <= w <= 10_000 and 100 <= h <= 10_000):
        raise error(f"screen: {w}x{h} is not a phone screen (100-10000 px a side)")
    return w, h


def _rule_fields(item: dict[str, Any], file: Path) -> dict[str, Any]:
    _only(item, RULE_KEYS, file, "a rule")
    match = item.get("match") or {}
    if not isinstance(match, dict):
        raise _error("match: must be a mapping such as {purpose: plan} or {prompt: 深色模式}", file, item, "match")
    _only(match, MATCH_KEYS, file, "match")
    purpose, prompt = match.get("purpose"), match.get("prompt")
    if purpose is not None and purpose not in PURPOSES:
        raise _error(f"match.purpose must be one of {', '.join(PURPOSES)}, not {str(purpose)[:40]!r}",
                     file, match, "purpose")
    if prompt is not None and (not isinstance(prompt, str | int | float) or isinstance(prompt, bool)
                               or not str(prompt)):
        raise _error("match.prompt must be text found in the prompt", file, match, "prompt")
    status = _number(item, "status", file, int, 100, 599, 200)
    if "reply" in item:
        reply = item["reply"]
        if not isinstance(reply, str | dict | list) or (status != 200 and isinstance(reply, list)):
            raise _error("reply: must be a mapping (sent as JSON text) or a string (sent as is)", file, item, "reply")
    elif status == 200:
        raise ConfigError("a rule needs reply: (or a status: other than 200)", path=str(file), line=line_of(item))
    return {"reply": _plain(item.get("reply")), "purpose": purpose,
            "prompt": None if prompt is None else str(prompt), "status": status,
            "delay": _number(item, "delay", file, float, 0, MAX_SECONDS, 0.0),
            "retry_after": _number(item, "retry_after", file, float, 0, MAX_SECONDS, None),
            "drip": _number(item, "drip", file, int, 1, 10_000_000, None),
            "times": _number(item, "times", file, int, 1, 1_000_000, None)}


def _number(item: dict[str, Any], key: str, file: Path, kind: type, low: float, high: float, default: Any) -> Any:
    if key not in item:
        return default
    value = item[key]
    ok = isinstance(value, int | float) and not isinstance(value, bool) and (kind is float or value == int(value))
    if not ok or not low <= value <= high:
        what = "a whole number" if kind is int else "a number"
        raise _error(f"{key}: must be {what} from {low:g} to {high:g}, not {str(value)[:40]!r}", file, item, key)
    return kind(value)


def _only(mapping: dict[str, Any], known: tuple[str, ...], file: Path, what: str) -> None:
    for key in mapping:
        if key not in known:
            raise _error(f"unknown key {str(key)[:40]!r} in {what} (known: {', '.join(known)})", file, mapping, key)


def _error(message: str, file: Path, mapping: Any, key: Any) -> ConfigError:
    line = mapping.line_of_key(key) if isinstance(mapping, LineDict) else line_of(mapping)
    return ConfigError(message, path=str(file), line=line)


def _plain(value: Any) -> Any:
    """LineDicts back to plain dicts and lists (what json.dumps sends)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def run(args: argparse.Namespace) -> int:
    script = load_script(args.script)
    family = _family(args.family, ConfigError) if getattr(args, "family", None) else script.family
    screen = _screen(args.screen, ConfigError) if getattr(args, "screen", None) else script.screen
    printing = threading.Lock()

    def show(request: RecordedRequest) -> None:
        with printing:
            print(f"  {request.purpose:<8} -> {request.answer}", flush=True)

    try:
        server = ModelServer(args.host, args.port, model=script.model, keep_requests=KEEP_REQUESTS,
                             keep_bytes=KEEP_BYTES, on_request=show, family=family, screen=screen)
    except OSError as exc:
        busy = exc.errno == errno.EADDRINUSE
        raise ConfigError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                          hint="choose another --port (0 picks a free one)" if busy else "check --host") from exc
    if not _loopback(args.host):
        print(f"warning: model-sim listens on {args.host}, beyond this machine, and checks no key: anyone who can "
              "reach this port can use it and read the requests it shows. Keep it on 127.0.0.1 unless you "
              "must.", file=sys.stderr, flush=True)
    try:
        _announce(args, script, server.url, family)
        server.rules(*script.rules).start()
        threading.Event().wait()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.stop()
    return 0


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def _announce(args: argparse.Namespace, script: Script, url: str, family: str | None) -> None:
    dialect = f", answering as {family}" if family else ""
    print(f"model-sim: {len(script.rules)} rule(s) from {args.script}, model {script.model!r}{dialect}, on {url}")
    print("point remote at it:")
    print("  export LLM_PROVIDER=custom")
    print(f"  export CUSTOM_LLM_BASE_URL={url}")
    print(f"  export CUSTOM_LLM_MODEL={script.model}")
    if family:
        print(f"  export LLM_MODEL_FAMILY={family}   # read its replies as {family}")
    print("  export CUSTOM_LLM_API_KEY=sk-local     # any value: this server checks none")
    print('  python -m remote run --device sim "…"')
    print("requests as they come (purpose -> the rule that answered); Ctrl-C stops it.", flush=True)
