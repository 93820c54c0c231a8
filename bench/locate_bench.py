"""Locator benchmark on real screenshots and their UI dumps (../shared/data/real-dev).

    .venv/bin/python bench/locate_bench.py --data ../shared/data/real-dev [--limit N] [--quick]

For clickable elements of 32-400 px it crops a template and locates it (a) in the
same screenshot, (b) in the screenshot rescaled x0.75, x1.33, x0.5 (template not
rescaled), (c) after JPEG q70 and a 12 % brightness shift, and (d) as negatives: in a
screenshot of another app (``negative``) and in another screenshot of the same app
where it is absent by the UI dump and by pixels (``neg-same-app``, the hard set).
It also locates visible texts with ``text:`` through the UI tree and through OCR
alone. Per tier and condition it prints the rates below, median and p95 ms, and the
same for Airtest's ``Template.match_in`` (run in its own interpreter,
``--airtest-python``, default /work/airtest-venv/bin/python) on the same cases.

How a result is counted (positives):
  hit    found, reliable, tap point inside the true box
  dup    found with reliable=False, the true box among the candidates and every
         candidate a copy of the true element (identical pixels: verify score >= 0.9
         against the true window; for text: the same label) -- a correct answer
  amb    found with reliable=False otherwise (not tapped blindly; counted as a miss)
  wrong  found, reliable, somewhere else (the failure that matters)
"found" = hit + dup is what the targets refer to. On negatives "found" = wrong (reliable)
+ amb (unreliable, would be confirmed by a person or the model before a tap). Low-information templates (flat patches, thin lines) are counted and left
out of the positives: the locator refuses them by design. ``--calibration`` fits
the per-tier confidence tables (``remote/core/locate/confidence.py``) from the raw scores.
"""

from __future__ import annotations

import argparse
import json
import random
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
from _cases import CONDITIONS, NEGATIVE, build_cases, condition_screen, load_pairs  # noqa: E402
from _text_nodes import REASONS, drawn_text, drawn_text_nodes  # noqa: E402

from remote.core.locate import (
    matching,
    ocr,  # noqa: E402
)
from remote.core.locate.hybrid_locator import VISUAL, HybridLocator  # noqa: E402
from remote.core.locate.screen import Screen  # noqa: E402
from remote.core.locate.ui_tree import normalize_text, parse_hierarchy  # noqa: E402


def inside(pt, box) -> bool:
    return box[0] <= pt[0] < box[2] and box[1] <= pt[1] < box[3]


def pct(values, q):
    return float(np.percentile(values, q)) if values else float("nan")


class Tally:
    KINDS = ("hit", "dup", "amb", "wrong")

    def __init__(self):
        self.rows = defaultdict(lambda: {"n": 0, "hit": 0, "dup": 0, "amb": 0, "wrong": 0, "ms": []})

    def add(self, key, kind, ms):
        """``kind``: hit | dup | amb | wrong | miss (see the module docstring)."""
        r = self.rows[key]
        r["n"] += 1
        r["ms"].append(ms)
        if kind in self.KINDS:
            r[kind] += 1

    def print(self, title):
        print(f"\n{title}")
        print(f"{'tier':<12}{'condition':<15}{'n':>5}{'found%':>8}{'hit%':>7}{'dup%':>6}{'amb%':>6}{'wrong%':>8}"
              f"{'med ms':>9}{'p95 ms':>9}")
        for (tier, cond), r in sorted(self.rows.items()):
            n = r["n"] or 1
            found = r["wrong"] + r["amb"] if cond in NEGATIVE else r["hit"] + r["dup"]
            print(f"{tier:<12}{cond:<15}{r['n']:>5}{100 * found / n:>8.1f}{100 * r['hit'] / n:>7.1f}"
                  f"{100 * r['dup'] / n:>6.1f}{100 * r['amb'] / n:>6.1f}{100 * r['wrong'] / n:>8.1f}"
                  f"{statistics.median(r['ms']):>9.1f}{pct(r['ms'], 95):>9.1f}")


def judge(res, right, same_thing) -> str:
    """hit | dup | amb | wrong | miss for one result. ``right(point)``: the point is on the target
    (None: a negative); ``same_thing(bbox)``: that box holds a copy of the target."""
    if not res.success:
        return "miss"
    if right is None:   # a negative: reliable -> a wrong tap; unreliable -> still claimed ("amb")
        return "wrong" if res.reliable else "amb"
    if res.reliable:
        return "hit" if right(res.element.center) else "wrong"
    boxes = [e.bbox for e in res.candidates] or [res.element.bbox]
    if any(right(((b[0] + b[2]) // 2, (b[1] + b[3]) // 2)) for b in boxes) and all(same_thing(b) for b in boxes):
        return "dup"
    return "amb"


def run_visual(cases, pairs, tiers_to_run, scale_prior=True):
    """Each case through each tier list. ``scale_prior``: tell the locator the screen size the template
    was cut from (the runner knows it for learned references; ``visual_policy``)."""
    tally = Tally()
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    key, screen = None, None
    calib = []
    for c in cases:
        if key != (c.pair, c.condition):
            img = Image.open(pairs[c.pair].image_path).convert("RGB")
            screen = condition_screen(img, c.condition)
            scr_bgr = np.ascontiguousarray(np.asarray(screen)[:, :, ::-1])
            key = (c.pair, c.condition)
        src = Image.open(pairs[c.tpl_pair].image_path).convert("RGB")
        tpl, src_size = src.crop(c.tpl_box), (src.size if scale_prior else None)
        true_win = None if c.expected is None else scr_bgr[c.expected[1]:c.expected[3], c.expected[0]:c.expected[2]]

        def same_thing(b, win=true_win, scr=scr_bgr):
            return win is not None and win.size > 0 and matching.verify(scr, win, b)["score"] >= 0.9
        for name, tiers in tiers_to_run:
            if name == "template" and c.condition.startswith("x"):
                continue
            t = time.perf_counter()
            # The screen as a BGR array, as Airtest's worker gets it (a PIL screen costs ~2 ms more to convert).
            res = loc.locate_image(tpl, scr_bgr, tiers=tiers, source_size=src_size)
            ms = (time.perf_counter() - t) * 1000
            right = None if c.expected is None else (lambda pt, e=c.expected: inside(pt, e))
            tally.add((name, c.condition), judge(res, right, same_thing), ms)
            best = res.element or (res.candidates[0] if res.candidates else None)
            if name != "chain" and best is not None:
                ok = bool(c.expected and inside(best.center, c.expected))
                calib.append((name, best.metadata.get("raw_score", 0.0), ok))
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
        kind = "miss" if pos is None else ("hit" if c.expected and inside(pos, c.expected) else "wrong")
        tally.add(("airtest", c.condition), kind, r["ms"])
    if proc.returncode:
        print(f"[airtest] worker failed: {proc.stderr[-400:]}")
    return tally


def run_text(pairs, order, per_screen):
    """``text:`` through the tree and through OCR alone, on the text nodes the screen draws as text
    (``_text_nodes.drawn_text_nodes``; ``per_screen`` 0 = all of them). OCR reads a screenshot once
    (``ocr-read``: per screenshot) and then each lookup matches against those lines (``ocr``: per lookup)."""
    tally = Tally()
    calib = []
    left_out = dict.fromkeys(REASONS, 0)
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    for pi in order:
        p = pairs[pi]
        img = Image.open(p.image_path).convert("RGB")
        xml = p.xml_path.read_text(encoding="utf-8", errors="replace")
        tree = parse_hierarchy(xml, img.size)
        screen = Screen(img, tree)
        if ocr.available():
            t = time.perf_counter()
            screen.text_boxes()
            tally.add(("ocr-read", "per-screenshot"), "hit", (time.perf_counter() - t) * 1000)
        nodes, out = drawn_text_nodes(tree, img.size)
        nodes = nodes[:per_screen] if per_screen else nodes
        for k, v in out.items():
            left_out[k] += v
        for n in nodes:
            # Nodes with the same label are the same thing to a reader: either is a right answer.
            label = drawn_text(n)
            same = [m for m in tree.visible_nodes() if normalize_text(drawn_text(m)) == normalize_text(label)]
            ok_boxes = [b for m in same for b in (m.bounds, tree.clickable_target(m).bounds)]

            def right(pt, ok_boxes=ok_boxes):
                return any(inside(pt, o) for o in ok_boxes)

            def same_thing(b, right=right):
                return right(((b[0] + b[2]) // 2, (b[1] + b[3]) // 2))
            for tier in ("tree", "ocr"):
                t = time.perf_counter()
                res = loc.locate_with_fallback("text:" + label, [tier], screen)
                ms = (time.perf_counter() - t) * 1000
                tally.add((tier, "text"), judge(res, right, same_thing), ms)
                best = res.element or (res.candidates[0] if res.candidates else None)
                if best is not None:
                    calib.append((tier, best.metadata.get("raw_score", 0.0), same_thing(best.bbox)))
    return tally, calib, left_out
def cache_check(cases, pairs, n=30):
    """Locate each reference twice on the same screen: the second is a cache hit."""
    from remote.core.locate.assets import AssetsManager
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


def print_ratios(ours: Tally, airtest: Tally) -> None:
    print("\nratios (ours chain / airtest): found (positives) or wrong (negatives), median ms")
    for cond in CONDITIONS:
        a, o = airtest.rows.get(("airtest", cond)), ours.rows.get(("chain", cond))
        if not (a and o and a["n"] and o["n"]):
            continue
        if cond in NEGATIVE:
            key, ar, orr = "found", a["wrong"] / a["n"], (o["wrong"] + o["amb"]) / o["n"]
        else:
            key, ar, orr = "found", (a["hit"] + a["dup"]) / a["n"], (o["hit"] + o["dup"]) / o["n"]
        om, am = statistics.median(o["ms"]), statistics.median(a["ms"])
        print(f"  {cond:<15} {key} {100 * orr:.1f}% vs {100 * ar:.1f}%   median ms {om:.1f} vs {am:.1f}"
              f" (x{om / max(am, 1e-6):.2f})   p95 ms {pct(o['ms'], 95):.1f} vs {pct(a['ms'], 95):.1f}")


def _pav(blocks: list[list]) -> list[list]:
    """Pool adjacent violators over [start, ok, n] blocks (precision ok/n made non-decreasing;
    equal neighbours pooled too, so a run of small perfect bins counts as one larger sample)."""
    merged: list[list] = []
    for blk in blocks:
        merged.append(list(blk))
        while len(merged) > 1 and merged[-2][1] / merged[-2][2] >= merged[-1][1] / merged[-1][2]:
            _, ok, n = merged.pop()
            merged[-1][1] += ok
            merged[-1][2] += n
    return merged


def wilson_low(ok: int, n: int, z: float = 1.645) -> float:
    """One-sided 95 % lower bound of a precision ok/n: a bin of 3 right boxes does not claim 1.0."""
    if n == 0:
        return 0.0
    p = ok / n
    den = 1 + z * z / n
    return max(0.0, (p + z * z / (2 * n) - z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5) / den)


def fit_table(points: list[tuple[float, bool]], width: float = 0.05) -> list[tuple[float, float]]:
    """Calibration knots (raw-score bin start, confidence) for one tier: precision per bin of
    ``width``, pooled to be monotone (:func:`_pav`), each pooled block's Wilson lower bound, and
    that made monotone again (a block's bound never exceeds a higher-scoring block's)."""
    bins = defaultdict(lambda: [0, 0])
    for raw, ok in points:
        b = round(min(max(raw, 0.0), 0.999) // width * width, 2)
        bins[b][0] += ok
        bins[b][1] += 1
    blocks = _pav([[b, ok, n] for b, (ok, n) in sorted(bins.items())])
    lows = [wilson_low(ok, n) for _, ok, n in blocks]
    for k in range(len(lows) - 2, -1, -1):
        lows[k] = min(lows[k], lows[k + 1])
    return [(b, round(lo, 3)) for (b, _, _), lo in zip(blocks, lows, strict=True)]


def print_calibration(calib) -> None:
    print("\ncalibration: precision of each tier's best box per raw-score bin (all conditions, negatives incl.)")
    by_tier = defaultdict(list)
    for tier, raw, ok in calib:
        by_tier[tier].append((float(raw), bool(ok)))
    for tier, pts in sorted(by_tier.items()):
        bins = defaultdict(lambda: [0, 0])
        for raw, ok in pts:
            b = round(min(raw, 0.999) // 0.05 * 0.05, 2)
            bins[b][0] += ok
            bins[b][1] += 1
        print(f"  {tier}: " + "  ".join(f"{b:.2f}:{ok}/{n}" for b, (ok, n) in sorted(bins.items())))
        print(f"    fitted knots (bin start, confidence): {fit_table(pts)}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "real-dev"))
    ap.add_argument("--limit", type=int, default=60, help="screenshots used (default 60)")
    ap.add_argument("--per-screen", type=int, default=2, help="templates per screenshot")
    ap.add_argument("--quick", action="store_true", help="12 screenshots, chain only, no Airtest")
    ap.add_argument("--no-airtest", action="store_true")
    ap.add_argument("--airtest-python", default="/work/airtest-venv/bin/python")
    ap.add_argument("--calibration", action="store_true", help="print precision per raw-score bin and tier")
    ap.add_argument("--no-scale-prior", action="store_true", help="do not pass the template's source screen size")
    ap.add_argument("--text-only", action="store_true", help="only the text: targets (tree and OCR)")
    ap.add_argument("--text-per-screen", type=int, default=8, help="text nodes per screenshot (0 = all drawn)")
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

    if args.text_only:   # the screenshots in build_cases' order, without building the visual cases
        t0 = time.time()
        order = list(range(len(pairs)))
        random.Random(7).shuffle(order)
        order = sorted(order[:args.limit])
        text, _, left_out = run_text(pairs, order, args.text_per_screen)
        text.print(f"text: targets on {len(order)} screenshots; text nodes left out (not drawn as text): {left_out}")
        print(f"\ntotal {time.time() - t0:.0f} s")
        return 0
    cases, skipped = build_cases(pairs, args.per_screen, limit=args.limit, low_info=low)
    npos = sum(c.condition == "same" for c in cases)
    print(f"{len(pairs)} pairs; {args.limit} screenshots; {npos} templates x {len(CONDITIONS)} conditions = "
          f"{len(cases)} cases; low-information templates left out: {skipped['low_info']}; templates without "
          f"a same-app negative (present on every other screen): {skipped.get('no_same_app_negative', 0)}")
    t0 = time.time()
    tiers = [("chain", VISUAL)] if args.quick else [("chain", VISUAL), ("template", ("template",)),
                                                     ("multiscale", ("multiscale",)), ("orb", ("orb",))]
    visual, calib = run_visual(cases, pairs, tiers, scale_prior=not args.no_scale_prior)
    visual.print("visual tiers (found = hit + dup; see the module docstring)")
    order = sorted({c.pair for c in cases})
    text, text_calib, left_out = run_text(pairs, order, 6 if args.quick else args.text_per_screen)
    text.print(f"text: targets (OCR {'available' if ocr.available() else 'UNAVAILABLE'}; "
               "ocr-read = one OCR pass per screenshot, ocr = per lookup after it); "
               f"text nodes left out (not drawn as text): {left_out}")
    stats, hit_ms = cache_check(cases, pairs)
    print(f"\ncache: repeated locate on an unchanged screen: {stats}, median {hit_ms:.2f} ms per hit")
    if not args.no_airtest:
        at = run_airtest(cases, data, args.airtest_python)
        if at:
            at.print("Airtest Template.match_in (threshold 0.7, default chain), same cases")
            print_ratios(visual, at)
    if args.calibration:
        print_calibration(calib + text_calib)
    print(f"\ntotal {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
