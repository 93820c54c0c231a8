"""What one model call was sent and what it answered, for the record (run.json, ``remote locate --json``,
``remote plan --agent --json``): the family, the convention its prompt asked for, the frame it saw, the
size the image actually went out at, the raw reply, the numbers read, and how they map to device pixels.

``docs/models.md`` ("Reading a model call's record") explains each field. A call with a corrective re-ask
holds both replies, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from remote.ai.answers import Convention, Scale
from remote.ai.frames import Frame

RAW_CHARS = 2000
T = TypeVar("T")


def mapping(frame: Frame, scale: Scale) -> dict[str, Any]:
    """How a number the model writes becomes a device pixel: ``device = offset + value * per_unit`` (each
    axis on its own; x first).

    >>> mapping(Frame((1080, 2400), (540, 1200)), Scale.PIXEL)
    {'offset': [0, 0], 'per_unit': [2.0, 2.0], 'units': 'pixels of the 540x1200 frame'}
    """
    if scale is Scale.PIXEL:
        per = [frame.source[0] / frame.seen[0], frame.source[1] / frame.seen[1]]
        units = f"pixels of the {frame.seen[0]}x{frame.seen[1]} frame"
    else:
        full = scale.full or 1.0
        per = [frame.source[0] / full, frame.source[1] / full]
        units = f"0-{full:g} of the frame"
    return {"offset": list(frame.offset), "per_unit": [round(p, 6) for p in per], "units": units}


def sent_sizes(client: Any) -> list[list[int]]:
    """The sizes the client encoded the last call's images at (``LLMClient.last_images``; through a budget
    wrapper too); empty for a client that does not say."""
    images = getattr(client, "last_images", None) or []
    return [list(getattr(e, "sent_size", ())) for e in images]


class CallLog:
    """The calls of one locate or agent turn. ``reader(...)`` wraps a ``read`` function of
    :func:`remote.ai.llm.ask_read` so every reply it is given is noted with what was sent."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.calls: list[dict[str, Any]] = []

    def clear(self) -> None:
        self.calls = []

    def reader(self, client: Any, kind: str, frame: Frame, convention: Convention,
               read: Callable[[str], T], values: Callable[[T], Any] | None = None) -> Callable[[str], T]:
        def noted(raw: str) -> T:
            note = self._note(client, kind, frame, convention)
            note["raw"].append(raw[:RAW_CHARS])
            try:
                out = read(raw)
            except ValueError as exc:
                note["problems"].append(str(exc)[:300])
                raise
            if values is not None:
                note["read"] = values(out)
            return out
        return noted

    def _note(self, client: Any, kind: str, frame: Frame, convention: Convention) -> dict[str, Any]:
        """The open note for this call (a re-ask adds to the note of its first reply)."""
        last = self.calls[-1] if self.calls else None
        if last is not None and last["kind"] == kind and len(last["raw"]) == 1 and last["problems"]:
            return last
        sent = sent_sizes(client)
        note: dict[str, Any] = {
            "kind": kind, "family": self.family, "convention": convention.words(frame.seen),
            "scale": convention.scale.value, "order": convention.order,
            "frame": {"source": list(frame.source), "seen": list(frame.seen), "offset": list(frame.offset)},
            "sent": sent[-1] if sent else list(frame.seen), "to_device": mapping(frame, convention.scale),
            "raw": [], "problems": [], "read": None}
        self.calls.append(note)
        return note


def summary(call: dict[str, Any]) -> str:
    """One line a person reads: what was sent, in which convention, what came back."""
    frame = call["frame"]
    to = call["to_device"]
    raw = (call["raw"][-1] if call["raw"] else "").replace("\n", " ")
    return (f"{call['kind']}: {call['family']} sent {call['sent'][0]}x{call['sent'][1]} of "
            f"{frame['source'][0]}x{frame['source'][1]}, answers in {call['scale']} ({call['order']}); "
            f"device = {to['offset']} + value x {to['per_unit']}; reply {raw[:160]!r}"
            + (f"; re-asked: {call['problems'][0]}" if call["problems"] else ""))
