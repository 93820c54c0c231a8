"""Runs Airtest's default Template.match_in on the bench cases; run with Airtest's own interpreter.

Usage: python _airtest_worker.py DATA CASES.json  (cases written by locate_bench.py).
Prints one JSON line per case: {"i": index, "pos": [x, y] | null, "ms": float}.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cases import condition_screen, load_pairs  # noqa: E402


def main() -> None:
    from airtest.core.cv import Template

    data, cases = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    pairs = load_pairs(data)
    tmp = Path(tempfile.mkdtemp())
    key, screen = None, None
    for i, c in enumerate(cases):
        if key != (c["pair"], c["condition"]):
            img = Image.open(pairs[c["pair"]].image_path).convert("RGB")
            screen = np.ascontiguousarray(np.asarray(condition_screen(img, c["condition"]))[:, :, ::-1])
            key = (c["pair"], c["condition"])
        tpath = tmp / f"t{i}.png"
        Image.open(pairs[c["tpl_pair"]].image_path).convert("RGB").crop(tuple(c["tpl_box"])).save(tpath)
        t = time.perf_counter()
        try:
            pos = Template(str(tpath), threshold=0.7).match_in(screen)
        except Exception as exc:  # airtest raises its own errors on odd inputs; recorded as not found
            pos = None
            print(json.dumps({"i": i, "error": str(exc)[:100]}), file=sys.stderr)
        ms = (time.perf_counter() - t) * 1000
        print(json.dumps({"i": i, "pos": [int(v) for v in pos] if pos else None, "ms": round(ms, 2)}), flush=True)


if __name__ == "__main__":
    main()
