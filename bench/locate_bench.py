"""Locator benchmark on real screenshots, the tuning part beside the checking part, Airtest in the same run.

    .venv/bin/python bench/locate_bench.py                      # both parts, Airtest interleaved
    .venv/bin/python bench/locate_bench.py --no-airtest --part tuning   # while tuning

The development protocol (``_cases.PARTS``): the screenshots of the data folder's real-dev are split
by source; every constant of the locator is fitted on the tuning part, and only the checking part's
figures are results. A gap of more than 2 points between the parts is a finding to fix.

For clickable elements of 32-400 px it crops templates (flat or thin ones included: they are
counted in the ``lowinfo`` column) and locates each (a) on the same screenshot, (b) on it rescaled
x0.75 and x1.33 (``--extra-scales``: also x0.5 and x1.13), (c) after JPEG q70 and a 12 % brightness
gain, (e) ``moved``: on another screenshot of the same app where its element sits elsewhere by the UI
dumps (``_moved``: the one condition whose screen is not the template's own pixels; the checking part
adds the data folder's real-zh, ``--zh``), and as absent templates (d) on a screenshot of another app and
on another screenshot of the same app where it is absent by the UI dump and by pixels. The locator is told the size of the
screen each template was cut from, and Airtest 1.4.3 (its own interpreter, ``--airtest-python``)
gets it as ``resolution=``, as its IDE records it; Airtest's ``Template.match_in`` (default chain)
and its multiscale-pre strategy alone run on the same PNG files, case by case after ours (one
process at a time, so the load is the same for both). Every locate of ours builds its ``Screen``
from the array, as one runner step does. Counting: ``_tally``, one rule for both matchers: a tap on
an identical copy of the target is ``copy`` whoever tapped, beside the tap on the target (``hit``)
and ``remote``'s refusal among copies (``dup``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from itertools import groupby
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _cases import (  # noqa: E402
    CONDITIONS,
    EXTRA,
    PART_NAMES,
    POSITIVE,
    SCALES,
    build_cases,
    condition_screen,
    copy_in,
    load_pairs,
)
from _moved import build_moved  # noqa: E402
from _tally import Refusals, Tally, inside, judge, judge_tap, print_calibration, print_summary  # noqa: E402

from remote.core.locate import matching  # noqa: E402
from remote.core.locate.hybrid_locator import VISUAL, HybridLocator  # noqa: E402
from remote.core.locate.screen import Screen  # noqa: E402
from tests.support.data import data_path  # noqa: E402

DATA = data_path("real-dev")   # REMOTE_DATA_DIR, else shared/data beside the checkout
ZH_DATA = data_path("real-zh")
AIRTEST = "/work/airtest-venv/bin/python"
MOVED_PER_SCREEN = 4   # times --per-screen: few elements of a screen also sit elsewhere on another one


class AirtestWorker:
    """Airtest in its own interpreter (``_airtest_worker.py``), one case at a time over a pipe."""

    def __init__(self, python: str, log: Path) -> None:
        self._log = log.open("w")
        self.proc = subprocess.Popen([python, str(Path(__file__).with_name("_airtest_worker.py"))],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True)

    def run(self, i: int, screen: Path, template: Path, resolution: tuple[int, int]) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"i": i, "screen": str(screen), "template": str(template),
                                          "resolution": list(resolution)}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Airtest worker stopped; see {self._log.name}")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self._log.close()


def run(cases, pairs, tiers_to_run, airtest: AirtestWorker | None, scale_prior: bool = True):
    """Every case through our chain (and per-tier lists), then Airtest; screens grouped so each
    conditioned screen is built once (the locator still builds its ``Screen`` per locate)."""
    tally, refusals, calib = Tally(), Refusals(), []
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    tmp = Path(tempfile.mkdtemp(prefix="locate-bench-"))
    order = sorted(range(len(cases)), key=lambda i: (cases[i].pair, cases[i].condition, i))
    for (pair, cond), group in groupby(order, key=lambda i: (cases[i].pair, cases[i].condition)):
        original = Image.open(pairs[pair].image_path).convert("RGB")
        screen = condition_screen(original, cond)
        orig = np.asarray(original)
        scr_bgr = np.ascontiguousarray(np.asarray(screen)[:, :, ::-1])
        scr_png = tmp / f"screen-{pair}-{cond}.png"
        if airtest:
            screen.save(scr_png)
        for i in group:
            c = cases[i]
            src = Image.open(pairs[c.tpl_pair].image_path).convert("RGB")
            tpl = src.crop(c.tpl_box)
            right = None if c.expected is None else (lambda pt, e=c.expected: inside(pt, e))
            tpl_arr = np.asarray(tpl)

            def same_thing(b, c=c, orig=orig, tpl_arr=tpl_arr):   # one rule for both matchers (_tally)
                return c.expected is not None and copy_in(tpl_arr, orig, b, SCALES[c.condition])
            for name, tiers in tiers_to_run:
                if name == "template" and cond.startswith(("x", "zoom")):
                    continue
                t = time.perf_counter()
                res = loc.locate_image(tpl, Screen(scr_bgr), tiers=tiers, source_size=src.size if scale_prior else None)
                ms = (time.perf_counter() - t) * 1000
                kind = judge(res, right, same_thing)
                tally.add(name, c.part, cond, kind, ms, c.low_info)
                if name == "remote":
                    refusals.add(res, c.part, right is not None, right, kind)
                best = res.element or (res.candidates[0] if res.candidates else None)
                if name != "remote" and best is not None:
                    calib.append((c.part, name, best.metadata.get("raw_score", 0.0), bool(right and right(best.center))))
            if airtest:
                tpl_png = tmp / f"tpl-{c.tpl_pair}-{'-'.join(map(str, c.tpl_box))}.png"
                if not tpl_png.exists():
                    tpl.save(tpl_png)
                r = airtest.run(i, scr_png, tpl_png, src.size)
                tally.add("airtest match_in", c.part, cond, judge_tap(r["match_in"], right, same_thing),
                          r["match_in_ms"], c.low_info)
                tally.add("airtest mstpl", c.part, cond, judge_tap(r["mstpl"], right, same_thing), r["mstpl_ms"],
                          c.low_info)
        if airtest:
            scr_png.unlink(missing_ok=True)
    return tally, refusals, calib


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--zh", default=str(ZH_DATA), help="Chinese development screens, for the moved condition's "
                    "checking part (default: the data folder's real-zh; 'none': real-dev alone)")
    ap.add_argument("--limit", type=int, default=0, help="screenshots per part (default: all)")
    ap.add_argument("--per-screen", type=int, default=4, help="templates per screenshot (default 4)")
    ap.add_argument("--part", choices=PART_NAMES, help="one part only (tuning while fitting constants)")
    ap.add_argument("--extra-scales", action="store_true", help="also x0.5 and x1.13")
    ap.add_argument("--tiers", action="store_true", help="also each visual tier alone")
    ap.add_argument("--quick", action="store_true", help="12 screenshots per part, no Airtest")
    ap.add_argument("--no-airtest", action="store_true")
    ap.add_argument("--airtest-python", default=AIRTEST)
    ap.add_argument("--calibration", action="store_true", help="precision per raw-score bin (tuning part)")
    ap.add_argument("--conditions", help="only these conditions, comma-separated (e.g. x1.33,neg-same-app; "
                    "while tuning: the summary's other columns stay empty)")
    ap.add_argument("--no-scale-prior", action="store_true", help="do not tell the locator the source screen size")
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "MANIFEST.tsv").is_file():
        print(f"skipped: no MANIFEST.tsv in {data} (the development screens: the data folder's real-dev; set REMOTE_DATA_DIR or --data)")
        return 2
    if args.quick:
        args.limit, args.no_airtest = args.limit or 12, True
    pairs = load_pairs(data)
    zh = Path(args.zh)
    zh_pairs = load_pairs(zh) if args.zh != "none" and (zh / "MANIFEST.tsv").is_file() else []
    if args.zh != "none" and not zh_pairs:
        print(f"moved: no MANIFEST.tsv in {zh}: the checking part's moved cases come from real-dev alone")
    pairs += zh_pairs

    def low(crop):
        return bool(matching.information(crop[:, :, ::-1])["low_info"])

    wanted = set(args.conditions.split(",")) if args.conditions else set(CONDITIONS)
    if wanted - set(CONDITIONS):
        ap.error(f"unknown condition(s) {', '.join(sorted(wanted - set(CONDITIONS)))}; known: {', '.join(CONDITIONS)}")
    conds = POSITIVE + (EXTRA if args.extra_scales or (args.conditions and wanted & set(EXTRA)) else ())
    parts = (args.part,) if args.part else PART_NAMES   # each part's cases are drawn alike, alone or together
    cases, counts = build_cases(pairs, args.per_screen, limit=args.limit or None, low_info=low, conditions=conds,
                                parts=parts)
    if "moved" in wanted:
        moved, moved_counts = build_moved(pairs, MOVED_PER_SCREEN * args.per_screen, {p.folder for p in zh_pairs},
                                          limit=args.limit or None, low_info=low, parts=parts)
        cases += moved
        counts.update(moved_counts)
    cases = [c for c in cases if (not args.part or c.part == args.part) and c.condition in wanted]
    for part in PART_NAMES:
        mine = [c for c in cases if c.part == part]
        print(f"{part}: {len({c.pair for c in mine if c.condition == 'same'})} screenshots, "
              f"{sum(c.condition == 'same' for c in mine)} templates "
              f"({sum(c.condition == 'same' and c.low_info for c in mine)} flat or thin), {len(mine)} cases")
    print(f"templates without a same-app negative (present on every other screen): {counts['no_same_app_negative']}")
    for part in PART_NAMES:
        mv = [c for c in cases if c.part == part and c.condition == "moved"]
        print(f"moved, {part}: {len(mv)} templates from {len({c.tpl_pair for c in mv})} screenshots, located on "
              f"{len({c.pair for c in mv})} other screenshots of the same app ("
              + ", ".join(f"{f} {n}" for f, n in sorted(Counter(pairs[c.pair].folder for c in mv).items())) + ")")
    airtest = None
    if not args.no_airtest:
        if Path(args.airtest_python).is_file():
            airtest = AirtestWorker(args.airtest_python, Path(tempfile.mkdtemp()) / "airtest.log")
        else:
            print(f"[airtest] not run: no interpreter at {args.airtest_python} (python3 -m venv /work/airtest-venv "
                  "&& /work/airtest-venv/bin/pip install airtest==1.4.3)")
    tiers = [("remote", VISUAL)] + ([("template", ("template",)), ("multiscale", ("multiscale",)),
                                     ("orb", ("orb",))] if args.tiers or args.calibration else [])
    t0 = time.time()
    try:
        tally, refusals, calib = run(cases, pairs, tiers, airtest, scale_prior=not args.no_scale_prior)
    finally:
        if airtest:
            airtest.close()
    tally.print_sides()
    print_summary(tally)
    refusals.print()
    if args.calibration:
        print_calibration(calib)
    print(f"\ntotal {time.time() - t0:.0f} s (timings from one run on this machine: compare ours with Airtest's"
          " in the same run, not with other runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
