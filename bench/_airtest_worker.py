"""Airtest as its users run it, on the bench's cases; run with Airtest's own interpreter.

Usage: python _airtest_worker.py   (the bench starts it and talks over stdin/stdout)

Reads one JSON request per line: {"i": case index, "screen": PNG path, "template": PNG path,
"resolution": [w, h] of the screen the template was cut from}. For each it runs
``Template(template, threshold=0.7, resolution=...).match_in(screen)`` (the default strategy
chain mstpl -> tpl -> sift -> brisk) and the multiscale-pre strategy alone (``CVSTRATEGY =
["mstpl"]``), and answers one JSON line {"i", "match_in": [x, y] | null, "match_in_ms",
"mstpl": [x, y] | null, "mstpl_ms"}. The bench sends a case, runs its own locator on it, then
reads the answer: the two run interleaved, under the same load.
"""

import json
import logging
import sys
import time

import cv2


def _run(template, screen, strategies) -> tuple[object, float]:
    from airtest.core.settings import Settings as ST

    ST.CVSTRATEGY = strategies
    t = time.perf_counter()
    try:
        pos = template.match_in(screen)
    except Exception as exc:  # airtest raises its own errors on odd inputs: recorded as not found
        print(f"airtest error: {str(exc)[:200]}", file=sys.stderr)
        pos = None
    ms = (time.perf_counter() - t) * 1000
    return ([int(v) for v in pos] if pos else None), round(ms, 3)


def main() -> None:
    from airtest.core.cv import Template
    from airtest.core.settings import Settings as ST

    logging.getLogger("airtest").setLevel(logging.WARNING)
    default = list(ST.CVSTRATEGY)
    screens: dict[str, object] = {}
    for line in sys.stdin:
        req = json.loads(line)
        if req["screen"] not in screens:
            screens.clear()
            screens[req["screen"]] = cv2.imread(req["screen"], cv2.IMREAD_COLOR)
        screen = screens[req["screen"]]
        template = Template(req["template"], threshold=0.7, resolution=tuple(req["resolution"]))
        mi, mi_ms = _run(template, screen, default)
        ms, ms_ms = _run(template, screen, ["mstpl"])
        print(json.dumps({"i": req["i"], "match_in": mi, "match_in_ms": mi_ms, "mstpl": ms, "mstpl_ms": ms_ms}),
              flush=True)


if __name__ == "__main__":
    main()
