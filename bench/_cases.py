"""Benchmark cases from ../shared/data/real-dev: templates cropped from real screenshots.

Kept apart from locate_bench.py so the Airtest worker (another interpreter) can
build exactly the same cases from the same seed.
"""

from __future__ import annotations

import csv
import io
import random
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageEnhance

CONDITIONS = ("same", "x0.75", "x1.33", "x0.5", "jpeg70+bright", "negative")
SCALES = {"same": 1.0, "x0.75": 0.75, "x1.33": 1.33, "x0.5": 0.5, "jpeg70+bright": 1.0, "negative": 1.0}
MIN_SIDE, MAX_SIDE = 32, 400


@dataclass
class Pair:
    folder: str
    image_path: Path
    xml_path: Path
    package: str


@dataclass
class Case:
    pair: int            # index of the screenshot's pair
    condition: str
    tpl_box: tuple[int, int, int, int]    # where the template was cropped (in its own pair)
    tpl_pair: int
    expected: tuple[int, int, int, int] | None   # box on the conditioned screen, None for negatives


def load_pairs(data: Path) -> list[Pair]:
    rows = list(csv.DictReader((data / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))
    pairs = []
    for r in rows:
        xml = (data / r["xml_path"]).read_text(encoding="utf-8", errors="replace")
        pkg = ""
        i = xml.find('package="')
        if i >= 0:
            pkg = xml[i + 9: xml.find('"', i + 9)]
        pairs.append(Pair(r["source_dir"], data / r["image_path"], data / r["xml_path"], pkg))
    return pairs


def clickable_boxes(xml_text: str, size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    start = xml_text.find("<hierarchy")
    end = xml_text.rfind("</hierarchy>")
    root = ET.fromstring(xml_text[start:end + 12])
    out = []
    W, H = size
    for n in root.iter("node"):
        if n.get("clickable") != "true":
            continue
        b = n.get("bounds", "").replace("][", ",").strip("[]").split(",")
        try:
            x1, y1, x2, y2 = (int(v) for v in b)
        except ValueError:
            continue
        w, h = x2 - x1, y2 - y1
        if MIN_SIDE <= w <= MAX_SIDE and MIN_SIDE <= h <= MAX_SIDE and x1 >= 0 and y1 >= 0 and x2 <= W and y2 <= H:
            out.append((x1, y1, x2, y2))
    return sorted(set(out))


def condition_screen(img: Image.Image, condition: str) -> Image.Image:
    if condition in ("x0.75", "x1.33", "x0.5"):
        s = SCALES[condition]
        return img.resize((round(img.width * s), round(img.height * s)), Image.Resampling.LANCZOS)
    if condition == "jpeg70+bright":
        bright = ImageEnhance.Brightness(img).enhance(1.12)
        buf = io.BytesIO()
        bright.save(buf, "JPEG", quality=70)
        return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return img


def build_cases(pairs: list[Pair], per_screen: int, seed: int = 7, limit: int | None = None,
                low_info=None) -> tuple[list[Case], dict[str, int]]:
    """Positives (every condition) and one negative per positive template, from another app's screen."""
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    if limit:
        order = order[:limit]
    cases: list[Case] = []
    skipped = {"low_info": 0, "duplicate": 0}
    for pi in order:
        p = pairs[pi]
        img = Image.open(p.image_path).convert("RGB")
        boxes = clickable_boxes(p.xml_path.read_text(encoding="utf-8", errors="replace"), img.size)
        rng.shuffle(boxes)
        taken = 0
        arr = np.asarray(img)
        for box in boxes:
            if taken >= per_screen:
                break
            crop = arr[box[1]:box[3], box[0]:box[2]]
            if low_info is not None and low_info(crop):
                skipped["low_info"] += 1
                continue
            taken += 1
            for cond in CONDITIONS[:-1]:
                s = SCALES[cond]
                exp = tuple(round(v * s) for v in box)
                cases.append(Case(pi, cond, box, pi, exp))
            others = [j for j in range(len(pairs)) if pairs[j].folder != p.folder and pairs[j].package != p.package]
            cases.append(Case(rng.choice(others), "negative", box, pi, None))
    return cases, skipped
