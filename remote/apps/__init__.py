"""App modules and the registry that routes a task to one of them.

``ModuleRegistry.route(task) -> (module, score)`` scores every module with the
design card's weights: a task template that fits the whole task 0.5, a keyword
of the module in the task 0.4, the module's package name in the task 0.1. The
highest score wins; when nothing scores, the default module (``system``) takes
the task, and its planner falls back to the model.

A module with problems in its YAML is reported (each problem once, with file and
line) and left out of routing; only a task that would have gone to it fails,
with those problems as the reason. "Would have gone to it" is scored as for a
sound module from what can still be read (its keywords and package, its
patterns when tasks.yaml parses; when it does not, a keyword or package of it in
the task counts as if a template fitted too), so a broken module's task is never
taken by a weaker claim of another module (the system's ``打开{app}``).

Two modules that claim one package, one module name defined twice, and a
REMOTE_MODULES folder that does not exist are warnings (``load_warnings``), said
at load and by ``remote modules check``.

``SHIPPED`` names the modules the package ships. With ``REMOTE_SHIPPED_ONLY=1`` (what the test suite sets,
tests/conftest.py) a folder someone added beside them under ``remote/apps/`` is not loaded, so the suite's
routing and checks see the shipped modules whatever a user has created there.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from remote.apps.base import (
    MAX_TASK_CHARS,
    AppHandler,
    AppModule,
    DefaultHandler,
    TaskTemplate,
    compile_pattern,
    normalize_task,
)
from remote.apps.links import check_runs
from remote.apps.loading import load_module, read_module
from remote.apps.near import NearMiss, near_misses
from remote.apps.schema import Problem
from remote.errors import ConfigError
from remote.yamlfile import load_yaml

logger = logging.getLogger(__name__)

APPS_DIR = Path(__file__).resolve().parent
SHIPPED = ("chrome", "settings", "system", "wechat", "weibo")
WEIGHT_TEMPLATE, WEIGHT_KEYWORD, WEIGHT_PACKAGE = 0.5, 0.4, 0.1
_PACKAGE = re.compile(r"[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+")

__all__ = ["AppHandler", "AppModule", "DefaultHandler", "ModuleRegistry", "NearMiss", "Problem", "TaskTemplate",
           "check_task", "load_module"]


def _shipped_only() -> bool:
    return os.environ.get("REMOTE_SHIPPED_ONLY", "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class _Claim:
    """What a broken module can still be seen to claim: its keywords, package and (when tasks.yaml parses)
    its patterns; ``patterns is None`` when they cannot be read."""

    keywords: tuple[str, ...]
    package: str
    patterns: tuple[re.Pattern[str], ...] | None


class ModuleRegistry:
    """Discovers ``apps/*/config.yaml`` (the shipped ones and any extra folders given)."""

    def __init__(self, dirs: Iterable[Path] = (APPS_DIR,)) -> None:
        self.modules: dict[str, AppModule] = {}
        self.broken: dict[str, list[Problem]] = {}
        self.warnings: list[Problem] = []
        self.load_warnings: list[Problem] = []   # said at every load, not only by `modules check`
        self._claims: dict[str, _Claim] = {}
        self._handlers: dict[str, AppHandler] = {}
        self._broken_dirs: dict[str, Path] = {}
        for base in dirs:
            if not Path(base).is_dir():
                self._warn(Path(base), None, "no such folder of modules", "check REMOTE_MODULES")
                continue
            for config in sorted(Path(base).glob("*/config.yaml")):
                if _shipped_only() and Path(base).resolve() == APPS_DIR and config.parent.name not in SHIPPED:
                    continue
                module, problems = read_module(config.parent)
                if module is None:
                    self.broken[config.parent.name] = problems
                    self._claims[config.parent.name] = _claim_of(config.parent)
                    self._broken_dirs[config.parent.name] = config.parent
                    continue
                self.warnings += problems
                self._add(module)
        # A template that runs an unknown task fails when it runs; `modules check` names it now.
        self.links = check_runs(self.modules, self._broken_dirs)

    def _warn(self, path: Path, line: int | None, message: str, hint: str = "") -> None:
        problem = Problem(path, line, message, hint, warning=True)
        self.warnings.append(problem)
        self.load_warnings.append(problem)

    def _add(self, module: AppModule) -> None:
        config = module.path / "config.yaml"
        earlier = self.modules.get(module.name)
        if earlier is not None:
            self._warn(config, None, f"module {module.name!r} is defined twice: this one replaces "
                       f"{earlier.path}", "give one of them another name")
        for other in self.modules.values():
            if module.package and other.package == module.package and other.name != module.name:
                self._warn(config, None, f"package {module.package} is claimed by module {other.name!r} too "
                           f"({other.path / 'config.yaml'}): which one routes a task that names the app, and "
                           "whose home_ref back_to_home uses, depends on the order they load",
                           "keep one module per app, or merge them")
        self.modules[module.name] = module

    @property
    def problems(self) -> list[Problem]:
        """Every problem of every module, errors first."""
        return [p for ps in self.broken.values() for p in ps] + self.links + self.warnings

    def get(self, name: str) -> AppModule:
        if name in self.broken:
            raise _broken_error(name, self.broken[name])
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

    def _specificity(self, module: AppModule, task: str) -> int:
        found = self.handler(module).match(task)
        return found[0].specificity() if found is not None else -1

    def route(self, task: str) -> tuple[AppModule, float]:
        """The module that should handle ``task`` and its score (0.0 = the default module)."""
        check_task(task)
        # A tie goes to the template whose slots are bound most narrowly (``open {app}`` with a known app over
        # ``open {url}``), then to a module that is not the default.
        scored = sorted(((self.score(m, task), m) for m in self.modules.values()),
                        key=lambda pair: (pair[0], self._specificity(pair[1], task), not pair[1].default),
                        reverse=True)
        best = scored[0][0] if scored else 0.0
        winner_default = bool(scored) and scored[0][1].default
        for name, claim in self._claims.items():
            could = _could_score(claim, task)
            if could > 0 and (could > best or (could == best and (winner_default or best == 0))):
                raise _broken_error(name, self.broken[name])
        if scored and best > 0:
            logger.info("routed %r to module %s (score %.2f)", task, scored[0][1].name, best)
            return scored[0][1], best
        default = self.default
        if default is None:
            raise ConfigError("no module can take the task and there is no default module")
        return default, 0.0

    def near_misses(self, task: str) -> list[NearMiss]:
        """Templates the task nearly fits (a typo away), best first: for a "did you mean"."""
        return near_misses(task, [(m.name, t) for m in self.modules.values() for t in m.templates])

    def image_dirs(self) -> list[Path]:
        return [m.path for m in self.modules.values()]

    def app_packages(self) -> dict[str, str]:
        """Names people say for apps -> package: module names and display names, and template slots whose
        canonical values are packages (``打开{app}`` with ``com.taobao.taobao: [淘宝, Taobao]``)."""
        out: dict[str, str] = {}
        for module in self.modules.values():
            for template in module.templates:
                for choices in template.slots.values():
                    out.update({said: pkg for said, pkg in choices.items()
                                if _PACKAGE.fullmatch(pkg) and said != pkg})
        for module in self.modules.values():
            if module.package and not module.default:
                out.setdefault(module.display_name, module.package)
                out.setdefault(module.name, module.package)
        return out

    def app_names(self, package: str) -> list[str]:
        """What people call ``package`` (for messages): ``["淘宝", "Taobao"]``."""
        names = [said for module in self.modules.values() for t in module.templates
                 for choices in t.slots.values() for said, pkg in choices.items() if pkg == package and said != pkg]
        return list(dict.fromkeys(names))


def check_task(task: str) -> None:
    """A task is one sentence: not empty, not a document (a ConfigError says so before any routing)."""
    if not normalize_task(task):
        raise ConfigError("the task is empty", hint='say what to do, e.g. remote run "给张三发微信消息说你好"')
    if len(task) > MAX_TASK_CHARS:
        raise ConfigError(f"the task is {len(task)} characters long; at most {MAX_TASK_CHARS}",
                          hint="say it in one sentence")


def _claim_of(folder: Path) -> _Claim:
    """What a broken module's files still say about the tasks that are its (whatever of them can be read)."""
    try:
        data = load_yaml(folder / "config.yaml")
    except ConfigError:
        data = None
    data = data if isinstance(data, dict) else {}
    words = data.get("keywords")
    keywords = tuple(str(w) for w in words if isinstance(w, str)) if isinstance(words, list) else ()
    package = str(data.get("package") or "")
    tasks_file = folder / "tasks.yaml"
    if not tasks_file.is_file():
        return _Claim(keywords, package, ())
    try:
        tasks = load_yaml(tasks_file)
    except ConfigError:
        return _Claim(keywords, package, None)
    raw = tasks.get("tasks") if isinstance(tasks, dict) else None
    patterns = [p for t in raw if isinstance(t, dict) for p in _as_strings(t.get("patterns"))] \
        if isinstance(raw, list) else []
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(compile_pattern(pattern))
        except (ValueError, re.error):
            continue
    return _Claim(keywords, package, tuple(compiled))


def _as_strings(value: object) -> list[str]:
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [str(v) for v in items if isinstance(v, str | int | float)]


def _could_score(claim: _Claim, task: str) -> float:
    """The score a broken module might have had: its template weight counts when one of its patterns fits,
    or, with patterns that cannot be read, when a keyword or its package shows the task was meant for it."""
    lowered = task.lower()
    keyword = WEIGHT_KEYWORD if any(k and k.lower() in lowered for k in claim.keywords) else 0.0
    package = WEIGHT_PACKAGE if claim.package and claim.package.lower() in lowered else 0.0
    if claim.patterns is None:
        template = WEIGHT_TEMPLATE if keyword or package else 0.0
    else:
        text = normalize_task(task)
        template = WEIGHT_TEMPLATE if any(rx.fullmatch(text) for rx in claim.patterns) else 0.0
    return round(template + keyword + package, 3)


def _broken_error(name: str, problems: list[Problem]) -> ConfigError:
    errors = [p for p in problems if not p.warning]
    listed = "; ".join(str(p) for p in errors[:5]) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
    return ConfigError(f"module {name!r} cannot be loaded: {listed}", hint="`remote modules check` lists every problem")


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
