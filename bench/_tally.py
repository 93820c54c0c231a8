"""Counting and printing for the locator bench: results per method, part and condition, the two
parts side by side, the product owner's summary table with its targets, and the refusal rules' record.

One rule for every matcher (``remote``'s locator and Airtest alike), on positives:
  hit    a tap inside the true box (the tap on the target)
  copy   a tap on an identical copy of the target elsewhere (a pixel copy in the screenshot before it
         was rescaled or recompressed, ``_cases.copy_in``): the same pixels, another place
  dup    no tap, a refusal (reliable=False) with every candidate a copy of the target (the true box
         itself need not be listed when there are more copies than candidates); only ``remote``
         refuses, Airtest always answers one point
  amb    any other refusal (not tapped blindly; a miss)
  wrong  a tap somewhere else, not on a copy (the failure that matters)
"found" = hit + copy + dup; "among copies" = copy + dup, the share of answers that landed on, or
refused between, identical elements: a tap on any copy is the same outcome for both matchers.
On absent templates "found" = wrong + amb (anything claimed).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

import numpy as np
from _cases import EXTRA, MOVED, NEGATIVE, PART_NAMES, POSITIVE

KINDS = ("hit", "copy", "dup", "amb", "wrong")
FOUND = ("hit", "copy", "dup")
SHOWN = POSITIVE + MOVED   # the positive conditions of the summary
GAP_POINTS = 2.0   # a tuning/checking difference larger than this is a finding, not noise to tune away


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def inside(pt, box) -> bool:
    return box[0] <= pt[0] < box[2] and box[1] <= pt[1] < box[3]


def judge_tap(point, right, same_thing) -> str:
    """hit | copy | wrong | miss for one tap point (None: no answer), whoever chose it. ``right(point)``:
    the point is on the target (None: an absent template, any tap is wrong); ``same_thing(box)``: that
    box (a point is a box of no size) holds a copy of the target."""
    if point is None:
        return "miss"
    if right is None:
        return "wrong"
    if right(point):
        return "hit"
    return "copy" if same_thing((point[0], point[1], point[0], point[1])) else "wrong"


def judge(res, right, same_thing) -> str:
    """The kind of one ``remote`` locator result: a trusted answer is a tap (:func:`judge_tap`, as
    Airtest's point is); a refused one is ``dup`` when every candidate is a copy of the target, else
    ``amb`` (on an absent template: claimed)."""
    if not res.success:
        return "miss"
    if res.reliable:
        return judge_tap(res.element.center, right, same_thing)
    if right is None:
        return "amb"
    boxes = [e.bbox for e in res.candidates] or [res.element.bbox]
    return "dup" if all(same_thing(b) for b in boxes) else "amb"


class Tally:
    """Results per (method, part, condition): counts of each kind and the milliseconds."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], dict] = defaultdict(
            lambda: {"n": 0, **dict.fromkeys(KINDS, 0), "ms": [], "low_n": 0, "low_found": 0})

    def add(self, method: str, part: str, cond: str, kind: str, ms: float, low_info: bool = False) -> None:
        r = self.rows[(method, part, cond)]
        r["n"] += 1
        r["ms"].append(ms)
        if kind in KINDS:
            r[kind] += 1
        if low_info:
            r["low_n"] += 1
            r["low_found"] += kind in (("wrong", "amb") if cond in NEGATIVE else FOUND)

    def methods(self) -> list[str]:
        return sorted({k[0] for k in self.rows}, key=lambda m: (m != "remote", m))

    def found(self, method: str, part: str, conds: tuple[str, ...]) -> tuple[int, int]:
        """(claimed, n) over ``conds``: hit + copy + dup on positives, wrong + amb on absent templates."""
        got = n = 0
        for c in conds:
            r = self.rows.get((method, part, c))
            if r:
                n += r["n"]
                got += sum(r[k] for k in (("wrong", "amb") if c in NEGATIVE else FOUND))
        return got, n

    def count(self, method: str, part: str, conds: tuple[str, ...], *kinds: str) -> tuple[int, int]:
        rows = [self.rows.get((method, part, c)) for c in conds]
        return sum(r[k] for r in rows if r for k in kinds), sum(r["n"] for r in rows if r)

    def ms(self, method: str, part: str, conds: tuple[str, ...]) -> list[float]:
        return [v for c in conds for v in self.rows.get((method, part, c), {"ms": []})["ms"]]

    def print_sides(self) -> None:
        """Every method and condition, the tuning part beside the checking part."""
        print("\nper condition: tuning part | checking part   (found = hit + copy + dup on positives, claimed on"
              " absent; hit = a tap on the target, copy = a tap on an identical copy, dup = refused among copies;"
              " lowinfo = found among flat/thin templates)")
        head = (f"{'n':>5}{'found%':>8}{'hit%':>7}{'copy%':>6}{'dup%':>6}{'amb%':>6}{'wrong%':>7}{'lowinfo':>9}"
                f"{'med':>7}{'p95':>7}")
        print(f"{'method':<18}{'condition':<15}{head} |{head}{'gap':>7}")
        for m in self.methods():
            for c in POSITIVE + EXTRA + MOVED + NEGATIVE:
                cells, rates = [], []
                for part in PART_NAMES:
                    r = self.rows.get((m, part, c))
                    if not r or not r["n"]:
                        cells.append(" " * len(head))
                        rates.append(None)
                        continue
                    n = r["n"]
                    got = sum(r[k] for k in (("wrong", "amb") if c in NEGATIVE else FOUND))
                    rates.append(100 * got / n)
                    low = f"{r['low_found']}/{r['low_n']}"
                    cells.append(f"{n:>5}{100 * got / n:>8.1f}{100 * r['hit'] / n:>7.1f}{100 * r['copy'] / n:>6.1f}"
                                 f"{100 * r['dup'] / n:>6.1f}{100 * r['amb'] / n:>6.1f}{100 * r['wrong'] / n:>7.1f}{low:>9}"
                                 f"{statistics.median(r['ms']):>7.1f}{pct(r['ms'], 95):>7.1f}")
                if all(v is None for v in rates):
                    continue
                gap = f"{rates[1] - rates[0]:>+7.1f}" if None not in rates else ""
                print(f"{m:<18}{c:<15}{cells[0]} |{cells[1]}{gap}")


def _rate(got_n: tuple[int, int]) -> float:
    got, n = got_n
    return 100 * got / n if n else float("nan")


def summary(t: Tally, method: str, part: str) -> dict[str, float]:
    """The product owner's columns for one method on one part: found per condition; over the four
    positive conditions the tap on the target, the answers among copies and the wrong taps; the same
    three on ``moved`` alone; absent templates claimed; times."""
    out = {c: _rate(t.found(method, part, (c,))) for c in SHOWN}
    for key, conds in (("", POSITIVE), ("moved ", MOVED)):
        out[f"{key}target"] = _rate(t.count(method, part, conds, "hit"))
        out[f"{key}copies"] = _rate(t.count(method, part, conds, "copy", "dup"))
        out[f"{key}wrong"] = _rate(t.count(method, part, conds, "wrong"))
    out["absent"] = _rate(t.found(method, part, NEGATIVE))
    ms = t.ms(method, part, POSITIVE + NEGATIVE)
    out["median"], out["p95"] = (statistics.median(ms) if ms else float("nan")), pct(ms, 95)
    for c in SHOWN + NEGATIVE:
        cm = t.ms(method, part, (c,))
        out[f"median {c}"] = statistics.median(cm) if cm else float("nan")
        out[f"p95 {c}"] = pct(cm, 95)
    return out


SUMMARY_COLS = (("same", "same"), ("x0.75", "x0.75"), ("x1.33", "x1.33"), ("jpeg70+bright", "jpeg+br"),
                ("target", "target"), ("copies", "copies"), ("wrong", "wrong"), ("moved", "moved"),
                ("moved target", "mv tgt"), ("moved copies", "mv cop"), ("moved wrong", "mv wr"),
                ("absent", "absent"), ("median", "med ms"), ("p95", "p95 ms"))


def print_summary(t: Tally) -> dict[str, dict[str, dict[str, float]]]:
    """The owner's table per part, the targets on the checking part, and the tuning/checking gaps."""
    table = {part: {m: summary(t, m, part) for m in t.methods()} for part in PART_NAMES}
    for part in PART_NAMES:
        print(f"\nsummary, {part} part (found % per condition; target = a tap on the target, copies = a tap on"
              " or a refusal among identical copies, wrong = a tap elsewhere, over the four positive conditions,"
              " then on moved; absent = claimed)")
        print(f"{'method':<18}" + "".join(f"{head:>8}" for _, head in SUMMARY_COLS))
        for m, s in table[part].items():
            print(f"{m:<18}" + "".join(f"{s[c]:>8.1f}" for c, _ in SUMMARY_COLS))
    if all("remote" in table[part] and table[part]["remote"]["same"] == table[part]["remote"]["same"]
           for part in PART_NAMES):   # both parts measured (an empty part's figures are NaN)
        _print_targets(table)
    else:
        print("\ntargets: not judged (they need both parts in one run)")
    return table


def _print_targets(table: dict[str, dict[str, dict[str, float]]]) -> None:
    ours, tune = table["checking"]["remote"], table["tuning"]["remote"]
    airtest = [s for m, s in table["checking"].items() if m.startswith("airtest")]
    checks: list[tuple[str, bool | None]] = []
    for c in POSITIVE:
        best = max((s[c] for s in airtest), default=float("nan"))
        checks.append((f"{c} hit >= Airtest's best ({best:.1f})", ours[c] >= best if airtest else None))
    checks.append((f"wrong place <= 0.5 % ({ours['wrong']:.1f})", ours["wrong"] <= 0.5))
    checks.append((f"absent found <= 1 % ({ours['absent']:.1f})", ours["absent"] <= 1.0))
    for c in POSITIVE + NEGATIVE:
        fastest = min((s[f"median {c}"] for s in airtest), default=float("nan"))
        checks.append((f"median {c} {ours[f'median {c}']:.1f} ms <= Airtest's lower median ({fastest:.1f})",
                       ours[f"median {c}"] <= fastest if airtest else None))
        checks.append((f"p95 {c} {ours[f'p95 {c}']:.1f} ms <= 100", ours[f"p95 {c}"] <= 100))
    for k in POSITIVE + ("wrong", "absent"):
        checks.append((f"tuning within {GAP_POINTS:.0f} points of checking on {k} ({tune[k]:.1f} vs {ours[k]:.1f})",
                       abs(tune[k] - ours[k]) <= GAP_POINTS))
    print("\ntargets (checking part; Airtest from the same run):")
    for text, ok in checks:
        print(f"  {'n/a ' if ok is None else 'ok  ' if ok else 'MISS'} {text}"
              + (" (no Airtest in this run)" if ok is None else ""))


class Refusals:
    """The refusal rules' own record: each refused locate (an answer withheld or made unreliable by
    a rule) counted by whether the best candidate was right, a copy of the target, or wrong."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], dict[str, int]] = defaultdict(
            lambda: {"right": 0, "copy": 0, "wrong": 0})

    def add(self, res, part: str, positive: bool, right, judged: str) -> None:
        """``judged``: the result's kind (:func:`judge`); a refused look-alike whose candidates are
        all copies of the target ("dup") counts as ``copy`` whichever copy ranked first."""
        best = res.element or (res.candidates[0] if res.candidates else None)
        rule = best.metadata.get("refused") if best is not None else None
        if not rule:
            return
        if judged == "dup":
            kind = "copy"
        elif right is not None and right(best.center):
            kind = "right"
        else:
            kind = "wrong"
        self.rows[(rule, part, "positive" if positive else "absent")][kind] += 1

    def print(self) -> None:
        print("\nrefusal rules' record (best candidate of each refused locate: right = a lost hit, copy = an "
              "identical element, wrong = a wrong tap the rule prevented)")
        if not self.rows:
            print("  no refusals")
        for (rule, part, kind), r in sorted(self.rows.items()):
            print(f"  {rule:<12}{part:<10}{kind:<10} right {r['right']:>4}   copy {r['copy']:>4}   wrong {r['wrong']:>4}")


# -- calibration ---------------------------------------------------------------------------------

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
    bins: dict[float, list[int]] = defaultdict(lambda: [0, 0])
    for raw, ok in points:
        b = round(min(max(raw, 0.0), 0.999) // width * width, 2)
        bins[b][0] += ok
        bins[b][1] += 1
    blocks = _pav([[b, ok, n] for b, (ok, n) in sorted(bins.items())])
    lows = [wilson_low(ok, n) for _, ok, n in blocks]
    for k in range(len(lows) - 2, -1, -1):
        lows[k] = min(lows[k], lows[k + 1])
    return [(b, round(lo, 3)) for (b, _, _), lo in zip(blocks, lows, strict=True)]


def print_calibration(calib: list[tuple[str, str, float, bool]]) -> None:
    """Precision per raw-score bin and tier, and the fitted knots, from the tuning part only:
    the tables are fitted there and judged on the checking part."""
    print("\ncalibration (tuning part only): precision of each tier's best box per raw-score bin")
    by_tier: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for part, tier, raw, ok in calib:
        if part == "tuning":
            by_tier[tier].append((float(raw), bool(ok)))
    for tier, pts in sorted(by_tier.items()):
        bins: dict[float, list[int]] = defaultdict(lambda: [0, 0])
        for raw, ok in pts:
            b = round(min(raw, 0.999) // 0.05 * 0.05, 2)
            bins[b][0] += ok
            bins[b][1] += 1
        print(f"  {tier}: " + "  ".join(f"{b:.2f}:{ok}/{n}" for b, (ok, n) in sorted(bins.items())))
        print(f"    fitted knots (bin start, confidence): {fit_table(pts)}")
