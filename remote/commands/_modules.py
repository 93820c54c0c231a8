"""The app modules a command works with: the shipped ones, then the folders in REMOTE_MODULES."""

from __future__ import annotations

from remote.apps import APPS_DIR, ModuleRegistry
from remote.config import Settings


def registry(settings: Settings | None = None) -> ModuleRegistry:
    settings = settings or Settings.from_env()
    return ModuleRegistry([APPS_DIR, *settings.module_dirs])
