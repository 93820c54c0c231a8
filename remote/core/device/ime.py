"""ADBKeyboard: the IME that types any text (Chinese, emoji) through a Base64 broadcast.

Facts (docs/adb.md#adbkeyboard): the broadcast receiver exists only while ADBKeyboard is the
current IME, text goes to the focused field, and ``Broadcast completed: result=0``
is printed whether or not anything was typed, so delivery is checked by reading
the field back. We switch to ADBKeyboard only when text is typed, remember the
previous IME in a small state file, and restore it on ``close()``, at exit, and
at the next start if a crashed run left the phone switched (peers' users keep
reporting a stuck keyboard).
"""

from __future__ import annotations

import base64
import json
import logging
import re
from pathlib import Path

from remote.core.safe_files import private_dir, read_private, write_atomic
from remote.errors import ConfigError

logger = logging.getLogger(__name__)

ADBKEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADBKEYBOARD_PACKAGE = "com.android.adbkeyboard"
CHUNK_BYTES = 600  # UTF-8 bytes per broadcast: Base64 grows it by 4/3, well under the command-line limit


def text_chunks(text: str, chunk_bytes: int = CHUNK_BYTES) -> list[str]:
    """Split text into pieces of at most ``chunk_bytes`` UTF-8 bytes, never inside a character.

    >>> text_chunks("你好吗", chunk_bytes=6)
    ['你好', '吗']
    """
    out: list[str] = []
    piece: list[str] = []
    size = 0
    for ch in text:
        n = len(ch.encode("utf-8"))
        if piece and size + n > chunk_bytes:
            out.append("".join(piece))
            piece, size = [], 0
        piece.append(ch)
        size += n
    if piece:
        out.append("".join(piece))
    return out


def b64(text: str) -> str:
    """The message for ``ADB_INPUT_B64`` (its alphabet is shell-safe).

    >>> b64("你好")
    '5L2g5aW9'
    """
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def input_text_pieces(text: str) -> list[str]:
    """Arguments for successive ``input text`` calls that type ``text`` exactly (ASCII, no newlines).

    ``input text`` turns every ``%s`` into a space (its own escape for spaces), so a
    literal ``%s`` is split between two calls (``50%`` then ``sure``); spaces are
    written ``%s``. Each piece is still shell-quoted by the caller (``shlex.join``),
    so ``;``, ``$(...)`` and quotes reach the phone as characters.

    >>> input_text_pieces("a b%sc")
    ['a%sb%', 'sc']
    """
    pieces = text.split("%s")
    out = [piece.replace(" ", "%s") + ("%" if i < len(pieces) - 1 else "") for i, piece in enumerate(pieces)]
    out = [out[0], *["s" + piece for piece in out[1:]]]
    return [piece for piece in out if piece]


def broadcast_ok(output: str) -> bool:
    return "Broadcast completed" in output


class ImeStateFile:
    """Remembers the IME to restore, per device, across crashes.

    One small JSON file per serial in this user's private folder (``safe_files.private_dir("ime")``, mode
    0700: another local user can neither plant a symlink there nor choose the IME we restore), or ``state_dir``.
    """

    def __init__(self, serial: str, state_dir: str | Path | None = None) -> None:
        self.base = Path(state_dir) if state_dir else None
        self.name = re.sub(r"[^\w.-]", "_", serial or "default") + ".json"

    @property
    def path(self) -> Path:
        if self.base is None:
            return private_dir("ime") / self.name
        self.base.mkdir(parents=True, exist_ok=True)
        return self.base / self.name

    def save(self, previous_ime: str) -> None:
        try:
            write_atomic(self.path, json.dumps({"previous_ime": previous_ime}), private=True)
        except (OSError, ConfigError) as exc:  # a read-only or refused temp dir must not stop typing
            logger.warning("could not remember the previous IME: %s", exc)

    def load(self) -> str | None:
        try:
            raw = read_private(self.path)
            value = json.loads(raw).get("previous_ime") if raw else None
        except (OSError, ValueError, AttributeError, ConfigError):
            return None
        return value if isinstance(value, str) and value else None

    def clear(self) -> None:
        try:
            self.path.unlink()
        except (OSError, ConfigError):
            pass
