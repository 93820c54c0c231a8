"""YAML loading that remembers line numbers, so every error names the file and the line.

Mappings come back as :class:`LineDict` (a dict with ``.line``, 1-based), so
validation long after parsing can still say ``tasks.yaml:14: unknown action 'clik'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from remote.errors import ConfigError


class LineDict(dict):
    """A dict that knows the line it started on in its YAML file."""

    line: int = 0


class _LineLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError as exc:
            raise yaml.constructor.ConstructorError(None, None, f"unhashable key {key!r}",
                                                    key_node.start_mark) from exc
        out[key] = loader.construct_object(value_node, deep=True)
    out.line = node.start_mark.line + 1
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: Path) -> Any:
    """Parse one YAML file; syntax errors become ConfigError with file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"invalid YAML: {problem}", path=str(path),
                          line=mark.line + 1 if mark else None) from exc


def line_of(value: Any, default: int | None = None) -> int | None:
    return getattr(value, "line", None) or default
