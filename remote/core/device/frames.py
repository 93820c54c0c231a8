"""Getting frames off the phone: which display, which wire format (measured once per session), decoded once.

* The display (R5): on a phone with two displays, the default display's physical
  id (`screen_state.default_display`) goes to ``screencap -d``; a warning that
  still arrives is taken off (`capture.strip_warnings`).
* The wire format (R10): a raw frame is 4 bytes a pixel with no work on the phone;
  a PNG is small but the phone encodes it (~0.45 s at 1080x2400, §4.3). The first
  megabyte of the session's first raw frame is read and timed (the link's speed);
  when a whole raw frame then costs less than a typical PNG, raw it is (USB, ~38
  MB/s: 0.3 s); else a PNG is taken, timed, and the cheaper of the two kept for
  the session (Wi-Fi, 0.1-5 MB/s: 10 MB of raw pixels would take seconds). A
  format that fails to decode gives way to the other.
* The tree server's screenshot (`tree_server.TreeServer.shot`: UiAutomation's picture as a JPEG, no new
  process, 0.1-0.3 MB on the wire): once the server serves, one is taken and timed against the screencap
  wire measured before; the cheaper serves the rest of the session (docs/devices.md "Frames and taps").
  A shot the server cannot give (it stopped, it answered none) is taken by screencap. Not on a phone
  whose display is chosen by id (the server captures the default display only).
* Ahead of the first frame (`FrameGrabber.warm`, beside a run's first step and the server's start): the
  display is read and the link timed on a raw frame's first megabyte, so the first frame waits for neither;
  that frame, the server's first screenshot, is timed as it is taken.
* Decoding (item 6 of issue 25): straight into the BGR ``ndarray`` the locator
  works on; PIL only on demand.
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from remote.core.device.capture import CaptureDecodeError, jpeg_to_bgr, png_to_bgr, raw_to_bgr, strip_warnings
from remote.errors import DeviceCommandError, DeviceError

if TYPE_CHECKING:   # the image libraries load when a frame is first decoded, not with the phone's link
    import numpy as np

logger = logging.getLogger(__name__)
PROBE_BYTES = 1 << 20          # the part of a raw frame read to time the link
PNG_TYPICAL_S = 0.45           # `screencap -p` of a 1080x2400 screen (docs/adb.md#screenshots-what-they-cost: midscene PR #1842)


class Link(Protocol):
    serial: str

    def service(self, service: str, timeout: float | None = None) -> bytearray: ...

    def probe(self, service: str, nbytes: int, *, retry: bool = True) -> tuple[bytes, float, float | None]: ...


@dataclass
class LinkReport:
    """What one screenshot costs on this connection, and the format chosen for the session."""

    wire: str = ""                    # "raw" or "png"
    png_s: float | None = None        # one PNG capture, measured
    raw_s: float | None = None        # one raw capture, estimated from the link's speed (or measured)
    mb_s: float | None = None         # device -> host speed, MB/s
    frame_bytes: int = 0              # a raw frame's size
    png_bytes: int = 0
    display: str | None = None        # the physical display id given to `screencap -d` (None: one display)
    warnings: str = ""                # warning text the phone printed before an image
    grabs: int = 0                    # frames taken this session
    grab_s: float = 0.0               # and the seconds they took (capture, transfer, decode)
    shot_s: float | None = None       # the tree server's screenshot, measured (None: not tried)
    server_shots: bool | None = None  # the server's screenshots serve (None: not decided yet)
    shots: int = 0                    # frames the server gave

    def to_dict(self) -> dict[str, object]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


class FrameGrabber:
    """``FrameGrabber(link, display=lambda: None).grab() -> BGR ndarray``; ``report`` says what it chose."""

    def __init__(self, link: Link, display: Callable[[], str | None], *,
                 clock: Callable[[], float] = time.perf_counter,
                 shot: Callable[[], bytes | None] | None = None,
                 shot_ready: Callable[[], None] = lambda: None) -> None:
        self.link = link
        self.display = display
        self.clock = clock
        self.shot = shot          # the tree server's screenshot (JPEG), None when it does not serve now
        self.shot_ready = shot_ready   # waits for a server still starting (not part of a shot's cost)
        self.report = LinkReport()
        self._display_read = False
        self._transfer_s: float | None = None   # a whole raw frame's transfer, from the timed first megabyte
        self._lock = threading.Lock()            # one frame or timing at a time (`warm` runs beside the run)

    @property
    def display_read(self) -> bool:
        """Which display screencap shows is known (read with the session's first frame or `warm`)."""
        return self._display_read

    def warm(self) -> None:
        """Read the display and time the link now, on a thread of its own, beside the server's start and the
        launch's wait, so the session's first frame waits only for what is left of it (`grab` takes the lock it
        holds); a failure is met again by that frame. The server's screenshot is not timed here: the first frame
        it serves is timed (it costs nothing more), against the link timed here. Timed once the server answered,
        the link's raw frame had come after the launch's wait, on the first step's critical path."""
        def time_link() -> None:
            with self._lock:
                try:
                    if self._transfer_s is None and not self.report.wire:
                        self._timed_link(retry=False)   # one try: the first frame times it again
                except (DeviceError, OSError) as exc:   # the first frame meets it again, and says it
                    logger.info("frames not timed ahead: %s", exc)

        threading.Thread(target=time_link, name="frames-warm", daemon=True).start()

    def _command(self, png: bool) -> str:
        if not self._display_read:
            self.report.display = self.display()
            self._display_read = True
        parts = ["screencap"]
        if self.report.display:
            parts += ["-d", self.report.display]
        if png:
            parts.append("-p")
        return "exec:" + " ".join(parts)

    def grab(self) -> np.ndarray:
        """One frame, in the session's wire format (chosen on the first call)."""
        with self._lock:
            return self._grab_timed()

    def _grab_timed(self) -> np.ndarray:
        started = self.clock()
        try:
            served = self._served()
            return served if served is not None else self._grab()
        finally:
            self.report.grabs += 1
            self.report.grab_s += self.clock() - started

    def _served(self) -> np.ndarray | None:
        """A frame from the tree server, when its screenshots are the cheaper (its first one timed against what
        screencap costs on this link); None: screencap takes this one."""
        frame = self._shot()
        if frame is not None:
            self.report.shots += 1
        return frame

    def _shot(self) -> np.ndarray | None:
        """The server's screenshot, the session's first one timed and the choice made; None: screencap."""
        report = self.report
        if self.shot is None or report.server_shots is False or report.display:
            return None
        self.shot_ready()
        started = self.clock()
        data = self.shot()
        if data is None:
            return None
        try:
            frame = jpeg_to_bgr(data)
        except CaptureDecodeError as exc:
            logger.info("%s; screencap serves", exc)
            report.server_shots = False
            return None
        if report.server_shots is None:
            report.shot_s = self.clock() - started
            if not report.wire and self._transfer_s is None:
                self._timed_link()            # also reads which display screencap shows
            if report.display:                # the server captures the default display only
                report.server_shots = False
                return None
            screencap_s = self._screencap_s()
            report.server_shots = screencap_s is None or report.shot_s < screencap_s
            logger.info("screenshots: %s (tree server %.3f s, screencap %s s)",
                        "tree server" if report.server_shots else "screencap", report.shot_s,
                        f"{screencap_s:.3f}" if screencap_s is not None else "?")
        return frame

    def _timed_link(self, *, retry: bool = True) -> bool:
        """Before the session's first frame: what screencap would cost, from a raw frame's first megabyte (the
        whole frame is not read: the server may serve it for less). False when the phone gives no raw frame."""
        try:
            self._time_raw(retry=retry)
        except (DeviceCommandError, CaptureDecodeError, struct.error) as exc:
            logger.info("raw screencap not timed (%s)", exc)
            return False
        return True

    def _screencap_s(self) -> float | None:
        """One screencap on this link: the wire's measured cost, or (no wire yet) a raw frame's estimate when it
        moves faster than a phone encodes a PNG, else that PNG's typical cost."""
        report = self.report
        if report.wire:
            return report.raw_s if report.wire == "raw" else report.png_s
        if report.raw_s is None:
            return None
        return min(report.raw_s, PNG_TYPICAL_S)

    def _grab(self) -> np.ndarray:
        if not self.report.wire:
            return self._first()
        first, second = ("raw", "png") if self.report.wire == "raw" else ("png", "raw")
        try:
            return self._decode(first)
        except CaptureDecodeError as exc:
            logger.info("%s screencap unusable (%s); trying %s", first, exc, second)
            try:
                return self._decode(second)
            except CaptureDecodeError as exc2:
                raise DeviceCommandError(f"screen capture failed: {exc2}", command="screencap",
                                         serial=self.link.serial) from exc2

    def _decode(self, wire: str) -> np.ndarray:
        data, warning = strip_warnings(self.link.service(self._command(wire == "png")))
        if warning:
            self.report.warnings = warning
        return png_to_bgr(data) if wire == "png" else raw_to_bgr(data)

    def _first(self) -> np.ndarray:
        """The session's first frame, and the format for the rest: raw when the link moves a raw frame in
        less than a phone takes to encode a PNG (`PNG_TYPICAL_S`), else the cheaper of the two, measured."""
        report = self.report
        frame: np.ndarray | None = None
        try:
            frame = self._probe_raw()
        except (DeviceCommandError, CaptureDecodeError, struct.error) as exc:
            logger.info("raw screencap unusable (%s); using PNG", exc)
        if frame is not None:
            report.wire = "raw"
            return frame
        started = self.clock()
        try:
            data, warning = strip_warnings(self.link.service(self._command(True)))
            frame = png_to_bgr(data)
        except CaptureDecodeError as exc:
            logger.info("PNG screencap unusable (%s); using raw frames", exc)
            report.wire = "raw"
            return self._grab()
        report.png_s, report.png_bytes = self.clock() - started, len(data)
        report.warnings = warning or report.warnings
        report.wire = "raw" if report.raw_s is not None and report.raw_s < report.png_s else "png"
        logger.info("screenshots over this link: %s (png %.3f s, raw ~%s s, %s MB/s)", report.wire, report.png_s,
                    f"{report.raw_s:.3f}" if report.raw_s is not None else "?",
                    f"{report.mb_s:.1f}" if report.mb_s else "?")
        return frame

    def _probe_raw(self) -> np.ndarray | None:
        """Read a raw frame's first `PROBE_BYTES`, timing the link; the whole frame when it is cheap enough."""
        started = self.clock()
        transfer_s = self._transfer_s if self._transfer_s is not None else self._time_raw()
        if transfer_s > PNG_TYPICAL_S:   # moving the pixels costs more than a phone encoding a PNG
            return None
        frame = self._decode("raw")     # cheap on this link: take a whole one now
        self.report.raw_s = self.clock() - started
        return frame

    def _time_raw(self, *, retry: bool = True) -> float:
        """Time the link on a raw frame's first `PROBE_BYTES`: a whole raw frame's transfer time (``raw_s``, the
        report's estimate of one raw capture, includes the first byte's wait)."""
        report = self.report
        probed, first_byte_s, speed = self.link.probe(self._command(False), PROBE_BYTES, retry=retry)
        head, warning = strip_warnings(probed)
        report.warnings = warning or report.warnings
        width, height, fmt = struct.unpack_from("<3I", head, 0)
        bpp = {1: 4, 2: 4, 3: 3, 4: 2, 5: 4}.get(fmt)
        if bpp is None or not (0 < width <= 16384 and 0 < height <= 16384):
            raise CaptureDecodeError(f"raw frame header {width}x{height} format {fmt}")
        report.frame_bytes = width * height * bpp + 16
        report.mb_s = speed / 1e6 if speed else None
        transfer_s = report.frame_bytes / speed if speed else 0.0
        report.raw_s = first_byte_s + transfer_s
        self._transfer_s = transfer_s
        return transfer_s


def describe(report: LinkReport) -> str:
    """One line for a run's summary: where its frames came from (``frames: 7 from the tree server``)."""
    if not report.grabs:
        return "frames: none taken"
    by_screencap = report.grabs - report.shots
    parts = [f"{report.shots} from the tree server"] if report.shots else []
    if by_screencap:
        parts.append(f"{by_screencap} by screencap ({report.wire or 'raw'})")
    return "frames: " + ", ".join(parts)
