"""Reference images: app-module images first, then the shared ``remote/assets/`` folder.

Layout of the shared folder (docs/modules.md, "3. Reference images")::

    remote/assets/
      icons/ ui/ states/ custom/      PNG files, subfolders allowed (ui/actions/search_icon.png)
      custom/learned.json             images the vision tier learned: [{"name", "path", "screen_size", ...}]
      index.json                      {"version": "1.0", "icons": {"wechat": {"path": "icons/wechat.png",
                                       "aliases": ["微信", "WeChat"], "package": "com.tencent.mm"}}, ...}

A module folder has ``images/NAME.png`` (variants ``NAME_v2.png``, ``NAME_v3.png``;
there is no ``_v1``) and ``images/aliases.yaml`` mapping alias -> name
(``微信: wechat``). Broken entries (missing files, bad YAML or JSON) never raise:
they are listed by :meth:`AssetsManager.problems` with the file (and line) at fault.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from PIL import Image

from remote.core.safe_files import write_atomic
from remote.errors import ConfigError
from remote.yamlfile import MAX_BYTES, line_of_key, load_yaml

logger = logging.getLogger(__name__)

DEFAULT_ASSETS_DIR = Path(__file__).resolve().parent.parent / "assets"
CATEGORIES = ("icons", "ui", "states", "custom")
_VARIANT = re.compile(r"^(?P<base>.+)_v(?P<n>\d+)$")
_IMAGE_EXT = (".png", ".jpg", ".jpeg", ".webp")


SOURCE_SIZE_KEY = "remote-screen-size"  # PNG text chunk written by `capture-ref`: "1080x2400"


def source_size(image: Image.Image | None) -> tuple[int, int] | None:
    """The screen size a reference was cropped from, when its PNG says so."""
    raw = image.info.get(SOURCE_SIZE_KEY) if image is not None else None
    try:
        w, h = (int(v) for v in str(raw).lower().split("x"))
    except (TypeError, ValueError):
        return None
    return (w, h) if w > 0 and h > 0 else None


def _split_variant(stem: str) -> tuple[str, int]:
    """``"send_v2"`` -> ``("send", 2)``; ``"send"`` -> ``("send", 1)``."""
    m = _VARIANT.match(stem)
    if m and int(m.group("n")) >= 2:
        return m.group("base"), int(m.group("n"))
    return stem, 1


class AssetsManager:
    """Finds reference images by name or alias. Cheap to build: it only lists files."""

    def __init__(self, assets_dir: str | Path | None = None, module_dirs: Iterable[str | Path] = ()) -> None:
        self.assets_dir = Path(assets_dir) if assets_dir is not None else DEFAULT_ASSETS_DIR
        self.module_dirs = [Path(d) for d in module_dirs]
        # name -> [(category, {variant: path})], module entries first.
        self._entries: dict[str, list[tuple[str, dict[int, Path]]]] = {}
        self._aliases: dict[str, str] = {}
        self._problems: list[str] = []
        self._learned: list[dict[str, Any]] = []
        self._images: dict[Path, Image.Image] = {}
        self.reload()

    # -- loading ---------------------------------------------------------------
    def reload(self) -> None:
        """Scan the folders again (after files were added on disk)."""
        self._entries.clear()
        self._aliases.clear()
        self._problems.clear()
        self._images.clear()
        for d in self.module_dirs:
            self._scan_images(d / "images", "module", recursive=False)
            self._load_aliases_yaml(d / "images" / "aliases.yaml")
        self._load_index(self.assets_dir / "index.json")
        for cat in CATEGORIES:
            self._scan_images(self.assets_dir / cat, cat, recursive=True)
        self._load_learned()

    def _add(self, name: str, category: str, variant: int, path: Path) -> None:
        slots = self._entries.setdefault(name, [])
        for cat, variants in slots:
            if cat == category:
                variants.setdefault(variant, path)
                return
        slots.append((category, {variant: path}))

    def _scan_images(self, folder: Path, category: str, *, recursive: bool) -> None:
        if not folder.is_dir():
            return
        files = folder.rglob("*") if recursive else folder.iterdir()
        root = folder.resolve()
        for p in sorted(files):
            if p.suffix.lower() not in _IMAGE_EXT:
                continue
            if p.is_symlink() or root not in p.resolve().parents:
                # a module's images are its own files: a link may point anywhere (/etc/passwd), so it is not read
                self._problem(f"{p}: a link (to {os.path.realpath(p)}) or a file outside {folder}: not read as "
                              "an image; copy the image into the folder instead")
                continue
            if not p.is_file():
                continue
            if category == "custom" and "__" in p.stem:
                continue  # learned images are listed by learned.json, with their screen size
            base, n = _split_variant(p.stem)
            self._add(base, category, n, p)

    def _read(self, path: Path) -> Any:
        """The data of a YAML or JSON file (by suffix); None when it is absent or broken -- a broken
        one is reported as a problem with its file and line, never raised."""
        if not path.is_file():
            return None
        try:
            if path.suffix != ".json":
                return load_yaml(path) or {}
            if path.stat().st_size > MAX_BYTES:
                self._problem(f"{path}: larger than {MAX_BYTES // 1000} kB")
                return None
            return json.loads(path.read_text(encoding="utf-8"))
        except ConfigError as exc:
            self._problem(str(exc))
        except json.JSONDecodeError as exc:
            self._problem(f"{path}:{exc.lineno}: bad JSON ({exc.msg})")
        except (OSError, UnicodeDecodeError) as exc:
            self._problem(f"{path}: unreadable ({exc})")
        return None

    def _load_aliases_yaml(self, path: Path) -> None:
        data = self._read(path)
        if data is None:
            return
        if not isinstance(data, dict):
            self._problem(f"{path}: expected a mapping alias -> name, got {type(data).__name__}")
            return
        for alias, name in data.items():
            where = f"{path}:{line_of_key(data, alias)}"
            if not isinstance(name, str | int) or not str(name).strip():
                self._problem(f"{where}: alias {alias!r} maps to {str(name)[:40]!r}, not an image name")
                continue
            self._aliases.setdefault(str(alias), str(name))
            if str(name) not in self._entries:
                self._problem(f"{where}: alias {alias!r} -> {name!r}: no image {name}.png in {path.parent}")

    def _load_index(self, path: Path) -> None:
        data = self._read(path)
        if data is None:
            return
        if not isinstance(data, dict):
            self._problem(f"{path}: expected an object of categories")
            return
        for cat, entries in data.items():
            if cat == "version" or not isinstance(entries, dict):
                continue
            for name, entry in entries.items():
                if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                    self._problem(f"{path}: {cat}.{name}: entry needs a \"path\"")
                    continue
                file = self.assets_dir / entry["path"]
                for alias in entry.get("aliases") or []:
                    self._aliases.setdefault(str(alias), name)
                if file.is_file():
                    self._add(name, cat, 1, file)
                elif entry.get("exists", True):
                    self._problem(f"{path}: {cat}.{name}: file {entry['path']} is missing")

    def _load_learned(self) -> None:
        path = self.assets_dir / "custom" / "learned.json"
        self._learned = []
        data = self._read(path)
        for entry in data if isinstance(data, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                if (self.assets_dir / "custom" / entry["path"]).is_file():
                    self._learned.append(entry)
                else:
                    self._problem(f"{path}: learned {entry.get('name')!r}: file {entry['path']} is missing")

    def _problem(self, message: str) -> None:
        # Collected, not logged as warnings: `remote modules check` and the runner report each once.
        logger.debug("[assets] %s", message)
        self._problems.append(message)

    # -- queries ---------------------------------------------------------------
    def resolve_alias(self, name: str) -> str | None:
        """The image name for a name or alias (``"微信"`` -> ``"wechat"``); None when unknown."""
        if not name:
            return None
        if name in self._entries:
            return name
        if name in self._aliases:
            return self._aliases[name]
        if any(e.get("name") == name for e in self._learned):
            return name
        folded = name.casefold()
        for alias, target in self._aliases.items():
            if alias.casefold() == folded:
                return target
        for known in self._entries:
            if known.casefold() == folded:
                return known
        return None

    def has(self, name_or_alias: str) -> bool:
        name = self.resolve_alias(name_or_alias)
        return name is not None and (name in self._entries or any(e["name"] == name for e in self._learned))

    def _paths(self, name: str) -> list[Path]:
        out: list[Path] = []
        for _cat, variants in self._entries.get(name, []):
            out += [variants[k] for k in sorted(variants)]
        return out

    def _open(self, path: Path) -> Image.Image | None:
        if path not in self._images:
            try:
                with Image.open(path) as im:
                    im.load()
                    self._images[path] = im.copy()
            except OSError as exc:
                self._problem(f"{path}: unreadable image ({exc})")
                return None
        return self._images[path]

    def get_image(self, name_or_alias: str) -> Image.Image | None:
        """The first image of a name (module before shared assets), or None."""
        for img in self.get_variants(name_or_alias):
            return img
        return None

    def get_variants(self, name: str) -> list[Image.Image]:
        """All images of a name: NAME.png, NAME_v2.png, ... (modules first), then learned crops."""
        return [im for im, _ in self.variants_with_sources(name)]

    def variants_with_sources(self, name: str) -> list[tuple[Image.Image, tuple[int, int] | None]]:
        """:meth:`get_variants` with the screen size each image was cut from (learned crops
        store it; None when unknown). The locator uses it as a scale prior."""
        resolved = self.resolve_alias(name) or name
        found: list[tuple[Image.Image | None, tuple[int, int] | None]] = []
        for p in self._paths(resolved):
            im = self._open(p)
            found.append((im, source_size(im)))
        for e in (e for e in self._learned if e.get("name") == resolved):
            size = e.get("screen_size")
            found.append((self._open(self.assets_dir / "custom" / e["path"]),
                          (int(size[0]), int(size[1])) if size and len(size) == 2 else None))
        return [(im, s) for im, s in found if im is not None]

    def without_screen_size(self) -> list[Path]:
        """Images (not learned ones) whose file does not say which screen size they were cut from:
        the locator searches them over 0.5-1.5x instead of around the expected scale."""
        return [p for name in sorted(self._entries) for p in self._paths(name)
                if (im := self._open(p)) is not None and source_size(im) is None]

    def get_image_path(self, name_or_alias: str) -> Path | None:
        resolved = self.resolve_alias(name_or_alias)
        paths = self._paths(resolved) if resolved else []
        return paths[0] if paths else None

    def get_available_refs(self) -> dict[str, list[str]]:
        """Category -> names: ``{"module": [...], "icons": [...], "ui": [...], ...}``."""
        out: dict[str, list[str]] = {}
        for name, slots in self._entries.items():
            for cat, _ in slots:
                out.setdefault(cat, []).append(name)
        for entry in self._learned:
            names = out.setdefault("custom", [])
            if entry["name"] not in names:
                names.append(entry["name"])
        return {k: sorted(v) for k, v in out.items()}

    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    def problems(self) -> list[str]:
        return list(self._problems)

    # -- learned images (written by the vision tier) ---------------------------
    def learned(self) -> list[dict[str, Any]]:
        return [dict(e) for e in self._learned]

    def learned_paths(self, name: str, screen_size: tuple[int, int] | None = None) -> list[Path]:
        """Learned crops of a name; those from the same screen size first."""
        entries = [e for e in self._learned if e.get("name") == name]
        if screen_size is not None:
            entries.sort(key=lambda e: tuple(e.get("screen_size") or ()) != tuple(screen_size))
        return [self.assets_dir / "custom" / e["path"] for e in entries]

    def add_learned(self, name: str, image: Image.Image, screen_size: tuple[int, int]) -> Path:
        """Save a crop the vision tier found, so the next locate of ``name`` is a free template match.

        Written as ``custom/NAME__1080x2400.png`` plus an entry in ``custom/learned.json``.
        """
        safe = re.sub(r"[^\w\-]+", "_", name).strip("_") or "target"
        w, h = int(screen_size[0]), int(screen_size[1])
        folder = self.assets_dir / "custom"
        folder.mkdir(parents=True, exist_ok=True)
        filename = f"{safe}__{w}x{h}.png"
        path = folder / filename
        image.save(path)
        entries = [e for e in self._learned if e.get("path") != filename]
        entries.append({"name": name, "path": filename, "screen_size": [w, h],
                        "size": [image.width, image.height], "created": round(time.time(), 3)})
        write_atomic(folder / "learned.json", json.dumps(entries, ensure_ascii=False, indent=1))
        self._learned = entries
        self._images.pop(path, None)
        return path
