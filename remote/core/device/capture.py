"""Screen-capture decoding: raw ``screencap`` frames and uniform-frame detection (pure functions).

A raw frame is ``u32 width, u32 height, u32 format`` (little-endian), on newer
Android a ``u32 colorspace``, then ``height`` rows of ``width * bpp`` bytes. The
header is 12 or 16 bytes depending on the Android version, so it is derived from
the length: ``header = len(data) - w * h * bpp``.
"""

from __future__ import annotations

import io
import struct

import numpy as np
from PIL import Image, UnidentifiedImageError

# screencap pixel formats (android PixelFormat) -> (bytes per pixel, PIL raw mode)
RAW_FORMATS: dict[int, tuple[int, str]] = {
    1: (4, "RGBA"),   # RGBA_8888
    2: (4, "RGBX"),   # RGBX_8888
    3: (3, "RGB"),    # RGB_888
    4: (2, "BGR;16"),  # RGB_565
    5: (4, "BGRA"),   # BGRA_8888
}


class CaptureDecodeError(ValueError):
    """The bytes are not a frame we can decode (the message says why, for the device error)."""


def decode_raw(data: bytes | bytearray | memoryview) -> Image.Image:
    """Decode a raw ``screencap`` frame into an RGB image.

    >>> import struct
    >>> frame = struct.pack("<4I", 2, 1, 1, 1) + bytes([255, 0, 0, 255, 0, 255, 0, 255])
    >>> decode_raw(frame).getpixel((1, 0))
    (0, 255, 0)
    """
    if len(data) < 12:
        raise CaptureDecodeError(f"raw frame too short ({len(data)} bytes)")
    width, height, fmt = struct.unpack_from("<3I", data, 0)
    if fmt not in RAW_FORMATS:
        raise CaptureDecodeError(f"unsupported raw pixel format {fmt}")
    bpp, mode = RAW_FORMATS[fmt]
    if not (0 < width <= 16384 and 0 < height <= 16384):
        raise CaptureDecodeError(f"implausible frame size {width}x{height}")
    header = len(data) - width * height * bpp
    if header not in (12, 16):
        raise CaptureDecodeError(f"raw frame of {len(data)} bytes does not fit {width}x{height}x{bpp} "
                                 f"(header would be {header} bytes)")
    pixels = memoryview(data)[header:]
    if mode == "RGB":
        return Image.frombuffer("RGB", (width, height), pixels, "raw", "RGB", 0, 1).copy()  # type: ignore[arg-type]
    if mode == "BGR;16":
        return Image.frombuffer("RGB", (width, height), bytes(pixels), "raw", "BGR;16", 0, 1)
    # Drop alpha straight from the RGBA buffer: one numpy copy, no PIL convert pass.
    arr = np.frombuffer(pixels, dtype=np.uint8).reshape(height, width, 4)
    if mode == "BGRA":
        arr = arr[:, :, 2::-1]
    else:
        arr = arr[:, :, :3]
    return Image.fromarray(np.ascontiguousarray(arr), "RGB")


def decode_png(data: bytes) -> Image.Image:
    """Decode ``screencap -p`` output; errors become `CaptureDecodeError` (never a black image)."""
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        head = bytes(data[:60]).decode("utf-8", errors="replace").strip()
        raise CaptureDecodeError(f"screencap -p did not return a PNG ({head!r})") from exc
    return img.convert("RGB")


def frame_uniformity(img: Image.Image) -> tuple[bool, tuple[int, int, int]]:
    """(is the frame a single flat colour, that colour). Sampled on a reduced copy: ~1 ms at 1080x2400."""
    small = img.reduce(8) if min(img.size) >= 64 else img
    arr = np.asarray(small.convert("RGB"), dtype=np.int16)
    lo = arr.reshape(-1, 3).min(axis=0)
    hi = arr.reshape(-1, 3).max(axis=0)
    flat = bool((hi - lo).max() <= 3)
    mean = tuple(int(v) for v in arr.reshape(-1, 3).mean(axis=0))
    return flat, mean  # type: ignore[return-value]
