"""Prompt templates: package data files under ``remote/ai/prompts/``, rendered strictly.

Templates use ``string.Template`` placeholders (``$task``, ``${references}``) so
JSON examples with braces need no escaping. A placeholder without a value is an
error (:class:`PromptError`), and so is a value the template never uses (a typo
in a caller). A ``$`` meant literally is written ``$$``.

The first line of every system prompt is ``purpose: <plan|locate|verify>``, which
makes a request's purpose visible to a server (the loopback server routes on
it as well as on the ``X-Remote-Purpose`` header).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from pathlib import Path

from remote.errors import ConfigError

PROMPTS_DIR = Path(__file__).with_name("prompts")


class PromptError(ConfigError, ValueError):
    """A template is missing, or a placeholder and its values do not agree."""


def load_template(name: str, *, extra: Path | None = None) -> str:
    """The text of ``prompts/<name>.txt``, followed by ``extra`` (a module's file) if given."""
    path = PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise PromptError(f"no prompt template {path}")
    text = path.read_text(encoding="utf-8")
    if extra is not None:
        extra = Path(extra)
        if not extra.is_file():
            raise PromptError(f"module prompt {extra} does not exist")
        text = text.rstrip("\n") + "\n\n" + extra.read_text(encoding="utf-8")
    return text


def placeholders(template: str) -> set[str]:
    """Names a template uses (``$$`` is not one)."""
    names: set[str] = set()
    for match in string.Template.pattern.finditer(template):
        name = match.group("named") or match.group("braced")
        if name:
            names.add(name)
        elif match.group("invalid") is not None:
            raise PromptError(f"stray '$' at offset {match.start()} (write $$ for a literal dollar)")
    return names


def render_text(template: str, values: Mapping[str, object], *, source: str = "template") -> str:
    """Fill ``template`` strictly: every placeholder needs a value and every value a placeholder."""
    needed = placeholders(template)
    missing = sorted(needed - set(values))
    unused = sorted(set(values) - needed)
    if missing or unused:
        problems = []
        if missing:
            problems.append(f"missing values for {', '.join(missing)}")
        if unused:
            problems.append(f"values not used by the template: {', '.join(unused)}")
        raise PromptError(f"{source}: {'; '.join(problems)}")
    return string.Template(template).substitute({k: str(v) for k, v in values.items()})


def render(name: str, values: Mapping[str, object] | None = None, *, extra: Path | None = None) -> str:
    """``render("verify_description", {"expected": "微信主界面", ...})``."""
    return render_text(load_template(name, extra=extra), values or {}, source=f"prompts/{name}.txt")


def available() -> list[str]:
    """Names of every packaged template."""
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.txt"))
