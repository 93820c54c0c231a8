r"""Reading a module folder: ``config.yaml`` and ``tasks.yaml`` checked against the one schema
(``remote.apps.schema``) into an `AppModule` of `TaskTemplate`\ s; every problem names its file and line,
each once (``read_module``), or the first stops the load (``load_module``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from remote.apps.base import AppModule, TaskTemplate, compile_pattern, declared_slots
from remote.apps.schema import (
    CONFIG_KEYS,
    SLOT_KINDS,
    TASK_KEYS,
    Checker,
    Problem,
    check_answer,
    check_failures,
    check_local_runs,
    check_slots,
    check_steps,
    check_success,
    env_names,
    kind_of,
    slots_used,
)
from remote.errors import ConfigError, did_you_mean
from remote.kept import Kept
from remote.yamlfile import MAX_BYTES, line_of, line_of_key, load_yaml

READ_KEPT = 64             # module folders whose outcome is kept (`read_module`)
_READ: Kept[tuple[str, tuple[str | None, str | None]], tuple[AppModule | None, tuple[Problem, ...]]] = \
    Kept(READ_KEPT)


def _read(c: Checker) -> Any:
    try:
        return load_yaml(c.path)
    except ConfigError as exc:   # the Problem shows the file and line: the reason alone, not them twice
        c.add(exc.line, exc.problem, exc.hint)
        return None


def _config(c: Checker) -> dict[str, Any]:
    cfg = _read(c) if c.path.is_file() else None
    if cfg is None:
        if not c.path.is_file():
            c.add(None, "missing", "every module folder needs a config.yaml (see docs/modules.md)")
        return {}
    if not c.mapping(cfg, "config.yaml", 1):
        return {}
    c.keys(cfg, CONFIG_KEYS, "config.yaml")
    for key in ("keywords", "sensitive"):
        if key in cfg:
            c.string_list(cfg[key], key, line_of_key(cfg, key))
    if not isinstance(cfg.get("stable_ids", False), bool):
        c.add(line_of_key(cfg, "stable_ids"), "stable_ids must be true or false",
              "true only if the app keeps its resource ids across releases")
    loaded: dict[str, Any] = cfg
    return loaded


def _fixed_points(c: Checker, cfg: dict[str, Any], raw: Any) -> dict[str, tuple[float, float]]:
    fixed: dict[str, tuple[float, float]] = {}
    if raw is None:
        return fixed
    if not c.mapping(raw, "fixed_points", line_of_key(cfg, "fixed_points")):
        return fixed
    for key, point in raw.items():
        if not (isinstance(point, list | tuple) and len(point) == 2
                and all(isinstance(v, int | float) and not isinstance(v, bool) for v in point)):
            c.add(line_of_key(raw, key), f"fixed_points.{key} must be [x, y]")
            continue
        fixed[str(key)] = (float(point[0]), float(point[1]))
    return fixed


def load_module(folder: Path) -> AppModule:
    """Read one module folder; a ConfigError lists every problem (file:line) when it is not usable."""
    module, problems = read_module(folder)
    if module is None:
        errors = [p for p in problems if not p.warning]
        first = errors[0]
        more = "; ".join(str(p) for p in errors[1:])
        raise ConfigError(first.message + (f"; also: {more}" if more else ""), path=str(first.path),
                          line=first.line, hint=first.hint)
    return module


def read_module(folder: Path) -> tuple[AppModule | None, list[Problem]]:
    """Read and validate one module folder: the module (None when unusable) and every problem found.

    Every runner builds its registry of modules; the same two files give the same module, so the outcome is
    kept for the folder and the files' text (the text, not their times: two writes of one size can share a
    time). 15-30 ms saved a runner (the shipped five); a file changed while it was read is not kept."""
    texts = _texts(folder)
    kept = _READ.get((str(folder), texts)) if texts is not None else None
    if kept is not None:
        return kept[0], list(kept[1])
    module, problems = _read_module(folder)
    if texts is not None and _texts(folder) == texts:
        _READ.put((str(folder), texts), (module, tuple(problems)))
    return module, problems


def _texts(folder: Path) -> tuple[str | None, str | None] | None:
    """config.yaml's and tasks.yaml's text (None for a file that is not there); None when one cannot be read
    or is larger than a module file may be (then it is read as always, and said so)."""
    out: list[str | None] = []
    for path in (folder / "config.yaml", folder / "tasks.yaml"):
        try:
            if not path.is_file():
                out.append(None)
                continue
            if path.stat().st_size > MAX_BYTES:
                return None
            out.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return None
    return out[0], out[1]


def _read_module(folder: Path) -> tuple[AppModule | None, list[Problem]]:
    conf = Checker(folder / "config.yaml")
    cfg = _config(conf)
    name = str(cfg.get("name") or folder.name)
    homes = tuple(str(h) for h in _as_list(cfg.get("home_ref")) if str(h).strip())
    fixed = _fixed_points(conf, cfg, cfg.get("fixed_points"))
    failures = tuple(check_failures(conf, cfg.get("failures"), line_of_key(cfg, "failures")))
    tasks = Checker(folder / "tasks.yaml")
    templates = tuple(load_templates(tasks, failures, module=name)) if tasks.path.is_file() else ()
    problems = conf.problems + tasks.problems
    if any(not p.warning for p in problems):
        return None, problems
    return AppModule(name=name, path=folder, display_name=str(cfg.get("display_name") or name),
                     package=str(cfg.get("package") or ""),
                     keywords=tuple(str(k) for k in _as_list(cfg.get("keywords"))),
                     home_ref=(homes[0] if homes else None), home_refs=homes,
                     sensitive=tuple(str(s) for s in _as_list(cfg.get("sensitive"))),
                     fixed_points=fixed, templates=templates, default=bool(cfg.get("default")),
                     stable_ids=bool(cfg.get("stable_ids")), failures=failures), problems


def _as_list(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []


def load_templates(c: Checker, module_failures: tuple[dict[str, str], ...], data: Any = None,
                    top_keys: tuple[str, ...] = ("tasks",), module: str = "") -> list[TaskTemplate]:
    """The templates of a tasks.yaml (read here, or ``data`` already read: a learned task's file)."""
    data = _read(c) if data is None else data
    if data is None:
        return []
    raw_tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(raw_tasks, list):
        c.add(line_of(data, 1), f"{c.path.name} needs a 'tasks:' list")
        return []
    c.keys(data, top_keys, c.path.name)
    out = []
    for raw in raw_tasks:
        template = _load_template(c, raw, module_failures)
        if template is not None:
            out.append(template)
    check_local_runs(c, raw_tasks, module)
    return out


def _load_template(c: Checker, raw: Any, module_failures: tuple[dict[str, str], ...]) -> TaskTemplate | None:
    line = line_of(raw)
    if not isinstance(raw, dict) or not raw.get("name") or not raw.get("patterns") or not raw.get("steps"):
        c.add(line, "each task needs name, patterns and steps")
        return None
    name = str(raw["name"])
    c.keys(raw, TASK_KEYS, f"task {name}", line)
    before = len(c.problems)
    patterns, regexes = _patterns(c, raw["patterns"], name, line)
    slots, kinds = _slots(c, raw.get("slots"), name, line)
    if not isinstance(raw["steps"], list):
        c.add(line, f"task {name}: steps must be a list")
        return None
    check_steps(c, raw["steps"], name, line)
    check_answer(c, raw, name, line)
    check_success(c, raw.get("success_check"), name, line_of_key(raw, "success_check") or line)
    _warn_unchecked(c, raw, name, line)
    failures = tuple(check_failures(c, raw.get("failures"), line_of_key(raw, "failures") or line))
    # The module's failure screens apply to the templates that declare every slot they mention.
    module_failures = tuple(f for f in module_failures if slots_used(f) <= declared_slots(patterns))
    check_slots(c, raw, name, line, slots_used(list(module_failures)))
    if len(c.problems) > before and any(not p.warning for p in c.problems[before:]):
        return None
    return TaskTemplate(name=name, patterns=tuple(patterns), steps=tuple(raw["steps"]), slots=slots,
                        success_check=dict(raw.get("success_check") or {}),
                        description=str(raw.get("description") or ""), line=line,
                        failures=module_failures + failures, answer=str(raw.get("answer") or ""),
                        env=env_names(raw.get("env")), kinds=kinds, _regexes=tuple(regexes))


def _patterns(c: Checker, raw: Any, name: str, line: int | None) -> tuple[list[str], list[re.Pattern[str]]]:
    """A task's patterns and their compiled regexes (a pattern that does not compile: a problem)."""
    patterns = c.string_list(raw, f"task {name}: patterns", line)
    regexes = []
    for p in patterns:
        try:
            regexes.append(compile_pattern(p))
        except (ValueError, re.error) as exc:
            c.add(line, f"task {name}: {exc}")
    return patterns, regexes


def _slots(c: Checker, raw: Any, name: str, line: int | None) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """A task's ``slots:``: the slots with choices (spoken word -> canonical) and the slots of a kind (url ...)."""
    slots: dict[str, dict[str, str]] = {}
    kinds: dict[str, str] = {}
    if not isinstance(raw, dict):
        return slots, kinds
    for k, v in raw.items():
        where = line_of_key(raw, k) or line
        if isinstance(v, str):   # a kind of value: slots: {url: url}
            if v in SLOT_KINDS:
                kinds[str(k)] = v
            else:
                c.add(where, f"task {name}: slots.{k}: unknown kind {v[:40]!r}", did_you_mean(v, SLOT_KINDS, "kinds"))
            continue
        choices = _slot_choices(v)
        if choices is None:
            c.add(where, f"task {name}: slots.{k} must be a list, a mapping canonical -> [spoken words], or a kind "
                  "of value (" + ", ".join(SLOT_KINDS) + ")")
        else:
            slots[str(k)] = choices
    return slots, kinds


def _warn_unchecked(c: Checker, raw: dict[str, Any], name: str, line: int | None) -> None:
    """A warning for a task whose run can end only 'unchecked' (exit 1), never SUCCESS: no success_check, no
    answer, no final assert (an assert as the last step checks the finished screen too)."""
    steps = raw["steps"]
    ends_checked = bool(steps) and isinstance(steps[-1], dict) and \
        kind_of(steps[-1]) in ("assert_visible", "assert_not_visible")
    if not raw.get("success_check") and "answer" not in raw and not ends_checked:
        c.add(line, f"task {name}: no success_check: a run ends 'unchecked' (exit 1), never SUCCESS, since "
              "nothing checks that the task is done", "say what the finished screen shows, or the volume or "
              "screen change a key press makes: success_check in docs/modules.md", warning=True)


def _slot_choices(value: Any) -> dict[str, str] | None:
    if isinstance(value, list):
        return {str(v): str(v) for v in value}
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for canonical, spoken in value.items():
            for word in ([spoken] if isinstance(spoken, str) else spoken or []):
                out[str(word)] = str(canonical)
            out[str(canonical)] = str(canonical)
        return out
    return None
