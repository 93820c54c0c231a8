"""Reading an image file named by a user, with a ceiling on what it may cost.

The header is read first (Pillow opens lazily) and anything over ``MAX_SIDE`` on
a side or ``MAX_PIXELS`` in all is refused before a byte of pixels is decoded: a
458-byte PNG can claim 65000x2 pixels, a 20000x20000 one 1.6 GB of memory. The
largest phone screens are about 1440x3200 (4.6 MP); tablets and foldables stay
well under the ceiling.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from remote.errors import BadInput

MAX_SIDE = 10_000
MAX_PIXELS = 40_000_000


def check_size(size: tuple[int, int], what: str = "image") -> None:
    width, height = size
    if width < 1 or height < 1 or max(width, height) > MAX_SIDE or width * height > MAX_PIXELS:
        raise BadInput(f"{what} is {width}x{height} pixels: larger than this tool reads "
                       f"(at most {MAX_SIDE} on a side and {MAX_PIXELS // 1_000_000} million pixels)")


def open_image(path: str | Path, what: str = "image") -> Image.Image:
    """The image as RGB; BadInput when it is missing, not an image, or too large to decode safely."""
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"{what} not found: {path}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(p) as img:
                check_size(img.size, f"{what} {p.name}")
                return img.convert("RGB")
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise BadInput(f"{what} {p.name} is larger than this tool reads (at most {MAX_PIXELS // 1_000_000} "
                       "million pixels)") from exc
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as exc:
        raise BadInput(f"{what} is not a readable image: {path} ({type(exc).__name__})") from exc
