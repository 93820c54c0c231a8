"""The resident tree server against ``uiautomator dump`` (issue 35), for bench/e2e_bench.py --compare-trees.

Each task runs on the dump path and on the server path in turn (interleaved, so the machine's load hits
both alike), at both ends of every uncertain cost of the profile (`remote.sim.realism.RANGES`: a warm
read 5-100 ms, a dump 1-3 s, the other shell commands 30-150 ms, the server's screenshot 24-450 ms, a change drawn
33-50 ms and a new screen 150-350 ms after its command, a raw screencap's capture 100-250 ms, the server's calls
answered side by side or one at a time) and at the profile's own cited values between them. Printed per end: each task's wall time on
both paths and their ratio, the trees read per step (server) and dumps per step (dump path), where the
server path's seconds go (``shots``: frames the tree server gave, of all frames taken); then the targets: the
headline at most 3.5 s (median) with a fresh tree behind every step and the final check, the templates together
at least 2.5 times faster than the dump path. Each phone has u2.jar from a run before (pushed once per phone);
the headline's first run on a phone, which pushes it, is timed once and printed apart. The server path runs with
the product's default ``--frames needed`` (a frame where a check reads the pixels); the headline is also run with
``--frames every`` (a frame of every screen) and its median printed apart.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from remote.sim.realism import PROFILES, RANGES

HEADLINE_TARGET_S, SPEEDUP_TARGET = 3.5, 2.5


def ends(profile: str) -> dict[str, dict[str, int]]:
    """``{"low": {key: low, ...}, "profile": {...}, "high": {...}}``: every uncertain cost at its low end, at the
    profile's own (cited) value, and at its high end."""
    low, high = ({key: pair[i] for key, pair in RANGES.items()} for i in (0, 1))
    return {"low": low, "profile": {key: PROFILES[profile][key] for key in RANGES}, "high": high}


def compare_trees(run_one: Callable[..., dict], pad: Callable[[str, int], str], tasks: list[str], headline: str,
                  profile: str, runs_dir: str, repeat: int, waits: bool) -> int:
    ok = True
    for end, costs in ends(profile).items():
        print(f"\n== {profile}, {end} end: " + ", ".join(f"{k} {v}" for k, v in costs.items()))
        rows: list[tuple[dict, dict]] = []
        warms: list[dict | None] = []
        every: list[dict] = []     # the headline on the server path with --frames every (a frame of each screen)
        # every run's phone has u2.jar from a run before it (pushed once per phone, as uiautomator2 does); the
        # first run on a phone also pushes it: timed once, printed apart
        first = run_one(headline, "1080x2400", None, runs_dir, waits=waits, profile=profile, tree="auto", costs=costs,
                        jar_on_phone=False)
        for task in tasks:
            runs = max(1, repeat if task == headline else 1)
            for _ in range(runs):
                dump = run_one(task, "1080x2400", None, runs_dir, waits=waits, profile=profile, tree="dump",
                               costs=costs)
                served = run_one(task, "1080x2400", None, runs_dir, waits=waits, profile=profile, tree="auto",
                                 costs=costs)
                rows.append((dump, served))
                if task == headline:
                    every.append(run_one(task, "1080x2400", None, runs_dir, waits=waits, profile=profile,
                                         tree="auto", costs=costs, frames="every"))
            if len(tasks) > 1:    # the same task once more, on a phone whose server was started before it
                warms.append(run_one(task, "1080x2400", None, runs_dir, waits=waits, profile=profile, tree="auto",
                                     costs=costs, warm_server=True))
        ok = report(rows, headline, pad, warms) and ok
        if every:
            walls = sorted(r["wall"] for r in every)
            print(f"headline with --frames every (a frame of each screen, {every[0]['grabs']} frames): server path "
                  f"median {statistics.median(walls):.2f} s (min {walls[0]:.2f}, max {walls[-1]:.2f}); all "
                  f"succeeded: {'yes' if all(r['ok'] for r in every) else 'NO'}")
        print(f"headline, the first run on a phone (u2.jar, {first['jar_mb']:.1f} MB, pushed before the server "
              f"starts): {first['wall']:.2f} s ({'ok' if first['ok'] else 'FAILED'})")
    return 0 if ok else 1


def report(rows: list[tuple[dict, dict]], headline: str, pad: Callable[[str, int], str],
           warms: list[dict | None] | None = None) -> bool:
    warms = warms or []
    print(f"{'task':24} {'ok':5} {'steps':>5} {'dump s':>7} {'server s':>8} {'x':>5} {'dumps/st':>8} "
          f"{'reads/st':>8} {'cold s':>6} {'frames s':>8} {'shots':>6} {'act s':>6} {'wait s':>6}")
    for dump, served in rows:
        n = max(served["steps"], 1)
        tree: dict[str, Any] = served["tree"]
        p = served["parts"]
        print(f"{pad(dump['task'], 24)} {_yes(dump) + '/' + _yes(served):5} {served['steps']:>5} "
              f"{dump['wall']:7.2f} {served['wall']:8.2f} {dump['wall'] / served['wall']:5.2f} "
              f"{dump['all_dumps'] / max(dump['steps'], 1):8.2f} {served['reads'] / n:8.2f} "
              f"{tree.get('cold_start_s') or 0:6.2f} {p['frames']:8.2f} {served['shots']:>2}/{served['grabs']:<3} "
              f"{p['act']:6.2f} {p['wait']:6.2f}"
              + ("" if served["ok"] else f"  {served['error']}"))
    head = [served for _, served in rows if served["task"] == headline]
    firsts = {}
    for dump, served in rows:
        firsts.setdefault(dump["task"], (dump, served))
    dump_total = sum(d["wall"] for d, _ in firsts.values())
    served_total = sum(s["wall"] for _, s in firsts.values())
    speedup = dump_total / served_total if served_total else 0.0
    every_ok = all(d["ok"] and s["ok"] for d, s in rows)
    print(f"templates: dump path {dump_total:.1f} s, server path {served_total:.1f} s: {speedup:.2f}x "
          f"(target >= {SPEEDUP_TARGET}x: {'met' if speedup >= SPEEDUP_TARGET else 'NOT met'}); "
          f"all succeeded: {'yes' if every_ok else 'NO'}")
    warm = [w for w in warms if w is not None]
    if warm:
        kept = sum(w["wall"] for w in warm)
        print(f"templates with the server already running (a batch, worker or mcp process keeps it: its cold start "
              f"paid once): server path {kept:.1f} s: {dump_total / kept:.2f}x; all succeeded: "
              f"{'yes' if all(w['ok'] for w in warm) else 'NO'}")
    if head:
        walls = sorted(s["wall"] for s in head)
        med = statistics.median(walls)
        reads = head[0]["reads"] / max(head[0]["steps"], 1)
        dumps = [d["wall"] for d, s in rows if s["task"] == headline]
        print(f"headline: server path median {med:.2f} s over {len(walls)} (min {walls[0]:.2f}, max {walls[-1]:.2f}), "
              f"dump path median {statistics.median(dumps):.2f} s; {reads:.2f} tree reads per step; "
              f"target <= {HEADLINE_TARGET_S} s: {'met' if med <= HEADLINE_TARGET_S else 'NOT met'}")
        return every_ok and med <= HEADLINE_TARGET_S and speedup >= SPEEDUP_TARGET
    return every_ok


def _yes(row: dict) -> str:
    return "y" if row["ok"] else "N"

