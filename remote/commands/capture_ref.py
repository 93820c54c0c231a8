"""`remote capture-ref NAME --module M (--bbox x1,y1,x2,y2 | --text 文本)`: crop a reference image from the
live screen into the module's images/ folder (the screen size is stored with it, for the locator's scale prior)."""

from __future__ import annotations

import argparse
import re

import numpy as np
from PIL import PngImagePlugin

from remote.apps import APPS_DIR
from remote.commands._device import open_device
from remote.core.locate.assets import SOURCE_SIZE_KEY
from remote.core.locate.ui_tree import parse_hierarchy
from remote.errors import BadInput, ConfigError, LocateError

NAME = re.compile(r"[\w-]{1,64}")


def parse_bbox(text: str, size: tuple[int, int]) -> tuple[int, int, int, int]:
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


def run(args: argparse.Namespace) -> int:
    if not NAME.fullmatch(args.name) or args.name.startswith("-"):
        raise BadInput(f"reference name {args.name[:40]!r} must be a plain name: letters, digits, _ and -",
                       hint="it becomes images/NAME.png; no folders, no dots")
    module_dir = APPS_DIR / args.module
    if not NAME.fullmatch(args.module) or not (module_dir / "config.yaml").is_file():
        raise ConfigError(f"no module {args.module!r} in {APPS_DIR}",
                          hint=f"create {module_dir}/config.yaml first (docs/modules.md: \"A new module\")")
    with open_device(args) as (adb, _sim):
        image = adb.screenshot()
        if args.text:
            tree = parse_hierarchy(adb.dump_hierarchy(), image.size)
            nodes = tree.find_by_text(args.text, exact=True) or tree.find_by_text(args.text)
            if not nodes:
                raise LocateError(f"no element with text {args.text!r} on the screen", target_ref=f"text:{args.text}")
            box = nodes[0].bounds
        else:
            box = parse_bbox(args.bbox, image.size)
        crop = image.crop(box)
    images = module_dir / "images"
    images.mkdir(exist_ok=True)
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
    print(f"saved {crop.width}x{crop.height} reference {path.name} to {images} (from a {image.width}x{image.height} screen)")
    print("add Chinese names for it in images/aliases.yaml, then run: python -m remote modules check")
    return 0
