"""OCR bench: ``text:`` targets on real screenshots, per source, the tuning sources beside the checking ones.

    .venv/bin/python bench/ocr_bench.py                  # every screenshot of real-dev and real-zh (~12 min, 2 cores)
    .venv/bin/python bench/ocr_bench.py --limit 5        # 5 screenshots per source
    .venv/bin/python bench/ocr_bench.py --part tuning    # the tuning sources only (while fitting a constant)
    .venv/bin/python bench/ocr_bench.py --rec-model REC.onnx KEYS.txt   # the tier with another PP-OCR recognizer

The development protocol (:data:`SPLIT`): the screenshots are split by source (one repository: one app
or one phone); every constant of the OCR tier (the readings' scales, thresholds, the matching rules'
bounds, the rule that asks for a second reading) is fitted on the tuning sources, and only the
checking sources' figures are results. A gap of more than 2 points between the parts is printed as
a WARNING: a finding to fix, not to tune away.

Rows, per source and per part (the engine is warm; times are wall ms, and the process's CPU ms,
which a loaded machine inflates much less):
  ocr         ``text:LABEL`` through OCR alone (``["ocr"]``) for every text node the screen draws as
              text (``_text_nodes.drawn_text_nodes``), on one Screen per screenshot: its readings are
              shared by the locates of that screenshot (ms: matching, and any further reading)
  defaults    RapidOCR with its own defaults on the same nodes (``_ocr_peer``: a line that reads
              exactly the label, tapped at its centre), its reading made once per screenshot
  ocr fresh   ``--fresh`` K of those nodes per screenshot, each located on a fresh Screen (one
              runner step: the reading(s) included)
  absent      ``--absent`` K texts per screenshot that it does not show, each on a fresh Screen:
              drawn labels of the other part's screenshots that are neither in nor around any text
              or content-desc of this screenshot's UI dump (an OCR-independent check). absent% =
              reported absent; claimed% = "found" anyway (reliable or not). ``defaults absent``: the
              same texts against the defaults' reading (its time: that reading)
  reading     per screenshot: the product's first reading, and the defaults' reading
  first: det  the first reading's parts (``Screen.ocr_timing``): the detector (with the resize), and
  first: rec  the recognizer on every detected line (lines: median lines per screenshot); wall ms only
Counting as ``_tally``: hit (tap point on a node showing that label, or its clickable target),
dup (several candidates, all such nodes), amb, wrong; found = hit + dup.

No UI-tree row: the ground truth is the tree's own nodes, so the tree would find all of them by
construction (an upper bound, not a measurement; issue 40).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _ocr_peer as peer  # noqa: E402
from _cases import Pair, load_pairs  # noqa: E402
from _tally import GAP_POINTS, inside, judge, pct  # noqa: E402
from _text_nodes import drawn_text, drawn_text_nodes  # noqa: E402

from remote.core.locate import ocr, ocr_memo  # noqa: E402
from remote.core.locate.hybrid_locator import HybridLocator  # noqa: E402
from remote.core.locate.screen import Screen  # noqa: E402
from remote.core.locate.ui_tree import UINode, UITree, normalize_text, parse_hierarchy  # noqa: E402
from tests.support.data import data_path  # noqa: E402

ocr_memo.remember_readings(False)   # every reading timed is a reading made, not one remembered

DATA = (data_path("real-dev"), data_path("real-zh"))   # REMOTE_DATA_DIR, else shared/data beside the checkout
ABSENT_LIMIT_MS = 1000.0   # issue 16: a text not on the screen is reported absent within 1 s
FOUND_TARGET, WRONG_TARGET = 90.0, 1.0   # issue 37, on every checking source
# The split, by source, decided on 2026-11-29 before any change made for issue 37 (and never moved
# since). Tuning: Weibo on a real phone (1080x2340, Chinese and English; the tier's earlier constants
# were fitted on it) and QQ Music (1080x2280, Simplified Chinese: players, lists, settings). Checking:
# what the tuning never saw -- Traditional Chinese system screens of an ASUS phone (720x1520), an IM
# app at 1080x1920 and 1440x3000, 22 English apps on an emulator (1080x1920), an Infinix phone
# (720x1640).
SPLIT = {"Kqramazov_fdroid_utg": "tuning", "ToolmanInside__DroidbotExp": "tuning",
         "GeniusPudding__droidbot_multidevice": "checking", "llg23456__app-test-automation": "checking",
         "SageSELab_GuiEvo": "checking", "saimon4u_TestCube": "checking"}
PART_NAMES = ("tuning", "checking")


@dataclass
class Shot:
    """One screenshot with what the bench needs of its dump."""

    pair: Pair
    part: str
    image: Image.Image
    tree: UITree
    nodes: list[UINode]
    dump_texts: list[str]   # every text and content-desc of the dump, normalized

    @property
    def source(self) -> str:
        return self.pair.folder


@dataclass
class Row:
    n: int = 0
    kinds: Counter = field(default_factory=Counter)
    ms: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    second: int = 0   # locates after which the screen had a further reading
    lines: list[int] = field(default_factory=list)   # lines detected (the reading's parts)

    def add(self, kind: str, ms: float, cpu: float, second: bool = False) -> None:
        self.n += 1
        self.kinds[kind] += 1
        self.ms.append(ms)
        self.cpu.append(cpu)
        self.second += second

    def merge(self, other: Row) -> Row:
        self.n += other.n
        self.kinds.update(other.kinds)
        self.ms += other.ms
        self.cpu += other.cpu
        self.second += other.second
        self.lines += other.lines
        return self

    def rate(self, *kinds: str) -> float:
        return 100 * sum(self.kinds[k] for k in kinds) / self.n if self.n else float("nan")


def load(data: list[Path], limit: int | None, seed: int, only: str | None) -> tuple[list[Shot], dict[str, Counter]]:
    shots: list[Shot] = []
    left_out: dict[str, Counter] = defaultdict(Counter)
    by_source: dict[str, list[Pair]] = defaultdict(list)
    for d in data:
        for p in load_pairs(d):
            by_source[p.folder].append(p)
    for source in sorted(by_source, key=lambda s: (PART_NAMES.index(SPLIT.get(s, "checking")), s)):
        part = SPLIT.get(source)
        if part is None:
            print(f"note: source {source} is in no part of SPLIT; left out", file=sys.stderr)
            continue
        if only and part != only:
            continue
        members = by_source[source]
        random.Random(seed).shuffle(members)
        for p in members[:limit] if limit else members:
            img = Image.open(p.image_path).convert("RGB")
            tree = parse_hierarchy(p.xml_path.read_text(encoding="utf-8", errors="replace"), img.size)
            nodes, out = drawn_text_nodes(tree, img.size)
            left_out[source].update(out)
            texts = [normalize_text(t) for n in tree.nodes for t in (n.text, n.content_desc) if t.strip()]
            shots.append(Shot(p, part, img, tree, nodes, texts))
    return shots, left_out


def absent_texts(shot: Shot, pool: list[str], k: int, rng: random.Random) -> list[str]:
    """``k`` labels from ``pool`` (the other part's) that this screenshot's dump does not show: not
    inside any of its texts, and none of its texts (2+ characters) inside them."""
    out: list[str] = []
    for label in rng.sample(pool, len(pool)):
        q = normalize_text(label)
        if len(q) >= 2 and not any(q in t or (len(t) >= 2 and t in q) for t in shot.dump_texts):
            out.append(label)
            if len(out) == k:
                break
    return out


def timed(fn, *args):
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000


def node_check(shot: Shot, label: str):
    """(right(point), same_thing(bbox)) for a label: any node showing it, or its clickable target."""
    same = [m for m in shot.tree.visible_nodes() if normalize_text(drawn_text(m)) == normalize_text(label)]
    ok = [b for m in same for b in (m.bounds, shot.tree.clickable_target(m).bounds)]

    def right(pt) -> bool:
        return any(inside(pt, b) for b in ok)

    def same_thing(b) -> bool:
        return right(((b[0] + b[2]) // 2, (b[1] + b[3]) // 2))
    return right, same_thing


def fresh_locate(loc: HybridLocator, image: Image.Image, text: str):
    """One runner step's OCR locate: a Screen built from the image, then the ``["ocr"]`` tier."""
    screen = Screen(image)
    return loc.locate_with_fallback("text:" + text, ["ocr"], screen), screen


def every_node(loc: HybridLocator, shot: Shot, rows: dict, misses: list[str]) -> peer.Reading:
    """Every drawn text node through OCR (one Screen: its readings shared) and through the defaults."""
    src = shot.source
    shared = Screen(shot.image)
    _, ms, cpu = timed(shared.text_boxes)
    rows[("reading: first", src)].add("hit", ms, cpu)
    for part in ("det", "rec"):
        row = rows[(f"first: {part}", src)]
        row.add("hit", shared.ocr_timing["first"][f"{part}_ms"], float("nan"))
        row.lines.append(int(shared.ocr_timing["first"]["lines"]))
    base = peer.read(shot.image)
    rows[("reading: defaults", src)].add("hit", base.ms, base.cpu)
    for n in shot.nodes:
        label = drawn_text(n)
        right, same_thing = node_check(shot, label)
        before = len(shared.ocr_readings)
        res, ms, cpu = timed(loc.locate_with_fallback, "text:" + label, ["ocr"], shared)
        kind = judge(res, right, same_thing)
        rows[("ocr", src)].add(kind, ms, cpu, len(shared.ocr_readings) > before)
        if kind not in ("hit", "dup"):
            misses.append(f"{shot.part} {src} {shot.pair.image_path.name} {kind}: {label!r} {n.bounds}: {res.error}")
        rows[("defaults", src)].add(judge(peer.locate(base, label), right, same_thing), 0.0, 0.0)
    return base


def run(shots: list[Shot], fresh: int, absent: int, seed: int) -> tuple[dict, list[str], list[str]]:
    rows: dict[tuple[str, str], Row] = defaultdict(Row)
    claimed: list[str] = []
    misses: list[str] = []
    loc = HybridLocator(strategy="opencv_only", cache_ttl=0)
    pools = {src: sorted({drawn_text(n) for s in shots if s.part != shot.part for n in s.nodes}
                         or {drawn_text(n) for s in shots if s.source != src for n in s.nodes})   # one part run alone
             for src, shot in {s.source: s for s in shots}.items()}
    for i, shot in enumerate(shots):
        rng = random.Random(seed * 1000 + i)
        src = shot.source
        base = every_node(loc, shot, rows, misses)
        for n in rng.sample(shot.nodes, min(fresh, len(shot.nodes))):
            right, same_thing = node_check(shot, drawn_text(n))
            (res, screen), ms, cpu = timed(fresh_locate, loc, shot.image, drawn_text(n))
            rows[("ocr fresh", src)].add(judge(res, right, same_thing), ms, cpu, len(screen.ocr_readings) > 1)
        for text in absent_texts(shot, pools[src], absent, rng):
            (res, screen), ms, cpu = timed(fresh_locate, loc, shot.image, text)
            kind = judge(res, None, None)
            rows[("absent", src)].add(kind, ms, cpu, len(screen.ocr_readings) > 1)
            rows[("defaults absent", src)].add(judge(peer.locate(base, text), None, None), base.ms, base.cpu)
            if kind != "miss":
                claimed.append(f"{shot.part} {src}: {text!r} claimed on {shot.pair.image_path.name} at "
                               f"{res.element.bbox if res.element else '-'} "
                               f"(read {res.element.description if res.element else ''!r})")
        print(f"\r{i + 1}/{len(shots)} screenshots", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return rows, claimed, misses


def _times(r: Row) -> str:
    return f"{statistics.median(r.ms):>7.0f}{pct(r.ms, 95):>7.0f}{max(r.ms):>7.0f}{statistics.median(r.cpu):>7.0f}"


FOUND = f"{'n':>5}{'found%':>7}{'dup%':>6}{'amb%':>6}{'wrong%':>7}{'2nd%':>6}"
TABLES = (   # (row names, header, cells of a row)
    (("ocr", "defaults", "ocr fresh"), FOUND,
     lambda r: f"{r.n:>5}{r.rate('hit', 'dup'):>7.1f}{r.rate('dup'):>6.1f}{r.rate('amb'):>6.1f}{r.rate('wrong'):>7.1f}"
               f"{100 * r.second / r.n:>6.1f}"),
    (("absent", "defaults absent"), f"{'n':>5}{'absent%':>8}{'claimed%':>9}{'2nd%':>6}",
     lambda r: f"{r.n:>5}{r.rate('miss'):>8.1f}{r.rate('wrong', 'amb'):>9.1f}{100 * r.second / r.n:>6.1f}"),
    (("reading: first", "reading: defaults"), f"{'n':>5}", lambda r: f"{r.n:>5}"),
    (("first: det", "first: rec"), f"{'n':>5}{'lines':>6}",
     lambda r: f"{r.n:>5}{statistics.median(r.lines):>6.0f}"),
)


def by_part(rows: dict, shots: list[Shot]) -> dict[tuple[str, str], Row]:
    part_of = {s.source: s.part for s in shots}
    out: dict[tuple[str, str], Row] = defaultdict(Row)
    for (name, src), r in rows.items():
        out[(name, part_of[src])].merge(r)
    return out


def per_source(rows: dict, shots: list[Shot], left_out: dict[str, Counter]) -> None:
    """One line per source: the product's OCR beside RapidOCR's defaults, found and wrong, absent texts."""
    print(f"\n{'source':<38}{'part':<9}{'screens':>8}{'nodes':>6} | {'ocr found':>9}{'wrong':>6} | "
          f"{'defaults':>9}{'wrong':>6} |{'ocr-def':>8} | {'absent':>7}{'claim':>6}{'med ms':>7} | {'read ms':>8}"
          f"{'def ms':>7}")
    for src in dict.fromkeys(s.source for s in shots):
        part = SPLIT[src]
        n_shots = sum(s.source == src for s in shots)
        o, d, a = rows.get(("ocr", src), Row()), rows.get(("defaults", src), Row()), rows.get(("absent", src), Row())
        rf, rd = rows.get(("reading: first", src), Row()), rows.get(("reading: defaults", src), Row())
        med = statistics.median(a.ms) if a.n else float("nan")
        print(f"{src:<38}{part:<9}{n_shots:>8}{o.n:>6} | {o.rate('hit', 'dup'):>9.1f}{o.rate('wrong'):>6.1f} | "
              f"{d.rate('hit', 'dup'):>9.1f}{d.rate('wrong'):>6.1f} |{o.rate('hit', 'dup') - d.rate('hit', 'dup'):>+8.1f} | "
              f"{a.rate('miss'):>7.1f}{a.rate('wrong', 'amb'):>6.1f}{med:>7.0f} | "
              f"{statistics.median(rf.ms) if rf.n else float('nan'):>8.0f}"
              f"{statistics.median(rd.ms) if rd.n else float('nan'):>7.0f}")
        if left_out[src]:
            print(f"{'':<4}text nodes left out (not drawn as text): {dict(+left_out[src])}")


def report(rows: dict, shots: list[Shot], left_out: dict[str, Counter], claimed: list[str]) -> None:
    parts = by_part(rows, shots)
    for part in PART_NAMES:
        sizes = Counter(f"{s.image.width}x{s.image.height}" for s in shots if s.part == part)
        print(f"{part} part: {sum(sizes.values())} screenshots {dict(sizes)}; sources "
              f"{sorted({s.source for s in shots if s.part == part})}")
    per_source(rows, shots, left_out)
    for names, head, cells in TABLES:
        head += f"{'med':>7}{'p95':>7}{'max':>7}{'cpu':>7}"
        width = len(head)
        print(f"\n{'':<18}{'tuning part':^{width}} |{'checking part':^{width}}")
        print(f"{'ms (cpu: median)':<18}{head} |{head}")
        for name in names:
            out = [cells(r) + _times(r) if (r := parts.get((name, part))) and r.n else " " * width
                   for part in PART_NAMES]
            print(f"{name:<18}{out[0]} |{out[1]}")
    print("  2nd% = locates that made a further reading; absent% = reported absent, claimed% = found anyway "
          "(reliable or not); defaults: RapidOCR() as shipped, a line reading exactly the label")
    _checks(rows, parts, shots)
    if claimed:
        print("\nabsent texts claimed (look at the screenshot: is it drawn after all?):")
        for line in claimed[:20]:
            print("  " + line)


def _checks(rows: dict, parts: dict, shots: list[Shot]) -> None:
    print()
    for name, kinds in (("ocr", ("hit", "dup")), ("ocr fresh", ("hit", "dup")), ("absent", ("miss",))):
        a, b = parts.get((name, "tuning")), parts.get((name, "checking"))
        if a and b and a.n and b.n and abs(a.rate(*kinds) - b.rate(*kinds)) > GAP_POINTS:
            print(f"WARNING: {name}: tuning {a.rate(*kinds):.1f} % vs checking {b.rate(*kinds):.1f} %, a gap of more "
                  f"than {GAP_POINTS:.0f} points (a finding to fix, not to tune away)")
    print("targets, on every checking source (the tuning sources beside them are not results):")
    for src in dict.fromkeys(s.source for s in shots):
        o, d = rows.get(("ocr", src)), rows.get(("defaults", src))
        if not o or not o.n:
            continue
        found, wrong, base = o.rate("hit", "dup"), o.rate("wrong"), d.rate("hit", "dup") if d else 0.0
        ok = found >= FOUND_TARGET and wrong <= WRONG_TARGET and found >= base
        tag = ("ok  " if ok else "MISS") if SPLIT[src] == "checking" else "(tuning)"
        print(f"  {tag:<8} {src}: found {found:.1f} % (>= {FOUND_TARGET:.0f}), wrong {wrong:.1f} % "
              f"(<= {WRONG_TARGET:.0f}), defaults {base:.1f} % (ocr >= defaults)")
    for part in PART_NAMES:
        r = parts.get(("absent", part))
        if r and r.n:
            med, p95 = statistics.median(r.ms), pct(r.ms, 95)
            ok = med <= ABSENT_LIMIT_MS and r.rate("wrong", "amb") == 0
            print(f"  {'ok  ' if ok else 'MISS'} {part}: absent text reported absent in <= {ABSENT_LIMIT_MS:.0f} ms "
                  f"median ({med:.0f}; p95 {p95:.0f}), none claimed ({r.rate('wrong', 'amb'):.1f} %)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", action="append", default=None, help="a data folder (repeatable; default: real-dev "
                    "and real-zh of the data folder: REMOTE_DATA_DIR, else shared/data beside the checkout)")
    ap.add_argument("--limit", type=int, default=None, help="screenshots per source (default: all)")
    ap.add_argument("--part", choices=PART_NAMES, default=None, help="one part only")
    ap.add_argument("--fresh", type=int, default=1, help="nodes per screenshot located on a fresh Screen")
    ap.add_argument("--absent", type=int, default=2, help="absent texts per screenshot")
    ap.add_argument("--misses", default=None, help="write every node OCR did not find, with the locator's words")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rec-model", nargs=2, metavar=("ONNX", "KEYS"), default=None,
                    help="the product's tier with another PP-OCR recognizer (its ONNX file and character list)")
    args = ap.parse_args()
    data = [Path(d) for d in args.data] if args.data else list(DATA)
    data = [d for d in data if (d / "MANIFEST.tsv").is_file() or print(f"note: no MANIFEST.tsv in {d}; skipped",
                                                                          file=sys.stderr)]
    if not data:
        print("error: no data (real-dev and real-zh: set REMOTE_DATA_DIR, or put shared/data beside the checkout)", file=sys.stderr)
        return 2
    if args.rec_model:
        ocr.use_recognizer(*args.rec_model)
        print(f"recognizer: {args.rec_model[0]} (not RapidOCR's own)")
    if not ocr.available():
        print(f"error: {ocr.unavailable_reason()}", file=sys.stderr)
        return 2
    t0 = time.time()
    shots, left_out = load(data, args.limit, args.seed, args.part)
    ocr.read_text(shots[0].image)   # warm engines: the first run of each model allocates
    ocr.read_text(shots[0].image, reading="second")
    peer.read(shots[0].image)
    rows, claimed, misses = run(shots, args.fresh, args.absent, args.seed)
    report(rows, shots, left_out, claimed)
    if args.misses:
        Path(args.misses).write_text("\n".join(misses) + "\n", encoding="utf-8")
    print(f"\ntotal {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
