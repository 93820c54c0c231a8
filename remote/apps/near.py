"""Near misses: the templates a task nearly fits, for a "did you mean" instead of a bare failure.

A task that no template fits is compared with every pattern, literal characters
against the task's and each ``{slot}`` taking any run of one or more characters:
the cost is the fewest characters to change, add or drop (an edit distance in
which slots are free). ``给张三发微新消息说你好`` is one change from
``给{contact}发微信消息说{message}``; ``给张三法消息说你好`` one from
``给{contact}发消息说{message}``. Nothing is routed on a near miss: it is said, and
the person decides. Spaces and letter case do not count, as in matching.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from remote.apps.base import TaskTemplate, normalize_task

_SLOT = re.compile(r"\{(\w+)\}")
MAX_TASK_CHARS = 120      # a near miss is a short command; longer text is not compared (cost stays bounded)
MIN_LITERAL = 3           # patterns of fewer fixed characters ("打开{app}") fit almost anything nearly
SHORT_LITERAL = 8         # up to this many fixed characters one change is a near miss, beyond it two


@dataclass(frozen=True)
class NearMiss:
    module: str
    template: str
    pattern: str
    changes: int          # characters to change, add or drop for the task to fit the pattern

    def __str__(self) -> str:
        return f"{self.pattern} (module {self.module}, template {self.template})"


def _squash(text: str) -> str:
    return "".join(normalize_task(text).lower().split())


def _tokens(pattern: str) -> list[str | None]:
    """Literal characters, and None for each slot: ``给{contact}发`` -> ``['给', None, '发']``."""
    out: list[str | None] = []
    for i, part in enumerate(_SLOT.split(pattern)):
        out += [None] if i % 2 else list(_squash(part))
    return out


def changes_needed(task: str, pattern: str) -> int:
    """Fewest characters to change, add or drop in ``task`` for it to fit ``pattern`` (slots take 1+ characters)."""
    text = _squash(task)
    row = list(range(len(text) + 1))
    far = len(text) + len(pattern) + 1
    for token in _tokens(pattern):
        cur = [far if token is None else row[0] + 1]
        for j, ch in enumerate(text, 1):
            if token is None:    # the slot takes this character: its first, or one more
                cur.append(min(row[j - 1], cur[j - 1]))
            else:
                cur.append(min(row[j - 1] + (token != ch), row[j] + 1, cur[j - 1] + 1))
        row = cur
    return row[-1]


def near_misses(task: str, templates: Iterable[tuple[str, TaskTemplate]], limit: int = 3) -> list[NearMiss]:
    """``(module name, template)`` pairs whose patterns ``task`` nearly fits, the closest first (one per template)."""
    if not _squash(task) or len(task) > MAX_TASK_CHARS:
        return []
    best: dict[tuple[str, str], tuple[int, int, NearMiss]] = {}
    for module, template in templates:
        for pattern in template.patterns:
            literal = sum(t is not None for t in _tokens(pattern))
            if literal < MIN_LITERAL:
                continue
            n = changes_needed(task, pattern)
            if not 0 < n <= (1 if literal <= SHORT_LITERAL else 2):
                continue
            key = (module, template.name)
            rank = (n, -literal)
            if key not in best or rank < best[key][:2]:
                best[key] = (*rank, NearMiss(module, template.name, pattern, n))
    return [miss for *_, miss in sorted(best.values(), key=lambda v: v[:2])][:limit]


def did_you_mean(misses: list[NearMiss]) -> str:
    """``did you mean 给{contact}发消息说{message} (module wechat, template send_message)?``, or ``""``."""
    if not misses:
        return ""
    if len(misses) == 1:
        return f"did you mean {misses[0]}?"
    return "did you mean one of: " + "; ".join(str(m) for m in misses) + "?"
