"""App modules and the registry that routes a task to one of them.

``ModuleRegistry.route(task) -> (module, score)`` scores every module with the
design card's weights: a task template that fits the whole task 0.5, a keyword
of the module in the task 0.4, the module's package name in the task 0.1. The
highest score wins; when nothing scores, the default module (``system``) takes
the task, and its planner falls back to the model.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterable
from pathlib import Path

from remote.apps.base import AppHandler, AppModule, DefaultHandler, TaskTemplate, load_module
from remote.errors import ConfigError

logger = logging.getLogger(__name__)

APPS_DIR = Path(__file__).resolve().parent
WEIGHT_TEMPLATE, WEIGHT_KEYWORD, WEIGHT_PACKAGE = 0.5, 0.4, 0.1

__all__ = ["AppHandler", "AppModule", "DefaultHandler", "ModuleRegistry", "TaskTemplate", "load_module"]


class ModuleRegistry:
    """Discovers ``apps/*/config.yaml`` (the shipped ones and any extra folders given)."""

    def __init__(self, dirs: Iterable[Path] = (APPS_DIR,), *, strict: bool = True) -> None:
        self.modules: dict[str, AppModule] = {}
        self.problems: list[str] = []
        self._handlers: dict[str, AppHandler] = {}
        for base in dirs:
            for config in sorted(Path(base).glob("*/config.yaml")):
                try:
                    module = load_module(config.parent)
                except ConfigError as exc:
                    if strict:
                        raise
                    self.problems.append(str(exc))
                    continue
                self.modules[module.name] = module

    def get(self, name: str) -> AppModule:
        if name not in self.modules:
            raise ConfigError(f"no module named {name!r}", hint=f"modules: {', '.join(sorted(self.modules))}")
        return self.modules[name]

    @property
    def default(self) -> AppModule | None:
        for module in self.modules.values():
            if module.default:
                return module
        return self.modules.get("system")

    def handler(self, module: AppModule) -> AppHandler:
        if module.name not in self._handlers:
            self._handlers[module.name] = _load_handler(module)
        return self._handlers[module.name]

    def score(self, module: AppModule, task: str) -> float:
        lowered = task.lower()
        score = 0.0
        if self.handler(module).match(task) is not None:
            score += WEIGHT_TEMPLATE
        if any(k.lower() in lowered for k in module.keywords if k):
            score += WEIGHT_KEYWORD
        if module.package and module.package.lower() in lowered:
            score += WEIGHT_PACKAGE
        return round(score, 3)

    def route(self, task: str) -> tuple[AppModule, float]:
        """The module that should handle ``task`` and its score (0.0 = the default module)."""
        scored = sorted(((self.score(m, task), m) for m in self.modules.values()),
                        key=lambda pair: (pair[0], not pair[1].default), reverse=True)
        if scored and scored[0][0] > 0:
            logger.info("routed %r to module %s (score %.2f)", task, scored[0][1].name, scored[0][0])
            return scored[0][1], scored[0][0]
        default = self.default
        if default is None:
            raise ConfigError("no module can take the task and there is no default module")
        return default, 0.0

    def image_dirs(self) -> list[Path]:
        return [m.path for m in self.modules.values()]


def _load_handler(module: AppModule) -> AppHandler:
    path = module.path / "handler.py"
    if not path.is_file():
        return DefaultHandler(module)
    spec = importlib.util.spec_from_file_location(f"remote_app_{module.name}_handler", path)
    if spec is None or spec.loader is None:
        raise ConfigError("cannot import handler.py", path=str(path))
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # a module author's code: report it with the file, whatever it raised
        raise ConfigError(f"handler.py failed to import: {exc}", path=str(path)) from exc
    cls = getattr(mod, "Handler", None)
    if not (isinstance(cls, type) and issubclass(cls, AppHandler)):
        raise ConfigError("handler.py must define class Handler(AppHandler)", path=str(path))
    return cls(module)
