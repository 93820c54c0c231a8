"""Every family's own reply shapes through `remote locate`'s code path: what is read, what is tapped, what is refused.

    python bench/dialect_bench.py             # all families, 3 resolutions x 2 send sizes x box/point x 6 forms
    python bench/dialect_bench.py --quick     # one resolution and send size

What writes the replies: the loopback model server (remote/sim/dialects.py), from the same published formats the
reader was built from (docs/models.md). It writes each reply in the family's dialect for the image size that
request actually carried (the frame its server would make of it), never for a size fixed in advance. So this bench
measures reading, frames and mapping, not a model's eyesight: every reply is in a shape the reader knows.

Cases per family, screen and send size: native boxes and points in 6 forms (plain; a draft in <think>; a wrong
answer then "Corrected:"; numbers as strings; fences; Chinese prose), 2 replies that must not be tapped (unreadable
twice, outside the image twice), and 2 plausible, well-formed replies that point at the element next to the
target (its box, its centre). Each case is one ``dynamic:`` locate through ``commands.locate.model_locator``
(the configured model built as a run builds it: the real ``openai`` client, ``VisionAgent``, ``HybridLocator``)
on a screen of six labelled buttons with its UI tree (a tree to snap to: the easy case). Columns:

- read 1st: the family's replies turned into an answer at the first try (the rest cost a re-ask);
- within 1 px: locates whose box is the target element's within 1 px;
- wrong taps: a locate that succeeded somewhere other than the target from a native or a must-not-tap reply
  (unreadable, off-image); it does NOT count the neighbour replies, which have their own column;
- refused: must-not-tap replies that ended in no tap (of those given);
- neighbour tapped: plausible replies pointing at the adjacent element that ended in a tap there (snapping and
  confirmation cannot tell a confident wrong answer from a right one: these are the taps the sensitivity gate on
  the found element's label is left to judge);
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

from remote.ai.reply import parse_json_reply  # noqa: E402
from remote.apps import ModuleRegistry  # noqa: E402
from remote.commands.locate import model_locator  # noqa: E402
from remote.core.coords import image_to_screen, to_pixels  # noqa: E402
from remote.core.locate.hybrid_locator import HybridLocator  # noqa: E402
from remote.core.records import LocateResult, LocateStrategy  # noqa: E402
from remote.sim.dialects import DIALECTS, is_neutral, render, seen_frame  # noqa: E402
from remote.sim.model_server import ModelServer  # noqa: E402
from tests.support import dialect_cases as dc  # noqa: E402

FORMS = ("plain", "thinking", "corrected", "strings", "fence", "chinese")
OUTSIDE = [1.2, 0.5, 1.4, 0.55]          # fractions of the screen: right of its edge
NEIGHBOUR = "发送"                        # the button right of the target (设置), same row, same size
TARGET = "dynamic:设置按钮"


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
    neighbour_given: int = 0
    neighbour_tapped: int = 0
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


def locator_for(url: str, family: str, side: int) -> HybridLocator:
    """`remote locate`'s own builder: the model made as a run makes it (its client, its budget of calls per run),
    a fresh one per case as each `remote locate` is."""
    return model_locator(ModuleRegistry(()), None, LocateStrategy.OPENCV_FIRST, TARGET, dc.config(url, family, side))[0]


def locate(locator: HybridLocator, size: tuple[int, int]) -> LocateResult:
    """One ``dynamic:`` locate on the screen of six buttons (with its UI tree)."""
    return locator.locate(TARGET, dc.screen(size))


def _cases(size: tuple[int, int]) -> list[tuple[dict[str, object] | str, str]]:
    truth = dc.layout(size)[dc.TARGET]
    near = dc.layout(size)[NEIGHBOUR]
    cases: list[tuple[dict[str, object] | str, str]] = []
    cases += [({"box": list(truth), "variant": f, "decoy": [20, 20, 300, 200]}, "good") for f in FORMS]
    cases += [({"point": dc.centre(truth), "variant": f, "decoy": [20, 20, 300, 200]}, "good") for f in FORMS]
    outside = [v * size[i % 2] for i, v in enumerate(OUTSIDE)]
    cases += [({"box": outside}, "bad"), ("我看到这个按钮了，就在屏幕中间。", "bad")]
    cases += [({"box": list(near)}, "neighbour"), ({"point": dc.centre(near)}, "neighbour")]
    return cases


def run_family(server: ModelServer, family: str, sizes: list[tuple[int, int]], sides: list[int]) -> Tally:
    t = Tally()
    for size in sizes:
        truth = dc.layout(size)[dc.TARGET]
        near = dc.layout(size)[NEIGHBOUR]
        server.family, server.screen = family, size
        for side in sides:
            for reply, kind in _cases(size):
                server.requests.clear()
                server.script("locate", reply, reply)
                locator = locator_for(server.url, family, side)
                start = time.perf_counter()
                result = locate(locator, size)
                t.seconds.append(time.perf_counter() - start)
                with server._lock:
                    server._queues.clear()
                answers = [r for r in server.requests if r.purpose == "locate"]
                t.locates += 1
                t.calls += len(answers)
                box = result.element.bbox if result.success and result.element else None
                if kind == "neighbour":
                    t.neighbour_given += 1
                    t.neighbour_tapped += int(box is not None and _same(box, near))
                    t.wrong += int(box is not None and not _same(box, near) and not _same(box, truth))
                    continue
                if kind == "bad":
                    t.bad_given += 1
                    t.refused += int(not result.success)
                    t.wrong += int(result.success)
                    continue
                t.replies += 1
                t.read_first += int(len(answers) == 1 and result.success)
                if box is not None and _same(box, truth):
                    t.within += 1
                elif box is not None:
                    t.wrong += 1
                raw, sent = _rendered(server, reply)
                verdict = _peer(raw, size, sent, truth) if raw and sent else "unread"
                t.peer_read += int(verdict != "unread")
                t.peer_within += int(verdict == "within")
                t.peer_wrong += int(verdict == "wrong")
    return t


def _same(box: tuple[int, int, int, int], truth: tuple[int, int, int, int]) -> bool:
    return all(abs(a - b) <= 1 for a, b in zip(box, truth, strict=True))


def _rendered(server: ModelServer, reply: object) -> tuple[str, tuple[int, int] | None]:
    """The text the server wrote for ``reply`` at the first locate request (what the peer reads), and the size
    of the image that request carried (what the peer maps from)."""
    first = next((r for r in server.requests if r.purpose == "locate"), None)
    sizes = first.image_sizes() if first is not None else []
    sent = sizes[-1] if sizes else None
    if isinstance(reply, str) or first is None or server.family is None or not is_neutral(reply) or sent is None:
        return (reply if isinstance(reply, str) else ""), sent
    dialect = DIALECTS[server.family]
    frame = seen_frame(dialect, sent, bool(first.body.get("vl_high_resolution_images")))
    return render(dialect, reply, server.screen, frame), sent  # type: ignore[arg-type]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one resolution (1080x2400) and one send size (1280)")
    ap.add_argument("--family", action="append", help="only these families (repeatable)")
    args = ap.parse_args()
    sizes = [(1080, 2400)] if args.quick else list(dc.RESOLUTIONS)
    sides = [1280] if args.quick else list(dc.SEND_SIDES)
    families = args.family or sorted(dc.MODELS)
    print(f"dialect bench: {len(families)} families, screens {', '.join(f'{w}x{h}' for w, h in sizes)}, "
          f"send sizes {sides}, {len(FORMS)} forms x box/point + 2 must-not-tap + 2 neighbour replies per combination")
    print("replies: written by the loopback server in each family's published format, for the size each request "
          "carried;\n'wrong taps' counts taps elsewhere from native and must-not-tap replies (unreadable, off-image); "
          "plausible replies naming the neighbouring element are counted apart ('neighbour tapped').")
    header = (f"{'family':<18}{'locates':>8}{'read 1st':>10}{'within 1px':>11}{'wrong taps':>11}{'refused':>9}"
              f"{'neighbour':>11}{'calls/loc':>10}{'ms/loc':>8} | {'peer read':>9}{'peer 1px':>9}{'peer wrong':>11}")
    print(header)
    print("-" * len(header))
    total = Tally()
    with ModelServer() as server:
        for family in families:
            t = run_family(server, family, sizes, sides)
            ms = sorted(t.seconds)[len(t.seconds) // 2] * 1000
            print(_row(family, t, f"{ms:>8.0f}"))
            for name in ("locates", "calls", "replies", "read_first", "within", "wrong", "bad_given", "refused",
                         "peer_read", "peer_within", "peer_wrong", "neighbour_given", "neighbour_tapped"):
                setattr(total, name, getattr(total, name) + getattr(t, name))
    print("-" * len(header))
    print(_row("all", total, f"{'':>8}"))
    print(f"wrong taps: {total.wrong} (must be 0); the one-convention peer: {total.peer_wrong}; plausible replies "
          f"naming the neighbouring element tapped there: {total.neighbour_tapped} of {total.neighbour_given}")
    return 0 if total.wrong == 0 else 1


def _row(name: str, t: Tally, ms: str) -> str:
    good = t.replies
    return (f"{name:<18}{t.locates:>8}{t.read_first / good:>10.0%}{t.within:>6}/{good:<4}{t.wrong:>11}"
            f"{t.refused:>5}/{t.bad_given:<3}{t.neighbour_tapped:>6}/{t.neighbour_given:<4}{t.calls / t.locates:>10.2f}"
            f"{ms} | {t.peer_read / good:>9.0%}{t.peer_within / good:>9.0%}{t.peer_wrong:>11}")

if __name__ == "__main__":
    raise SystemExit(main())
