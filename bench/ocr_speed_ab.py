"""OCR reading time, A/B interleaved in one process: the engine as built now beside one that runs as
before issue 37's speed work (every onnxruntime session on one thread, the recognizer's lines one
after another, RapidOCR's own detector preprocessing, the detector given the whole screen: no blank
band cut short), on the same screenshots.

    .venv/bin/python bench/ocr_speed_ab.py                 # 8 tuning screenshots, each read twice per side
    .venv/bin/python bench/ocr_speed_ab.py --limit 12 --busy 1   # beside one busy process of its own

Both sides read every screenshot in turn, the order flipped each time, so load that comes and goes
falls on both; the run says the load average before and after, and checks that both sides read the
same lines, boxes and scores (the changes but one are meant to save work, not to read otherwise; the
cut blank bands change the detector's whole-screen context, so some lines are read a little otherwise). Wall ms
median (detector, recognizer) and the process's CPU ms. ``--busy N`` starts N processes that spin
for the run (ended by their ids at the end): the measurement "beside other work".
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _cases import load_pairs  # noqa: E402
from ocr_bench import DATA, SPLIT  # noqa: E402

from remote.core.locate import ocr, ocr_memo  # noqa: E402

ocr_memo.remember_readings(False)   # every reading timed is a reading made, not one remembered



def before(now: ocr.Engine) -> ocr.Engine:
    """``now`` with one onnxruntime thread per session, lines read one by one, RapidOCR's preprocessing, the
    detector given the whole screen."""
    def one_thread(session: object) -> object:
        arena = session.get_session_options().enable_cpu_mem_arena  # type: ignore[attr-defined]
        return ocr.inference_session(session._model_path, 1, arena=arena)  # type: ignore[attr-defined]

    rapid = copy.copy(now.rapid)
    rapid.text_rec = copy.copy(rapid.text_rec)
    rapid.text_rec.session = copy.copy(rapid.text_rec.session)
    rapid.text_rec.session.session = one_thread(now.rapid.text_rec.session.session)
    det = copy.copy(now.first_det)
    det.__dict__.pop("get_preprocess", None)   # RapidOCR's own (the class's method)
    det.infer = copy.copy(det.infer)
    det.infer.session = one_thread(now.first_det.infer.session)
    return ocr.Engine(rapid, det, now.glyphs, squeeze=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=8, help="screenshots (of the tuning part: 1080x2340 and 1080x2280)")
    ap.add_argument("--part", choices=("tuning", "checking"), default="tuning")
    ap.add_argument("--busy", type=int, default=0, help="busy processes to run beside it")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    now = ocr.get_engine()
    if now is None:
        print(f"error: {ocr.unavailable_reason()}", file=sys.stderr)
        return 2
    pairs = [p for d in DATA if (d / "MANIFEST.tsv").is_file() for p in load_pairs(d) if SPLIT.get(p.folder) == args.part]
    if not pairs:
        print("error: no screenshots (set REMOTE_DATA_DIR to the data folder)", file=sys.stderr)
        return 2
    random.Random(args.seed).shuffle(pairs)
    shots = [np.ascontiguousarray(np.asarray(Image.open(p.image_path).convert("RGB"))[:, :, ::-1])
             for p in pairs[:args.limit]]
    sides = {"before": before(now), "now": now}
    for engine in sides.values():
        ocr.read_text(shots[0], engine=engine)   # warm: the first run of each session allocates
    busy = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(args.busy)]
    load0 = os.getloadavg()[0]
    times: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in sides}
    alike = 0
    try:
        for turn in range(2):
            for i, shot in enumerate(shots):
                read = {}
                for name in (list(sides) if (i + turn) % 2 == 0 else list(sides)[::-1]):
                    t: dict[str, float] = {}
                    w, c = time.perf_counter(), time.process_time()
                    read[name] = ocr.read_text(shot, engine=sides[name], timing=t)
                    times[name].append(((time.perf_counter() - w) * 1000, t["det_ms"], t["rec_ms"],
                                        (time.process_time() - c) * 1000))
                alike += read["before"] == read["now"]
    finally:
        for p in busy:
            p.kill()
            p.wait()
    sizes = sorted({f"{s.shape[1]}x{s.shape[0]}" for s in shots})
    print(f"{len(shots)} {args.part} screenshots {sizes}, each read twice per side; {args.busy} busy process(es) "
          f"beside; load average {load0:.2f} before, {os.getloadavg()[0]:.2f} after")
    for name, rows in times.items():
        wall, det, rec, cpu = (statistics.median(col) for col in zip(*rows, strict=True))
        print(f"  {name:<7} one reading {wall:6.0f} ms median (detector {det:4.0f}, recognizer {rec:4.0f}); CPU {cpu:5.0f} ms")
    ratio = statistics.median(r[0] for r in times["now"]) / statistics.median(r[0] for r in times["before"])
    print(f"  now / before: {ratio:.2f}; the same lines, boxes and scores on {alike} of {2 * len(shots)} readings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
