"""YAML loading that remembers line numbers and refuses files that cost far more than they say.

Mappings come back as :class:`LineDict` (a dict with ``.line``, 1-based), so
validation long after parsing can still say ``tasks.yaml:14: unknown action 'clik'``.

Bounded: a file over ``MAX_BYTES``, a document whose aliases would expand to more
than ``MAX_NODES`` nodes (a "billion laughs" bomb is 30 lines), or one nested deeper
than Python can parse is a :class:`ConfigError` in milliseconds, quoting at most a
short excerpt. Only YAML's safe subset is loaded.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import yaml

from remote.errors import ConfigError

MAX_BYTES = 1_000_000
MAX_NODES = 100_000
EXCERPT = 60
# Every TaskRunner reads the shipped modules' files again (a batch, the MCP server and the test suite build
# hundreds): a text read before comes back as a copy of its document, not parsed again by PyYAML's pure-Python
# loader (the 14 shipped files: 0.12 s of CPU parsed, 5 ms copied). Only documents that parsed are kept.
KEPT_DOCUMENTS = 64
KEPT_TEXT_CHARS = 100_000
_parsed: OrderedDict[str, Any] = OrderedDict()
_parsed_lock = threading.Lock()


class LineDict(dict[Any, Any]):
    """A dict that knows the line it started on in its YAML file, and the line of each key."""

    line: int = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines: dict[Any, int] = {}

    def line_of_key(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


# libyaml's parser when PyYAML was built with it (its wheels are): the same nodes and marks, ~18x faster on the
# shipped modules (0.15 s -> 0.008 s for 14 files), which every command pays at start
_Parser: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_Parser):  # type: ignore[valid-type,misc]
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    own = {id(k) for k, _ in node.value}     # the mapping's own keys: those merged in (`<<: *base`) may be overridden
    loader.flatten_mapping(node)
    out = LineDict()
    seen: dict[Any, int] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError as exc:
            raise yaml.constructor.ConstructorError(None, None, f"unhashable key {str(key)[:EXCERPT]!r}",
                                                    key_node.start_mark) from exc
        if id(key_node) in own:
            if key in seen:   # plain YAML keeps the last silently: a typo'd copy would win unnoticed
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {str(key)[:EXCERPT]!r} (first on line {seen[key]})",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    out.line = node.start_mark.line + 1
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def expanded_size(node: yaml.Node | None) -> int:
    """Nodes the document would have with every alias expanded (shared nodes counted each time they appear)."""
    memo: dict[int, int] = {}

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in memo:
            return memo[key]
        memo[key] = 1   # a cycle (`&a [*a]`) counts once instead of recursing forever
        total = 1
        if isinstance(n, yaml.SequenceNode):
            total += sum(size(child) for child in n.value)
        elif isinstance(n, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in n.value)
        memo[key] = min(total, MAX_NODES + 1)
        return memo[key]

    return size(node) if node is not None else 0


def _flow_slot_hint(text: str, line: int | None) -> str:
    """A ``{slot}`` inside an unquoted ``[...]`` or ``{...}`` is YAML syntax, not text: say to quote it."""
    if line is None:
        return ""
    lines = text.splitlines()
    if 0 < line <= len(lines) and "{" in lines[line - 1] and ("[" in lines[line - 1] or ": {" in lines[line - 1]):
        return "a {slot} inside [ ... ] or { ... } must be quoted: write ['查{city}天气'] rather than [查{city}天气]"
    return ""


def parse_yaml_text(text: str, path: Path) -> Any:
    """Parse YAML text of ``path`` (for messages) with the bounds above; the caller's own copy of the document."""
    with _parsed_lock:
        if text in _parsed:
            _parsed.move_to_end(text)
            return copy.deepcopy(_parsed[text])
    document = _parse(text, path)
    if len(text) <= KEPT_TEXT_CHARS:
        with _parsed_lock:
            _parsed[text] = copy.deepcopy(document)
            while len(_parsed) > KEPT_DOCUMENTS:
                _parsed.popitem(last=False)
    return document


def _parse(text: str, path: Path) -> Any:
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise ConfigError(f"the file is larger than {MAX_BYTES // 1000} kB", path=str(path))
    loader = _LineLoader(text)
    try:
        node = loader.get_single_node()
        if expanded_size(node) > MAX_NODES:
            raise ConfigError(f"its aliases expand to more than {MAX_NODES} nodes (an alias bomb?)",
                              path=str(path), hint="write the values out instead of repeating anchors")
        return loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = str(getattr(exc, "problem", None) or exc)[:200]
        raise ConfigError(f"invalid YAML: {problem}", path=str(path), line=line,
                          hint=_flow_slot_hint(text, line)) from exc
    except RecursionError as exc:
        raise ConfigError("nested too deeply to read", path=str(path)) from exc
    finally:
        loader.dispose()


def load_yaml(path: Path) -> Any:
    """Parse one YAML file; every problem becomes a ConfigError with file and line."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ConfigError(f"the file is larger than {MAX_BYTES // 1000} kB", path=str(path))
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("not UTF-8 text", path=str(path)) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    return parse_yaml_text(text, path)


def line_of(value: Any, default: int | None = None) -> int | None:
    return getattr(value, "line", None) or default


def line_of_key(mapping: Any, key: Any) -> int | None:
    """The line of ``key`` in a loaded mapping (the mapping's own line when unknown)."""
    if isinstance(mapping, LineDict):
        return mapping.line_of_key(key)
    return None
