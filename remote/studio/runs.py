"""A run record on the page (``--run RUN_DIR``): its steps, their screens, and each step decided again offline.

The record is read as ``remote report`` and ``remote replay`` read it
(``load_record``; files are opened only inside the record's folder, ``inside``),
and a step is re-decided by ``replay_run`` itself, so the studio says what
``remote replay`` says. Nothing of run.json is trusted: each field shown is
checked for its type, and a wrong one is shown as missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image

from remote.apps import ModuleRegistry
from remote.core.imagefile import open_image
from remote.core.locate.screen import Screen
from remote.core.record.report import MAX_DUMP_BYTES, inside, load_record
from remote.errors import BadInput
from remote.runner.replay import replay_run

PHASES = ("before", "after")


class RunView:
    def __init__(self, run_dir: Path, registry: ModuleRegistry) -> None:
        self.dir = Path(run_dir)
        self.registry = registry
        self.data = load_record(self.dir)
        steps = self.data.get("steps")
        self.steps: list[dict[str, Any]] = [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []

    def summary(self) -> dict[str, Any]:
        return {"dir": str(self.dir), "task": _str(self.data.get("task")), "status": _str(self.data.get("status")),
                "module": _str(self.data.get("module")), "error": _str(self.data.get("error")),
                "steps": [self._step(i, sr) for i, sr in enumerate(self.steps, start=1)]}

    def _step(self, n: int, sr: dict[str, Any]) -> dict[str, Any]:
        step, loc, verdict = _obj(sr.get("step")), _obj(sr.get("locate_result")), _obj(sr.get("verify_result"))
        arts = _obj(sr.get("artifacts"))
        box = _obj(loc.get("element")).get("bbox")
        return {"n": n, "step": step.get("step") if isinstance(step.get("step"), int) else n,
                "action": _str(step.get("action")), "target_ref": _str(step.get("target_ref")),
                "status": _str(sr.get("status")), "tier": _str(sr.get("tier")) or _str(loc.get("method_used")),
                "box": box if isinstance(box, list) and len(box) == 4 else None,
                "verdict": _str(verdict.get("outcome")), "error": _str(sr.get("error_message")),
                "screens": [p for p in PHASES if isinstance(arts.get(p), str)]}

    def _artifact(self, n: int, key: str) -> Path | None:
        if not 1 <= n <= len(self.steps):
            raise BadInput(f"no step {n} in {self.dir} ({len(self.steps)} steps)")
        return inside(self.dir, _obj(self.steps[n - 1].get("artifacts")).get(key))

    def image(self, n: int, phase: str) -> Image.Image:
        if phase not in PHASES:
            raise BadInput(f"a step's screens are {' and '.join(PHASES)}, not {phase[:20]!r}")
        path = self._artifact(n, phase)
        if path is None:
            raise BadInput(f"step {n} of {self.dir} has no {phase} screen in its record")
        return open_image(path, f"step {n}'s {phase} screen")

    def screen(self, n: int) -> Screen:
        """Step ``n``'s screen before it acted, with its dump when the record kept one (for inspecting)."""
        return Screen(self.image(n, "before"), self._xml(n, "before_xml"))

    def first_screen(self) -> Screen | None:
        """The first screen the record kept (a step's before, else its after), with its dump when kept."""
        for n, sr in enumerate(self.steps, start=1):
            arts = _obj(sr.get("artifacts"))
            for phase in PHASES:
                if isinstance(arts.get(phase), str) and inside(self.dir, arts[phase]) is not None:
                    xml = self._xml(n, f"{phase}_xml")
                    return Screen(self.image(n, phase), xml)
        return None

    def _xml(self, n: int, key: str) -> str | None:
        path = self._artifact(n, key)
        if path is None or path.stat().st_size > MAX_DUMP_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")

    def redecide(self, n: int) -> list[dict[str, Any]]:
        """Step ``n`` decided again from its stored screens, as ``remote replay`` decides it."""
        number = self._step(n, self.steps[n - 1])["step"] if 1 <= n <= len(self.steps) else None
        if number is None:
            raise BadInput(f"no step {n} in {self.dir} ({len(self.steps)} steps)")
        decisions = replay_run(self.dir, registry=self.registry)
        return [{"kind": d.kind, "recorded": d.recorded, "replayed": d.replayed, "changed": d.changed, "note": d.note}
                for d in decisions if d.step == number]


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
