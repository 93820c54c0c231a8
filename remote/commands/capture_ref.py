"""`remote capture-ref NAME --module M (--bbox x1,y1,x2,y2 | --text 文本)`: crop a reference image from the
live screen into the module's images/ folder (the screen size is stored with it, for the locator's scale prior).

``--text`` crops what an author wants a reference of: an icon node that carries the text (MIUI's launcher
describes its ImageView with the app's name) when there is one; else, for a view that draws an icon above its
label (a launcher item: Launcher3's icon is one TextView, icon and label together), the icon above the label;
else the element itself. It says which it chose. A capture that is the same image as a saved variant is not
saved again.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
from PIL import Image, PngImagePlugin

from remote.commands._device import open_device
from remote.commands._modules import module_folder
from remote.core.imagefile import open_image
from remote.core.locate.assets import SOURCE_SIZE_KEY
from remote.core.locate.ui_tree import UINode, parse_hierarchy
from remote.errors import BadInput, ConfigError, LocateError

NAME = re.compile(r"[\w-]{1,64}")
Box = tuple[int, int, int, int]
INK = 48               # a channel this far from the element's background colour is drawn, not background
SAME_IMAGE = 2.0       # mean difference (0-255) under which two crops are the same image


def parse_bbox(text: str, size: tuple[int, int]) -> Box:
    """``"10,20,110,220"`` -> a box that lies on a ``size`` screen; BadInput saying what is wrong otherwise."""
    try:
        x1, y1, x2, y2 = (int(v) for v in text.split(","))
    except ValueError as exc:
        raise BadInput(f"--bbox must be four whole numbers x1,y1,x2,y2, not {text[:40]!r}") from exc
    width, height = size
    if x2 <= x1 or y2 <= y1:
        raise BadInput(f"--bbox {text}: x2 must be greater than x1 and y2 greater than y1 (left,top,right,bottom)")
    if x1 < 0 or y1 < 0 or x2 > width or y2 > height:
        raise BadInput(f"--bbox {text} reaches outside the {width}x{height} screen",
                       hint="take the box from `remote screenshot` of this phone")
    return x1, y1, x2, y2


def _bands(rows: np.ndarray, gap: int = 2) -> list[tuple[int, int]]:
    """Runs of True in ``rows`` as (first, last + 1), runs at most ``gap`` apart joined."""
    out: list[tuple[int, int]] = []
    for i in np.flatnonzero(rows):
        if out and i - out[-1][1] <= gap:
            out[-1] = (out[-1][0], int(i) + 1)
        else:
            out.append((int(i), int(i) + 1))
    return out


def icon_above_label(image: Image.Image, box: Box) -> Box | None:
    """The icon's box when the element at ``box`` draws an icon above a shorter label (a launcher item), else
    None. Decided on pixels: what differs from the element's background (its edge's median colour), in bands
    of rows; the icon is the top band, at least 1.5 times as tall as each band under it and about square."""
    x1, y1, x2, y2 = box
    px = np.asarray(image.convert("RGB").crop(box), dtype=np.int16)
    if px.shape[0] < 24 or px.shape[1] < 24:
        return None
    edge = np.concatenate([px[0], px[-1], px[:, 0], px[:, -1]])
    ink = np.abs(px - np.median(edge, axis=0)).max(axis=2) > INK
    bands = _bands(ink.mean(axis=1) > 0.02)
    if len(bands) < 2 or any((b[1] - b[0]) * 1.5 > bands[0][1] - bands[0][0] for b in bands[1:]):
        return None
    top, bottom = bands[0]
    cols = np.flatnonzero(ink[top:bottom].any(axis=0))
    left, right = int(cols[0]), int(cols[-1]) + 1
    if not 0.6 <= (right - left) / (bottom - top) <= 1.6:
        return None
    return x1 + left, y1 + top, x1 + right, y1 + bottom


def element_box(image: Image.Image, xml: str, text: str) -> tuple[Box, str]:
    """The box to crop for ``--text`` and what it is (for the author)."""
    tree = parse_hierarchy(xml, image.size)
    nodes = tree.find_by_text(text, exact=True) or tree.find_by_text(text)
    if not nodes:
        raise LocateError(f"no element with text {text!r} on the screen", target_ref=f"text:{text}")
    icons = [n for n in nodes if _is_image(n)]
    if icons:
        return icons[0].bounds, f"the icon described {text!r} ({icons[0].class_name.rsplit('.', 1)[-1]})"
    icon = icon_above_label(image, nodes[0].bounds)
    if icon is not None:
        return icon, f"the icon above the label {text!r} (a launcher item: the element {list(nodes[0].bounds)} " \
                     "draws both; use --bbox for the whole element)"
    return nodes[0].bounds, f"the element showing {text!r}"


def _is_image(node: UINode) -> bool:
    return node.class_name.rsplit(".", 1)[-1] in ("ImageView", "ImageButton")


def same_as_saved(crop: Image.Image, images: Path, name: str) -> Path | None:
    """A saved variant of ``name`` that is the same image as ``crop`` (same size, pixels all but equal)."""
    mine = np.asarray(crop.convert("RGB"), dtype=np.float32)
    for path in sorted(images.glob(f"{name}.png")) + sorted(images.glob(f"{name}_v*.png")):
        try:
            saved = np.asarray(open_image(path, "reference image"), dtype=np.float32)
        except BadInput:
            continue
        if saved.shape == mine.shape and float(np.abs(saved - mine).mean()) < SAME_IMAGE:
            return path
    return None


def run(args: argparse.Namespace) -> int:
    if not NAME.fullmatch(args.name) or args.name.startswith("-"):
        raise BadInput(f"reference name {args.name[:40]!r} must be a plain name: letters, digits, _ and -",
                       hint="it becomes images/NAME.png; no folders, no dots")
    if not NAME.fullmatch(args.module):
        raise ConfigError(f"no module {args.module[:40]!r}", hint="a module's name: letters, digits, _ and -")
    module_dir = module_folder(args.module)
    with open_device(args) as (adb, _sim):
        image = adb.screenshot()
        if args.text:
            box, what = element_box(image, adb.dump_hierarchy(), args.text)
        else:
            box, what = parse_bbox(args.bbox, image.size), "the box given"
        crop = image.crop(box)
    images = module_dir / "images"
    images.mkdir(exist_ok=True)
    same = same_as_saved(crop, images, args.name)
    if same is not None:
        print(f"{what}: the same image as {same} (captured before): kept that one, saved nothing")
        return 0
    path = images / f"{args.name}.png"
    n = 2
    while path.exists():  # never overwrite: a new capture becomes the next variant
        path = images / f"{args.name}_v{n}.png"
        n += 1
    info = PngImagePlugin.PngInfo()
    info.add_text(SOURCE_SIZE_KEY, f"{image.width}x{image.height}")  # lets the locator prefer scale 1 there
    crop.save(path, pnginfo=info)
    if float(np.asarray(crop.convert("L"), dtype=np.float32).std()) < 8:
        print("warning: this crop is nearly flat; it will match many places. Crop the icon's distinctive part.")
    print(f"cropped {what}: {list(box)}")
    print(f"saved {crop.width}x{crop.height} reference {path.name} to {images} (from a {image.width}x{image.height} screen)")
    print("add Chinese names for it in images/aliases.yaml, then run: python -m remote modules check")
    return 0
