"""The media volume as the phone's audio service reports it (``dumpsys audio``), pure.

AOSP's ``AudioService.dumpStreamStates`` (aosp-mirror/platform_frameworks_base,
``services/core/java/com/android/server/audio/AudioService.java``) prints one block per stream::

    - STREAM_MUSIC:
       Muted: false
       Min: 0
       Max: 15
       streamVolume:7
       Current: 2 (speaker): 7, 4000000 (usb_headset): 5, 40000000 (default): 7
       Devices: speaker

``streamVolume:`` is the level the phone plays at now; phones that do not print it give the
level per output device (``Current:``), and ``Devices:`` names the device in use. See
docs/adb.md#the-media-volume.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BLOCK = re.compile(r"^- STREAM_MUSIC:\s*$(.*?)(?=^- STREAM_|\Z)", re.M | re.S)
_ENTRY = re.compile(r"\d+ \(([\w.-]+)\): (\d+)")


@dataclass(frozen=True)
class Volume:
    level: int
    maximum: int
    muted: bool = False

    def __str__(self) -> str:
        return f"{self.level}/{self.maximum}" + (" (muted)" if self.muted else "")


def _field(block: str, name: str) -> str | None:
    m = re.search(rf"^\s*{name}:\s*(\S.*?)\s*$", block, re.M)
    return m.group(1) if m else None


def music_volume(dumpsys_audio: str) -> Volume | None:
    """The music stream's level in ``dumpsys audio``, None when the phone does not say.

    >>> music_volume("- STREAM_MUSIC:\\n   Muted: false\\n   Min: 0\\n   Max: 15\\n   streamVolume:7\\n")
    Volume(level=7, maximum=15, muted=False)
    >>> music_volume("- STREAM_MUSIC:\\n   Max: 25\\n   Current: 2 (speaker): 9, 8 (bt_a2dp): 4\\n   Devices: bt_a2dp\\n")
    Volume(level=4, maximum=25, muted=False)
    >>> music_volume("Can't find service: audio") is None
    True
    """
    m = _BLOCK.search(dumpsys_audio)
    if m is None:
        return None
    block = m.group(1)
    top, muted = _field(block, "Max"), _field(block, "Muted") == "true"
    level = re.search(r"^\s*streamVolume:\s*(\d+)", block, re.M)
    if level is not None:
        value: int | None = int(level.group(1))
    else:
        levels = dict(_ENTRY.findall(_field(block, "Current") or ""))
        device = (_field(block, "Devices") or "").split()
        value = int(levels[device[0]]) if device and device[0] in levels else None
    if value is None or top is None or not top.isdigit():
        return None
    return Volume(value, int(top), muted)
