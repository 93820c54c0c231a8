"""Teach mode: the agent guides the person step by step; the person does each step on the phone.

A lesson is one instruction with the current screen annotated (the target's box
and point, found by the hybrid locator). The person sees the instruction and the
annotated screenshot's path through an elicitation and answers "next" (accept)
or stops (decline). Nothing here touches the phone: it only looks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remote.core.record.report import annotate
from remote.core.safe_files import write_atomic
from remote.errors import ActionError, LocateError
from remote.mcp.aim import aim_target
from remote.mcp.asking import TEACH_CHARS, Asker, TeachNext, bounded
from remote.mcp.session import Session
from remote.mcp.shot import encode_jpeg

MAX_STEPS = 20


@dataclass(frozen=True)
class Lesson:
    key: str
    text: str
    where: str
    jpeg: bytes
    path: Path

    def message(self, number: int | None = None, total: int | None = None) -> str:
        head = f"Step {number}/{total}: " if number and total else ""
        lines = [f"{head}{self.text}"]
        if self.where:
            lines.append(self.where)
        lines.append(f"Annotated screenshot: {self.path}")
        lines.append("Do this on the phone, then accept to go on (decline to stop).")
        return "\n".join(lines)


def lesson_key(text: str, target: str | None) -> str:
    return hashlib.sha256(f"{text}\0{target or ''}".encode()).hexdigest()[:12]


def prepare(session: Session, text: str, target: str | None = None) -> Lesson:
    """Capture the screen, find the target, draw it, and keep the picture where the person can open it."""
    if not text.strip():
        raise ActionError("a teach step needs its instruction text")
    key = lesson_key(text, target)      # of the text as asked, so the answer finds its lesson
    text = bounded(text, TEACH_CHARS)
    target = bounded(target, TEACH_CHARS) if target else target
    image, _secure = session.capture()
    bbox = point = None
    where = ""
    if target:
        try:
            found = aim_target(session, target)
            bbox, point = found.bbox, found.point
            where = f"Where: {found.how}, marked in magenta at device ({point[0]},{point[1]})"
        except LocateError as exc:
            where = f"Where: {target} is not on the screen now ({exc.message})"
    jpeg, _size = encode_jpeg(annotate(image, bbox, point), session.max_side)
    path = session.work_dir() / f"teach-{key}.jpg"
    write_atomic(path, jpeg, private=True)   # a symlink planted at the name is replaced, never followed
    return Lesson(key, text.strip(), where, jpeg, path)


def pending_lesson(session: Session, text: str, target: str | None) -> Lesson:
    """The lesson being asked about: prepared once, kept while the question is open (answers may take rounds)."""
    key = lesson_key(text, target)
    lesson = session.teach_pending.get(key)
    if lesson is None:
        lesson = prepare(session, text, target)
        session.teach_pending[key] = lesson
    return lesson


def teach_batch(session: Session, asker: Asker, steps: list[dict[str, Any]]) -> list[str]:
    """Show each step in turn and wait for "next"; stops when the person stops."""
    if not steps:
        raise ActionError("no steps given")
    if len(steps) > MAX_STEPS:
        raise ActionError(f"{len(steps)} steps; at most {MAX_STEPS} in one batch")
    lines = []
    for i, step in enumerate(steps, 1):
        text, target = str(step.get("text", "")), step.get("target")
        with session.busy():
            lesson = prepare(session, text, target)
        answer = asker.ask(lesson.message(i, len(steps)), TeachNext)
        if answer is None:
            raise ActionError(f"teach_batch needs to ask the person between steps, but {asker.unavailable}",
                              hint="call teach_step once per step instead (it also works on 2026-07-28 "
                                   "connections), or use a client with elicitation")
        if answer is False:
            lines.append(f"{i}. {lesson.text}: the person stopped here")
            break
        lines.append(f"{i}. {lesson.text}: done (annotated: {lesson.path})")
    return lines
