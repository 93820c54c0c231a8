"""`remote capture-ref NAME --module M (--bbox x1,y1,x2,y2 | --text 文本)`: crop a reference image from the live screen."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import PngImagePlugin

from remote.apps import APPS_DIR
from remote.commands._device import open_device
from remote.core.coords import validate_bbox
from remote.core.locate.assets import SOURCE_SIZE_KEY
from remote.core.locate.ui_tree import parse_hierarchy
from remote.errors import ConfigError, LocateError


def run(args: Any) -> int:
    module_dir = APPS_DIR / args.module
    if not (module_dir / "config.yaml").is_file():
        raise ConfigError(f"no module {args.module!r} in {APPS_DIR}", hint="see `python -m remote modules`")
    with open_device(args) as (adb, _sim):
        image = adb.screenshot()
        if args.text:
            tree = parse_hierarchy(adb.dump_hierarchy(), image.size)
            nodes = tree.find_by_text(args.text)
            if not nodes:
                raise LocateError(f"no element with text {args.text!r} on the screen", target_ref=f"text:{args.text}")
            box = nodes[0].bounds
        else:
            try:
                box = tuple(int(v) for v in args.bbox.split(","))
            except ValueError as exc:
                raise ConfigError(f"--bbox must be x1,y1,x2,y2, not {args.bbox!r}") from exc
        verdict = validate_bbox(box, image.size)
        if len(box) != 4 or not verdict["valid"]:
            raise ConfigError(f"box {box} is not on the {image.width}x{image.height} screen")
        x1, y1, x2, y2 = box
        crop = image.crop((max(0, x1), max(0, y1), min(image.width, x2), min(image.height, y2)))
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
