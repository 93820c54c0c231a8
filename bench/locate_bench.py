"""Locator benchmark on real screenshots and their UI dumps (../shared/data/real-dev).

    .venv/bin/python bench/locate_bench.py --data ../shared/data/real-dev [--limit N] [--quick]

For clickable elements of 32-400 px it crops a template and locates it (a) in the
same screenshot, (b) in the screenshot rescaled x0.75, x1.33, x0.5 (template not
rescaled), (c) after JPEG q70 and a 12 % brightness shift, and (d) as a negative in
a screenshot of another app. It also locates visible texts with ``text:`` through
the UI tree and through OCR alone. Per tier and condition it prints hit rate,
wrong-match rate, ambiguous (candidates returned, reliable=False), median and p95
ms, and the same for Airtest's ``Template.match_in`` (run in its own interpreter,
``--airtest-python``, default /work/airtest-venv/bin/python) on the same cases.
Low-information templates (flat patches, thin lines) are counted and left out of
the positives: the locator refuses them by design.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _cases import CONDITIONS, build_cases, condition_screen, load_pairs  # noqa: E402

from remote.core import matching, ocr  # noqa: E402
from remote.core.hybrid_locator import VISUAL, HybridLocator  # noqa: E402
from remote.core.ui_tree import parse_hierarchy  # noqa: E402


def inside(pt, box) -> bool:
    return box[0] <= pt[0] < box[2] and box[1] <= pt[1] < box[3]


def pct(values, q):
    return float(np.percentile(values, q)) if values else float("nan")


class Tally:
    def __init__(self):
        self.rows = defaultdict(lambda: {"n": 0, "hit": 0, "wrong": 0, "amb": 0, "ms": []})

    def add(self, key, *, found, reliable, correct, ms):
        r = self.rows[key]
        r["n"] += 1
        r["ms"].append(ms)
        if found and not reliable:
            r["amb"] += 1
        elif found and correct:
            r["hit"] += 1
        elif found:
            r["wrong"] += 1

    def print(self, title):
        print(f"\n{title}")
        print(f"{'tier':<12}{'condition':<15}{'n':>5}{'hit%':>8}{'wrong%':>8}{'ambig%':>8}{'med ms':>9}{'p95 ms':>9}")
        for (tier, cond), r in sorted(self.rows.items()):
            n = r["n"] or 1
            print(f"{tier:<12}{cond:<15}{r['n']:>5}{100 * r['hit'] / n:>8.1f}{100 * r['wrong'] / n:>8.1f}"
                  f"{100 * r['amb'] / n:>8.1f}{statistics.median(r['ms']):>9.1f}{pct(r['ms'], 95):>9.1f}")


def run_visual(cases, pairs, tiers_to_run):
    tally = Tally()
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    key, screen = None, None
    calib = []
    for c in cases:
        if key != (c.pair, c.condition):
            img = Image.open(pairs[c.pair].image_path).convert("RGB")
            screen = condition_screen(img, c.condition)
            key = (c.pair, c.condition)
        tpl = Image.open(pairs[c.tpl_pair].image_path).convert("RGB").crop(c.tpl_box)
        for name, tiers in tiers_to_run:
            if name == "template" and c.condition.startswith("x"):
                continue
            t = time.perf_counter()
            res = loc.locate_image(tpl, screen, tiers=tiers)
            ms = (time.perf_counter() - t) * 1000
            correct = bool(res.success and c.expected and inside(res.element.center, c.expected))
            tally.add((name, c.condition), found=res.success, reliable=res.reliable, correct=correct, ms=ms)
            if res.success:
                calib.append((res.method_used, res.element.metadata.get("raw_score"), correct))
    return tally, calib


def run_airtest(cases, data, python):
    if not Path(python).is_file():
        print(f"\n[airtest] skipped: no interpreter at {python} (python -m venv /work/airtest-venv && "
              "/work/airtest-venv/bin/pip install airtest)")
        return None
    tmp = Path(tempfile.mkdtemp()) / "cases.json"
    tmp.write_text(json.dumps([{"pair": c.pair, "condition": c.condition, "tpl_box": c.tpl_box,
                                "tpl_pair": c.tpl_pair} for c in cases]))
    proc = subprocess.run([python, str(Path(__file__).with_name("_airtest_worker.py")), str(data), str(tmp)],
                          capture_output=True, text=True, timeout=3600)
    tally = Tally()
    for line in proc.stdout.splitlines():
        r = json.loads(line)
        c = cases[r["i"]]
        pos = r["pos"]
        correct = bool(pos and c.expected and inside(pos, c.expected))
        tally.add(("airtest", c.condition), found=pos is not None, reliable=True, correct=correct, ms=r["ms"])
    if proc.returncode:
        print(f"[airtest] worker failed: {proc.stderr[-400:]}")
    return tally


def run_text(pairs, order, per_screen):
    tally = Tally()
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    for pi in order:
        p = pairs[pi]
        img = Image.open(p.image_path).convert("RGB")
        xml = p.xml_path.read_text(encoding="utf-8", errors="replace")
        tree = parse_hierarchy(xml, img.size)
        nodes = [n for n in tree.visible_nodes() if n.text.strip() and n.width >= 16 and n.height >= 12
                 and n.bounds[3] <= img.height][:per_screen]
        for n in nodes:
            ok_boxes = (n.bounds, tree.clickable_target(n).bounds)
            for tier in ("tree", "ocr"):
                t = time.perf_counter()
                res = loc.locate_with_fallback("text:" + n.text, [tier], img, hierarchy=tree)
                ms = (time.perf_counter() - t) * 1000
                correct = bool(res.success and any(inside(res.element.center, b) for b in ok_boxes))
                tally.add((tier, "text"), found=res.success, reliable=True, correct=correct, ms=ms)
    return tally


def cache_check(cases, pairs, n=30):
    """Locate each reference twice on the same screen: the second is a cache hit."""
    from remote.core.assets import AssetsManager
    tmp = Path(tempfile.mkdtemp())
    ms_hit = []
    stats = {}
    for i, c in enumerate([c for c in cases if c.condition == "same"][:n]):
        img = Image.open(pairs[c.pair].image_path).convert("RGB")
        (tmp / "icons").mkdir(exist_ok=True)
        img.crop(c.tpl_box).save(tmp / "icons" / f"ref{i}.png")
        loc = HybridLocator(assets=AssetsManager(tmp), strategy="opencv_only")
        loc.locate(f"ref{i}", img)
        t = time.perf_counter()
        loc.locate(f"ref{i}", img)
        ms_hit.append((time.perf_counter() - t) * 1000)
        for k, v in loc.cache_stats.items():
            stats[k] = stats.get(k, 0) + v
    stats["hit_rate"] = round(stats.get("hits", 0) / max(1, stats.get("hits", 0) + stats.get("misses", 0)), 3)
    return stats, statistics.median(ms_hit) if ms_hit else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "real-dev"))
    ap.add_argument("--limit", type=int, default=60, help="screenshots used (default 60)")
    ap.add_argument("--per-screen", type=int, default=2, help="templates per screenshot")
    ap.add_argument("--quick", action="store_true", help="12 screenshots, chain only, no Airtest")
    ap.add_argument("--no-airtest", action="store_true")
    ap.add_argument("--airtest-python", default="/work/airtest-venv/bin/python")
    ap.add_argument("--calibration", action="store_true", help="print precision per raw-score bin and tier")
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "MANIFEST.tsv").is_file():
        print(f"error: no MANIFEST.tsv in {data}", file=sys.stderr)
        return 2
    if args.quick:
        args.limit, args.no_airtest = 12, True
    pairs = load_pairs(data)

    def low(crop):
        return bool(matching.information(crop[:, :, ::-1])["low_info"])

    cases, skipped = build_cases(pairs, args.per_screen, limit=args.limit, low_info=low)
    npos = sum(c.condition == "same" for c in cases)
    print(f"{len(pairs)} pairs; {args.limit} screenshots; {npos} templates x {len(CONDITIONS)} conditions = "
          f"{len(cases)} cases; low-information templates left out: {skipped['low_info']}")
    t0 = time.time()
    tiers = [("chain", VISUAL)] if args.quick else [("chain", VISUAL), ("template", ("template",)),
                                                     ("multiscale", ("multiscale",)), ("orb", ("orb",))]
    visual, calib = run_visual(cases, pairs, tiers)
    visual.print("visual tiers (hit: center inside the true box; ambig: candidates returned, reliable=False)")
    order = sorted({c.pair for c in cases})
    text = run_text(pairs, order, 6 if args.quick else 8)
    text.print(f"text: targets (OCR {'available' if ocr.available() else 'UNAVAILABLE'})")
    stats, hit_ms = cache_check(cases, pairs)
    print(f"\ncache: repeated locate on an unchanged screen: {stats}, median {hit_ms:.2f} ms per hit")
    if not args.no_airtest:
        at = run_airtest(cases, data, args.airtest_python)
        if at:
            at.print("Airtest Template.match_in (threshold 0.7, default chain), same cases")
            print("\nratios (ours chain / airtest): hit, wrong, median ms")
            for cond in CONDITIONS:
                a, o = at.rows.get(("airtest", cond)), visual.rows.get(("chain", cond))
                if a and o and a["n"]:
                    def rate(r, k):
                        return r[k] / r["n"]
                    key = "hit" if cond != "negative" else "wrong"
                    ar, orr = rate(a, key), rate(o, key)
                    print(f"  {cond:<15} {key} {100 * orr:.1f}% vs {100 * ar:.1f}%"
                          f"   median ms {statistics.median(o['ms']):.1f} vs {statistics.median(a['ms']):.1f}"
                          f" (x{statistics.median(o['ms']) / max(statistics.median(a['ms']), 1e-6):.2f})")
    if args.calibration:
        print("\ncalibration: precision of found boxes per raw-score bin")
        bins = defaultdict(lambda: [0, 0])
        for tier, raw, ok in calib:
            b = (tier, round(min(raw, 0.999) // 0.05 * 0.05, 2))
            bins[b][0] += ok
            bins[b][1] += 1
        for (tier, b), (ok, n) in sorted(bins.items()):
            print(f"  {tier:<12} raw {b:.2f}-{b + 0.05:.2f}: {ok}/{n} = {ok / n:.2f}")
    print(f"\ntotal {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
