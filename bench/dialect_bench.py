"""Every family's own reply shapes through the real locator: what is read, what is tapped, what is refused.

    python bench/dialect_bench.py             # all families, 3 resolutions x 2 send sizes x box/point x 6 forms
    python bench/dialect_bench.py --quick     # one resolution and send size

For each family the loopback server answers as that family does (remote/sim/dialects.py,
from docs/models.md's facts): native boxes and points, the hostile-but-real forms (a draft in
<think>, a wrong answer then "Corrected:", numbers as strings, fences, Chinese prose), and
replies that must not be tapped (unreadable twice, outside the image twice). Each case is one
``dynamic:`` locate through the real ``openai`` client, ``VisionAgent`` and ``HybridLocator`` on a
screen of labelled buttons with its UI tree. Columns:

- read: the family's replies turned into an answer at the first try (the rest cost a re-ask);
- within 1 px: locates whose box is the target element's within 1 px;
- wrong taps: a locate that succeeded somewhere else (the figure that must be 0);
- refused: bad replies that ended in no tap (of those given);
- calls/locate: model calls per locate, re-asks and confirmations included.

The peer in the same run is the rule this project used before families (the seed's): every reply
read as JSON on 0-1000, unless a value reaches the image's shorter side, then as pixels of the
image sent; no snapping. Its wrong taps are what "silently tapped elsewhere" means.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remote.ai.families import family_for  # noqa: E402
from remote.ai.frames import send_size  # noqa: E402
from remote.ai.reply import parse_json_reply  # noqa: E402
from remote.core.coords import image_to_screen, to_pixels  # noqa: E402
from remote.sim.dialects import DIALECTS, is_neutral, render, seen_frame  # noqa: E402
from remote.sim.model_server import ModelServer  # noqa: E402
from tests.support import dialect_cases as dc  # noqa: E402

FORMS = ("plain", "thinking", "corrected", "strings", "fence", "chinese")
OUTSIDE = [1.2, 0.5, 1.4, 0.55]          # fractions of the screen: right of its edge


@dataclass
class Tally:
    locates: int = 0
    calls: int = 0
    replies: int = 0
    read_first: int = 0
    within: int = 0
    wrong: int = 0
    bad_given: int = 0
    refused: int = 0
    peer_read: int = 0
    peer_within: int = 0
    peer_wrong: int = 0
    seconds: list[float] = field(default_factory=list)


def _peer(raw: str, size: tuple[int, int], sent: tuple[int, int], truth: tuple[int, int, int, int]) -> str:
    """The seed's single-convention rule on one reply: 'within', 'wrong' or 'unread'."""
    try:
        data = parse_json_reply(raw)
    except ValueError:
        return "unread"
    item = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else data
    values = next((item.get(k) for k in ("bbox", "bbox_2d", "box_2d", "box", "point_2d", "coordinate")
                   if isinstance(item, dict) and isinstance(item.get(k), list)), None) if isinstance(item, dict) else None
    if values is None or len(values) not in (2, 4):
        return "unread"
    values = list(values) * (2 if len(values) == 2 else 1)
    try:
        box = to_pixels([float(v) for v in values], sent, "auto")
    except (TypeError, ValueError):
        return "unread"
    device = image_to_screen(box, sent, size) if box else None
    if device is None:
        return "unread"
    cx, cy = (device[0] + device[2]) / 2, (device[1] + device[3]) / 2
    return "within" if truth[0] <= cx < truth[2] and truth[1] <= cy < truth[3] else "wrong"


def run_family(server: ModelServer, family: str, sizes: list[tuple[int, int]], sides: list[int]) -> Tally:
    t = Tally()
    fam = family_for(dc.MODELS[family])
    for size in sizes:
        truth = dc.layout(size)[dc.TARGET]
        server.family, server.screen = family, size
        for side in sides:
            sent = send_size(size, side, fam.frame)
            cases = [({"box": list(truth), "variant": f, "decoy": [20, 20, 300, 200]}, False) for f in FORMS]
            cases += [({"point": dc.centre(truth), "variant": f, "decoy": [20, 20, 300, 200]}, False) for f in FORMS]
            outside = [v * size[i % 2] for i, v in enumerate(OUTSIDE)]
            cases += [({"box": outside}, True), ("我看到这个按钮了，就在屏幕中间。", True)]
            reply: dict[str, object] | str
            for reply, bad in cases:
                server.requests.clear()
                server.script("locate", reply, reply)
                start = time.perf_counter()
                result = dc.locate(server.url, family, size, side)
                t.seconds.append(time.perf_counter() - start)
                with server._lock:
                    server._queues.clear()
                answers = [r for r in server.requests if r.purpose == "locate"]
                t.locates += 1
                t.calls += len(answers)
                if bad:
                    t.bad_given += 1
                    t.refused += int(not result.success)
                    t.wrong += int(result.success)
                    continue
                t.replies += 1
                t.read_first += int(len(answers) == 1 and result.success)
                box = result.element.bbox if result.success and result.element else None
                if box is not None and all(abs(a - b) <= 1 for a, b in zip(box, truth, strict=True)):
                    t.within += 1
                elif box is not None:
                    t.wrong += 1
                raw = _rendered(server, reply)
                verdict = _peer(raw, size, sent, truth) if raw else "unread"
                t.peer_read += int(verdict != "unread")
                t.peer_within += int(verdict == "within")
                t.peer_wrong += int(verdict == "wrong")
    return t


def _rendered(server: ModelServer, reply: object) -> str:
    """The text the server wrote for ``reply`` at the first locate request (what the peer reads)."""
    first = next((r for r in server.requests if r.purpose == "locate"), None)
    if isinstance(reply, str) or first is None or server.family is None or not is_neutral(reply):
        return reply if isinstance(reply, str) else ""
    dialect = DIALECTS[server.family]
    frame = seen_frame(dialect, first.image_sizes()[-1], bool(first.body.get("vl_high_resolution_images")))
    return render(dialect, reply, server.screen, frame)  # type: ignore[arg-type]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one resolution (1080x2400) and one send size (1280)")
    ap.add_argument("--family", action="append", help="only these families (repeatable)")
    args = ap.parse_args()
    sizes = [(1080, 2400)] if args.quick else list(dc.RESOLUTIONS)
    sides = [1280] if args.quick else list(dc.SEND_SIDES)
    families = args.family or sorted(dc.MODELS)
    print(f"dialect bench: {len(families)} families, screens {', '.join(f'{w}x{h}' for w, h in sizes)}, "
          f"send sizes {sides}, {len(FORMS)} forms x box/point + 2 bad replies per combination")
    header = (f"{'family':<18}{'locates':>8}{'read 1st':>10}{'within 1px':>11}{'wrong taps':>11}{'refused':>9}"
              f"{'calls/loc':>10}{'ms/loc':>8} | {'peer read':>9}{'peer 1px':>9}{'peer wrong':>11}")
    print(header)
    print("-" * len(header))
    total = Tally()
    with ModelServer() as server:
        for family in families:
            t = run_family(server, family, sizes, sides)
            good = t.locates - t.bad_given
            ms = sorted(t.seconds)[len(t.seconds) // 2] * 1000
            print(f"{family:<18}{t.locates:>8}{t.read_first / t.replies:>10.0%}{t.within:>6}/{good:<4}"
                  f"{t.wrong:>11}{t.refused:>5}/{t.bad_given:<3}{t.calls / t.locates:>10.2f}{ms:>8.0f} | "
                  f"{t.peer_read / good:>9.0%}{t.peer_within / good:>9.0%}{t.peer_wrong:>11}")
            for name in ("locates", "calls", "replies", "read_first", "within", "wrong", "bad_given", "refused",
                         "peer_read", "peer_within", "peer_wrong"):
                setattr(total, name, getattr(total, name) + getattr(t, name))
    good = total.locates - total.bad_given
    print("-" * len(header))
    print(f"{'all':<18}{total.locates:>8}{total.read_first / total.replies:>10.0%}{total.within:>6}/{good:<4}"
          f"{total.wrong:>11}{total.refused:>5}/{total.bad_given:<3}{total.calls / total.locates:>10.2f}{'':>8} | "
          f"{total.peer_read / good:>9.0%}{total.peer_within / good:>9.0%}{total.peer_wrong:>11}")
    print(f"silent wrong taps: {total.wrong} (must be 0); the one-convention peer: {total.peer_wrong}")
    return 0 if total.wrong == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
