"""The app modules a command works with: the shipped ones, then the folders in REMOTE_MODULES."""

from __future__ import annotations

from pathlib import Path

from remote.apps import APPS_DIR, ModuleRegistry
from remote.config import Settings
from remote.errors import ConfigError


def registry(settings: Settings | None = None) -> ModuleRegistry:
    settings = settings or Settings.from_env()
    return ModuleRegistry([APPS_DIR, *settings.module_dirs])


def module_folder(name: str, settings: Settings | None = None) -> Path:
    """The folder of module ``name``, shipped or in REMOTE_MODULES; a module that does not load yet counts
    too (its author is still writing it). A later folder wins, as in routing."""
    settings = settings or Settings.from_env()
    loaded = registry(settings).modules.get(name)
    if loaded is not None:
        return loaded.path
    dirs = [APPS_DIR, *settings.module_dirs]
    found = [Path(d) / name for d in dirs if (Path(d) / name / "config.yaml").is_file()]
    if found and Path(name).name == name:
        return found[-1]
    raise ConfigError(f"no module {name!r} in {', '.join(map(str, dirs))}",
                      hint=f"create {dirs[-1]}/{name}/config.yaml first (docs/modules.md: \"A new module\"); "
                           "a folder of your own modules goes in REMOTE_MODULES")
