"""How much one coordinate conversion costs (target: < 1 µs; 20 conversions < 20 µs).

    python bench/coords_bench.py

Logging stays at WARNING, as in a normal run. Figures are medians of repeated
timings; the 20-box batch is what a model reply with 20 elements costs.
"""

from __future__ import annotations

import logging
import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remote.core.coords import bbox_center, to_pixels, validate_bbox  # noqa: E402

logging.basicConfig(level=logging.WARNING)


def median_us(stmt: str, number: int, repeat: int = 15, **names: object) -> float:
    times = timeit.repeat(stmt, globals=names, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def main() -> int:
    box, size = [100, 200, 300, 400], (1920, 1080)
    boxes = [[i * 10, i * 20, i * 10 + 40, i * 20 + 30] for i in range(20)]
    rows = [
        ("to_pixels auto (normalized -> pixels)", median_us("f(b, s)", 100_000, f=to_pixels, b=box, s=size)),
        ("to_pixels norm1000", median_us("f(b, s, 'norm1000')", 100_000, f=to_pixels, b=box, s=size)),
        ("to_pixels pixel (no scaling)", median_us("f(b, s, 'pixel')", 100_000, f=to_pixels, b=box, s=size)),
        ("bbox_center", median_us("f(b)", 100_000, f=bbox_center, b=box)),
        ("validate_bbox", median_us("f(b, s)", 100_000, f=validate_bbox, b=box, s=size)),
    ]
    batch = median_us("[f(b, s) for b in bs]", 10_000, f=to_pixels, bs=boxes, s=size)
    print(f"{'operation':40} {'median':>10}")
    for name, us in rows:
        print(f"{name:40} {us:8.3f} µs")
    print(f"{'20 conversions (one model reply)':40} {batch:8.3f} µs")
    one = rows[0][1]
    ok_one, ok_batch = one < 1.0, batch < 20.0
    print(f"\none conversion < 1 µs: {'yes' if ok_one else 'NO'} ({one:.3f} µs, {1.0 / one:.2f}x headroom)")
    print(f"20 conversions < 20 µs: {'yes' if ok_batch else 'NO'} ({batch:.3f} µs, {20.0 / batch:.2f}x headroom)")
    return 0 if ok_one and ok_batch else 1


if __name__ == "__main__":
    sys.exit(main())
