"""Screen-capture decoding (pure functions): raw ``screencap`` frames and PNGs, straight to the BGR array.

A raw frame is ``u32 width, u32 height, u32 format`` (little-endian), on newer
Android a ``u32 colorspace``, then ``height`` rows of ``width * bpp`` bytes. The
header is 12 or 16 bytes depending on the Android version, so it is derived from
the length: ``header = len(data) - w * h * bpp``.

Frames are decoded once, into the BGR ``ndarray`` the locator works on; a PIL
image is made from it only when someone asks (``decode_raw``/``decode_png``).
On a phone with two displays, ``screencap`` without ``-d`` writes a warning
before the image (R5); `strip_warnings` takes it off (the capture itself picks
the display, `remote.core.device.frames`).
"""

from __future__ import annotations

import struct
from functools import cache
from typing import TYPE_CHECKING

from remote.errors import DeviceCommandError, SecureScreen

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

# OpenCV, numpy and Pillow are imported where a frame is first decoded, not with this module: `remote run` opens
# the phone's link and starts the tree server before them (docs/devices.md "From the command to its exit").


@cache
def raw_formats() -> dict[int, tuple[int, int]]:
    """screencap pixel formats (android PixelFormat) -> (bytes per pixel, cv2 conversion to BGR)."""
    import cv2

    return {
        1: (4, cv2.COLOR_RGBA2BGR),   # RGBA_8888
        2: (4, cv2.COLOR_RGBA2BGR),   # RGBX_8888
        3: (3, cv2.COLOR_RGB2BGR),    # RGB_888
        4: (2, cv2.COLOR_BGR5652BGR),  # RGB_565
        5: (4, cv2.COLOR_BGRA2BGR),   # BGRA_8888
    }

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Lines some phones print before the image (R5's display warning; linker noise on some ROMs).
_NOISE = (b"[Warning] Multiple displays", b"A display ID can be specified", b"A display id should be specified",
          b'See "dumpsys SurfaceFlinger', b"WARNING: linker:")


class CaptureDecodeError(DeviceCommandError, ValueError):
    """The bytes ``screencap`` answered are not a frame we can decode (the message says why)."""


def strip_warnings(data: bytes | bytearray) -> tuple[bytes | bytearray, str]:
    """(the image bytes, the warning lines taken off their front).

    >>> strip_warnings(b"[Warning] Multiple displays were found\\n" + PNG_MAGIC)[1]
    '[Warning] Multiple displays were found'
    """
    removed: list[bytes] = []
    view = data
    while any(bytes(view[: len(n)]) == n for n in _NOISE):
        end = bytes(view[:4096]).find(b"\n")
        if end < 0:
            break
        removed.append(bytes(view[:end]))
        view = view[end + 1:]
    return view, "\n".join(r.decode("utf-8", "replace") for r in removed)


def raw_to_bgr(data: bytes | bytearray | memoryview) -> np.ndarray:
    """Decode a raw ``screencap`` frame into a BGR array (one conversion pass).

    >>> frame = struct.pack("<4I", 2, 1, 1, 1) + bytes([255, 0, 0, 255, 0, 255, 0, 255])
    >>> raw_to_bgr(frame)[0, 0].tolist()
    [0, 0, 255]
    """
    import cv2
    import numpy as np

    if len(data) < 12:
        raise CaptureDecodeError(f"raw frame too short ({len(data)} bytes)")
    width, height, fmt = struct.unpack_from("<3I", data, 0)
    if fmt not in raw_formats():
        raise CaptureDecodeError(f"unsupported raw pixel format {fmt}")
    bpp, conversion = raw_formats()[fmt]
    if not (0 < width <= 16384 and 0 < height <= 16384):
        raise CaptureDecodeError(f"implausible frame size {width}x{height}")
    header = len(data) - width * height * bpp
    if header not in (12, 16):
        raise CaptureDecodeError(f"raw frame of {len(data)} bytes does not fit {width}x{height}x{bpp} "
                                 f"(header would be {header} bytes)")
    pixels = np.frombuffer(memoryview(data)[header:], dtype=np.uint8)
    if bpp == 2:
        return np.asarray(cv2.cvtColor(pixels.reshape(height, width, 2), conversion))
    return np.asarray(cv2.cvtColor(pixels.reshape(height, width, bpp), conversion))


def png_to_bgr(data: bytes | bytearray) -> np.ndarray:
    """Decode ``screencap -p`` output into a BGR array; anything else is `CaptureDecodeError` (never black)."""
    import cv2
    import numpy as np

    arr = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR) if len(data) else None
    if arr is None or bytes(data[:8]) != PNG_MAGIC:
        head = bytes(data[:60]).decode("utf-8", errors="replace").strip()
        raise CaptureDecodeError(f"screencap -p did not return a PNG ({head!r})")
    return np.asarray(arr)


def jpeg_to_bgr(data: bytes) -> np.ndarray:
    """Decode a JPEG (the tree server's screenshot) into a BGR array; anything else is `CaptureDecodeError`."""
    import cv2
    import numpy as np

    arr = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR) if data[:2] == b"\xff\xd8" else None
    if arr is None:
        raise CaptureDecodeError("the tree server's screenshot is not a JPEG")
    return np.asarray(arr)


def to_pil(bgr: np.ndarray) -> Image.Image:
    """The RGB PIL image of a BGR array (one cv2 pass; a strided numpy flip is three times slower)."""
    import cv2
    from PIL import Image

    return Image.fromarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), "RGB")


def decode_raw(data: bytes | bytearray | memoryview) -> Image.Image:
    """A raw frame as an RGB PIL image (for callers that want PIL; the runner keeps the array)."""
    return to_pil(raw_to_bgr(data))


def decode_png(data: bytes) -> Image.Image:
    """``screencap -p`` output as an RGB PIL image."""
    return to_pil(png_to_bgr(data))


def _array(image: Image.Image | np.ndarray) -> np.ndarray:
    import numpy as np

    return image if isinstance(image, np.ndarray) else np.asarray(image.convert("RGB"))[:, :, ::-1]


def frame_uniformity(img: Image.Image | np.ndarray) -> tuple[bool, tuple[int, int, int]]:
    """(is the frame a single flat colour, that colour as RGB). Sampled every 8th pixel: ~1 ms at 1080x2400."""
    import numpy as np

    arr = _array(img)
    small = arr[::8, ::8] if min(arr.shape[:2]) >= 64 else arr
    flat_px = small.reshape(-1, 3).astype(np.int16)
    flat = bool((flat_px.max(axis=0) - flat_px.min(axis=0)).max() <= 3)
    b, g, r = (int(v) for v in flat_px.mean(axis=0))
    return flat, (r, g, b)


def secure_app_area(img: Image.Image | np.ndarray, margin: float = 0.06) -> bool:
    """True when the app's area is black while the bars above and below may show (R8: a FLAG_SECURE layer
    blacks out only itself; the status bar stays). ``margin``: the share of the height kept for each bar."""
    arr = _array(img)
    h = arr.shape[0]
    area = arr[int(h * margin): h - int(h * margin): 8, ::8]
    return area.size > 0 and int(area.max()) < 16


def refuse_unusable(bgr: np.ndarray, serial: str) -> None:
    """`SecureScreen` for a frame that shows nothing of the app: one flat colour (a secure window, or a failed
    capture), or black under the status bar (a FLAG_SECURE layer, R8). The UI tree still works there."""
    flat, colour = frame_uniformity(bgr)
    if flat:
        what = "black" if max(colour) < 16 else f"a single colour {colour}"
        raise SecureScreen(f"the screenshot is {what}: a secure window (FLAG_SECURE) or a failed capture",
                           serial=serial,
                           hint="the UI tree still works on secure screens; if every app is black, "
                                "the capture itself fails: unlock the phone and retry")
    if secure_app_area(bgr):
        raise SecureScreen("the app's area is black under the status bar: a secure layer (FLAG_SECURE)",
                           serial=serial, hint="the UI tree still works on secure screens")
