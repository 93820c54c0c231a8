"""A module's ``tasks.yaml`` as text: checked without a file, and a task appended with the file's own text kept.

Shared by ``remote modules adopt`` (a learned task moves into a module) and the
studio (a task built on the page is saved, and its draft is checked as it grows):

* ``check_text(text, path)``: the templates and problems of a ``tasks.yaml`` text,
  exactly as ``modules check`` reads a file (the same schema, the same messages,
  ``path:line`` of the text given);
* ``append_task(tasks_file, task, note)``: the file's text with the task appended
  under a comment, refused (nothing written) when the result would not load;
* ``save_crop``: a reference crop with its screen size, written whole (``core.safe_files.write_atomic``).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import yaml
from PIL import Image, PngImagePlugin

from remote.apps.base import TaskTemplate
from remote.apps.loading import load_templates
from remote.apps.schema import Checker, Problem
from remote.core.locate.assets import SOURCE_SIZE_KEY
from remote.core.safe_files import write_atomic
from remote.errors import ConfigError
from remote.yamlfile import parse_yaml_text

EMPTY_LIST = re.compile(r"^tasks:[ \t]*\[[ \t]*\][ \t]*(#.*)?$", re.MULTILINE)


def check_text(text: str, path: Path, failures: tuple[dict[str, str], ...] = ()) -> tuple[list[TaskTemplate],
                                                                                           list[Problem]]:
    """The templates a ``tasks.yaml`` text holds and every problem found (errors and warnings), named
    ``path:line`` as ``modules check`` names them. ``failures``: the module's own failure screens."""
    checker = Checker(path)
    try:
        parsed = parse_yaml_text(text, path)
    except ConfigError as exc:
        checker.add(exc.line, exc.problem, exc.hint)
        return [], checker.problems
    return load_templates(checker, failures, parsed), checker.problems


def task_block(task: dict[str, Any], note: str) -> str:
    """One task as the lines of an entry of ``tasks:`` (two spaces in), under a ``# note`` comment."""
    block = yaml.safe_dump([plain(task)], allow_unicode=True, sort_keys=False, width=110)
    return f"  # {note}\n" + "".join(f"  {line}\n" for line in block.splitlines())


def append_task(tasks_file: Path, task: dict[str, Any], note: str, *, doing: str = "adding",
                failures: tuple[dict[str, str], ...] = ()) -> str:
    """The text of ``tasks_file`` with ``task`` appended (its own text and comments kept), checked as
    ``modules check`` would check it; a ConfigError, and nothing written, when it would break the file."""
    name = str(task.get("name", ""))
    existing = tasks_file.read_text(encoding="utf-8") if tasks_file.is_file() else "tasks:\n"
    # `tasks: []`, the natural empty file, opens into a block list the task can follow (its comment kept)
    existing = EMPTY_LIST.sub(lambda m: "tasks:" + (f"  {m.group(1)}" if m.group(1) else ""), existing, count=1)
    if existing.strip() and not existing.endswith("\n"):
        existing += "\n"
    text = existing + "\n" + task_block(task, note)
    try:
        parse_yaml_text(text, tasks_file)
    except ConfigError as exc:
        raise ConfigError(f"{doing} {name} would break {tasks_file}: {exc.message}", path=str(tasks_file),
                          line=exc.line, hint="is its tasks: list the last key of the file?") from exc
    templates, problems = check_text(text, tasks_file, failures)
    errors = [p for p in problems if not p.warning]
    if errors or name not in {t.name for t in templates}:
        raise ConfigError(f"{doing} {name} would break {tasks_file}: " + "; ".join(map(str, errors[:3])),
                          path=str(tasks_file))
    return text


def plain(value: Any) -> Any:
    """Loaded YAML (LineDicts) -> plain dicts and lists, for dumping."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def save_crop(image: Image.Image, path: Path, screen: Any) -> None:
    """A reference crop as PNG, written whole, with the size of the screen it was cut from (``[w, h]``) when
    known (the locator's scale prior)."""
    info = PngImagePlugin.PngInfo()
    if isinstance(screen, list | tuple) and len(screen) == 2:
        info.add_text(SOURCE_SIZE_KEY, f"{screen[0]}x{screen[1]}")
    data = io.BytesIO()
    image.save(data, format="PNG", pnginfo=info)
    write_atomic(path, data.getvalue())
