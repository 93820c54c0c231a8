"""A device-less locator for one module: the same one `flow`, `locate --module` and `replay` use."""

from __future__ import annotations

from remote.apps import ModuleRegistry
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.protocols import VisionTier
from remote.core.records import LocateStrategy


def module_locator(registry: ModuleRegistry, module_name: str | None,
                   strategy: LocateStrategy | str = LocateStrategy.OPENCV_ONLY,
                   vision: VisionTier | None = None) -> HybridLocator:
    """Module images first, then the shared assets; the module's fixed points; no device."""
    module = registry.modules.get(module_name or "")
    dirs = [module.path] if module is not None else []
    return HybridLocator(None, assets=AssetsManager(module_dirs=dirs), vision=vision, strategy=strategy,
                         fixed_points=module.fixed_points if module is not None else None)
