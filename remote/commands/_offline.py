"""Offline helpers for testers: reading screenshot and dump files with clear errors."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from remote.errors import ConfigError


def open_image(path: str | Path) -> Image.Image:
    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except FileNotFoundError as exc:
        raise ConfigError(f"no such screenshot: {path}") from exc
    except OSError as exc:
        raise ConfigError(f"not an image: {path} ({exc})") from exc


def read_text(path: str | Path | None) -> str | None:
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
