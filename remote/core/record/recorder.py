"""Run records: ``runs/<time>-<slug>/`` with run.json, screenshots, UI dumps and report.html.

Layout of a record::

    runs/20261123-101500-给张三发微信消息说你好/
      run.json              task, module, plan, steps (tier, box, tap point, verdict, timings, model calls),
                            outcome, model usage, device; `device_state` with --device sim
      s01-before.png/.xml   the screen a step decided on (raw, for `remote replay`)
      s01-after.png/.xml    the screen after it acted
      s01-look1.png/.xml    a screen a flow step looked at (its when, a wait, an extract), when not the before
      report.html           self-contained: thumbnails with the box and tap point drawn

run.json exists from the start of the run with ``"status": "running"`` and is
rewritten as each step ends, so a run killed outright (``kill -9``, a power cut)
still leaves a truthful record of the steps it finished; the last write gives the
outcome. Every file is written whole or not at all (``safe_files.write_atomic``):
a full disk leaves the previous run.json intact and the error is raised to the
runner, which reports the outcome anyway.

Secrets never enter a record: configs are stored redacted and free text passes
through ``scrub`` (the runner gives it the key to mask).
"""

from __future__ import annotations

import io
import json
import logging
import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from remote.core.record.report import warm, write_report
from remote.core.record.report_html import shown
from remote.core.records import StepResult, TaskResult, to_jsonable
from remote.core.safe_files import write_atomic

logger = logging.getLogger(__name__)
RECORD_VERSION = 1


def slugify(task: str, limit: int = 40) -> str:
    """A folder-safe slug that keeps Chinese: ``给张三发消息: 你好!`` -> ``给张三发消息-你好``."""
    slug = re.sub(r"[^\w\u4e00-\u9fff]+", "-", task).strip("-")
    return (slug[:limit].rstrip("-") or "task")


class RunRecorder:
    def __init__(self, runs_dir: str | Path, task: str, *, scrub: Callable[[str], str] | None = None,
                 now: float | None = None) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now or time.time()))
        base = Path(runs_dir) / f"{stamp}-{slugify(task)}"
        base.parent.mkdir(parents=True, exist_ok=True)
        path, n = base, 2
        while True:   # mkdir is the atomic claim: two runs in the same second get two folders
            try:
                path.mkdir()
                break
            except FileExistsError:
                path, n = Path(f"{base}-{n}"), n + 1
        self.dir = path
        self.task = task
        self.scrub = scrub or (lambda s: s)
        self.started = time.time()
        self._writer: ThreadPoolExecutor | None = None   # the run's files written beside the run, in order
        self._last: Future[None] | None = None
        self._unwritten: set[str] = set()                # files named in the record that the disk refused
        # The PNGs encoded last, by the screen they show: a step's screen after is often the next one's
        # before (the same Screen), stored twice but encoded once (~75 ms a 1080x2400 frame).
        self._encoded: list[tuple[Any, bytes]] = []

    def save_screen(self, name: str, image: Any, xml: str | None = None) -> dict[str, str]:
        """Store a screen (``image``: a PIL image or a Screen, as a PNG; and the dump if one was taken) on the
        record's writer thread (`flush` waits for it; a Screen's picture is made there too); returns the file
        names at once. A Screen whose frame was never taken (``--frames needed``) is stored as its dump alone."""
        if getattr(image, "frame_taken", True) is False:
            image = None
        self._later(lambda: self._store(name, image, xml))
        return {**({"image": f"{name}.png"} if image is not None else {}), **({"xml": f"{name}.xml"} if xml else {})}

    def _store(self, name: str, screen: Any, xml: str | None) -> None:
        files: dict[str, str] = {}
        try:
            png = self._png(screen)
            if png is not None:
                write_atomic(self.dir / f"{name}.png", png, durable=False)
                files["image"] = f"{name}.png"
                shown(self.dir / f"{name}.png", screen_image(screen))   # its thumbnails need not decode it
            if xml:
                write_atomic(self.dir / f"{name}.xml", xml, durable=False)
                files["xml"] = f"{name}.xml"
        except OSError as exc:  # a full disk must not lose the run's outcome
            logger.warning("could not store screen %s: %s", name, exc)
            self._unwritten.update({f"{name}.png", f"{name}.xml"} - set(files.values()))

    def _png(self, screen: Any) -> bytes | None:
        """The screen's picture as PNG bytes, encoded once for the same screen (on the writer thread)."""
        for earlier, png in self._encoded:
            if earlier is screen:
                return png
        image = screen_image(screen)
        if image is None:
            return None
        png = png_bytes(image)
        self._encoded = [*self._encoded[-3:], (screen, png)]
        return png

    def _later(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the record's writer thread, after every job handed in before it: a step's screens
        are on disk before the run.json that names them."""
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-record")
        self._last = self._writer.submit(job)

    def flush(self) -> None:
        """Wait until everything handed to the writer thread is written (or refused, and said in the log)."""
        if self._last is not None:
            self._last.result()
            self._last = None
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    def record_step(self, sr: StepResult, before: Any = None, after: Any = None) -> None:
        """Store a step's screens; ``before``/``after`` are Screens (image + the tree if one was fetched)."""
        tag = f"s{sr.step.step:02d}" + (f"r{sr.retry_count}" if sr.retry_count else "")
        for phase, screen in (("before", before), ("after", after)):
            if screen is None:
                continue
            files = self.save_screen(f"{tag}-{phase}", screen, screen_xml(screen))
            for kind, fname in files.items():
                sr.artifacts[phase if kind == "image" else f"{phase}_xml"] = fname
        for i, (popup, screen) in enumerate(zip(sr.popups, sr.popup_screens, strict=False), start=1):
            files = self.save_screen(f"{tag}-popup{i}", screen)
            if "image" in files:
                popup["image"] = files["image"]
        self._record_looks(sr, tag, before)

    def _record_looks(self, sr: StepResult, tag: str, before: Any) -> None:
        """The screens a flow step looked at (its when, waits, reads), each stored once, for `remote replay`."""
        saved: dict[int, dict[str, str]] = {}
        if before is not None and "before" in sr.artifacts:
            saved[id(before)] = {"image": sr.artifacts["before"], "xml": sr.artifacts.get("before_xml", "")}
        for i, (look, screen) in enumerate(zip(sr.looks, sr.look_screens, strict=False), start=1):
            if screen is None:
                continue
            if id(screen) not in saved:
                saved[id(screen)] = self.save_screen(f"{tag}-look{i}", screen, screen_xml(screen))
            look.image, look.xml = saved[id(screen)].get("image", ""), saved[id(screen)].get("xml", "")

    def write(self, result: TaskResult, meta: dict[str, Any], *, final: bool = True) -> Path:
        """Write run.json, and with ``final`` report.html; returns the record's folder. OSError when the disk
        refuses (the previous run.json stays whole).

        Without ``final`` (the record as the run goes) the file is written on the writer thread, after the
        screens named in it, and a refusing disk is only logged there; the final write waits for the writer
        first (a run.json never names a screen that is not written yet or was refused)."""
        if final:
            self.flush()
        data = {
            "version": RECORD_VERSION,
            "task": result.task,
            "module": result.module,
            "status": result.status.value,
            "error": self.scrub(result.error_message),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.started)),
            "total_time": round(result.total_time, 3),
            "plan": result.plan.to_dict() if result.plan else None,
            "steps_planned": result.steps_planned,
            "steps": [step_dict(sr) for sr in result.step_results],
            "answer": result.answer,
            "model_usage": to_jsonable(result.model_usage),
            **meta,
        }
        for step in data["steps"]:
            step["artifacts"] = {k: v for k, v in step.get("artifacts", {}).items() if v not in self._unwritten}
        text = self.scrub(json.dumps(data, ensure_ascii=False, indent=2, default=str))
        if not final:
            self._later(lambda: self._progress(text, data))
            return self.dir
        write_atomic(self.dir / "run.json", text)
        write_report(self.dir)
        return self.dir

    def _progress(self, text: str, data: dict[str, Any]) -> None:
        """On the writer thread: run.json as the run stands, then the report's thumbnails of the steps so far."""
        try:
            write_atomic(self.dir / "run.json", text)
            warm(self.dir, data)
        except OSError as exc:
            logger.warning("run record %s not updated: %s", self.dir, exc.strerror or exc)


def step_dict(sr: StepResult) -> dict[str, Any]:
    d = sr.to_dict()
    d["elapsed"] = round(sr.elapsed, 3)
    loc = sr.locate_result
    d["tier"] = loc.method_used if loc else ""
    d["confidence"] = round(loc.element.confidence, 3) if loc and loc.element else None
    d["bbox"] = list(loc.element.bbox) if loc and loc.element else None
    return d


def png_bytes(image: Image.Image) -> bytes:
    """``image`` as a PNG, fast: libpng through OpenCV with the Up filter on every row costs half of Pillow's
    (which tries five filters a row) for the same pixels and 3 % more bytes (16 real screenshots: 0.60 s,
    not 1.10 s, 5.8 MB, not 5.6); Pillow where this OpenCV cannot choose the filter, or for other modes."""
    if image.mode == "RGB" and hasattr(cv2, "IMWRITE_PNG_FILTER"):
        ok, buf = cv2.imencode(".png", cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR),
                               [cv2.IMWRITE_PNG_COMPRESSION, 1, cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_UP])
        if ok:
            return buf.tobytes()
    out = io.BytesIO()
    image.save(out, "PNG", optimize=False, compress_level=1)
    return out.getvalue()


def screen_image(screen: Any) -> Image.Image | None:
    if screen is None:
        return None
    if isinstance(screen, Image.Image):
        return screen
    return getattr(screen, "pil", None)


def screen_xml(screen: Any) -> str | None:
    """The dump behind a Screen, only if it was fetched (recording never costs a dump)."""
    xml = getattr(screen, "xml", None)
    return xml if isinstance(xml, str) else None

