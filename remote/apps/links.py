"""Templates that run other templates (``run: {task: NAME, module: M, slots: {...}}``), checked across modules.

Run once every module is loaded: a sub-task that does not exist, a module that does not, a slot the
sub-task needs and is not given, and templates that run each other in a loop are errors with the file
and line of the ``run`` step::

    remote/apps/settings/tasks.yaml:61: task is_on: run settings.open_pge: no such task (did you mean 'open_page'?)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from remote.apps.base import AppModule, TaskTemplate
from remote.apps.schema import Problem, run_params, run_problem, walk
from remote.core.plan.values import SLOT
from remote.errors import ConfigError, did_you_mean
from remote.yamlfile import line_of, load_yaml

Ref = tuple[str, str]   # (module, task)


def check_runs(modules: dict[str, AppModule], broken: dict[str, Path]) -> list[Problem]:
    """Problems of the ``run:`` steps that name another module, and loops of templates running each other
    (a run of the same module is checked with its file: ``schema.check_local_runs``). ``broken``: the
    folders of the modules that could not be loaded, whose templates are read as written."""
    problems: list[Problem] = []
    edges: dict[Ref, list[tuple[Ref, int | None]]] = {}
    sources = [(m.name, m.path / "tasks.yaml", [(t.name, list(t.steps), t.line) for t in m.templates])
               for m in modules.values()] + [(name, folder / "tasks.yaml", _raw_tasks(folder / "tasks.yaml"))
                                             for name, folder in broken.items()]
    for name, path, templates in sources:
        for task, steps, task_line in templates:
            for _, step, line in walk(steps, task_line):
                params = run_params(step)
                if params is None:
                    continue
                ref = (str(params.get("module") or name), str(params["task"]))
                problem = None if ref[0] == name else _problem(modules, set(broken), ref, params)
                if problem:
                    problems.append(Problem(path, line, f"task {task}: run {ref[0]}.{ref[1]}: {problem[0]}",
                                            problem[1]))
                elif ref[0] in modules and name in modules:
                    edges.setdefault((name, task), []).append((ref, line))
    return problems + _loops(modules, edges)


def _raw_tasks(path: Path) -> list[tuple[str, list[Any], int | None]]:
    """A broken module's templates as written (whatever of them can be read)."""
    try:
        data = load_yaml(path) if path.is_file() else None
    except ConfigError:
        return []
    tasks = data.get("tasks") if isinstance(data, dict) else None
    return [(str(t.get("name")), t["steps"], line_of(t)) for t in tasks or []
            if isinstance(t, dict) and isinstance(t.get("steps"), list)] if isinstance(tasks, list) else []


def _problem(modules: dict[str, AppModule], broken: set[str], ref: Ref, params: dict[str, Any]) -> tuple[str, str] | None:
    name = ref[0]
    if name in broken:
        return f"module {name} cannot be loaded", "`remote modules check` lists its problems"
    if name not in modules:
        return f"no module {name!r}", did_you_mean(name, tuple(modules))
    return run_problem(catalog(modules[name].templates), params)


def catalog(templates: tuple[TaskTemplate, ...]) -> dict[str, tuple[set[str], set[str]]]:
    return {t.name: ({s for p in t.patterns for s in SLOT.findall(p)}, set(t.env)) for t in templates}


def _loops(modules: dict[str, AppModule], edges: dict[Ref, list[tuple[Ref, int | None]]]) -> list[Problem]:
    """Templates that run each other round in a circle (each loop reported once, at its first template)."""
    problems, reported = [], set()
    for start in sorted(edges):
        stack: list[tuple[Ref, list[Ref]]] = [(start, [start])]
        while stack:
            ref, path = stack.pop()
            for nxt, line in edges.get(ref, []):
                if nxt == start and frozenset(path) not in reported:
                    reported.add(frozenset(path))
                    circle = " > ".join(f"{m}.{t}" for m, t in [*path, start])
                    problems.append(Problem(modules[start[0]].path / "tasks.yaml", line if len(path) == 1 else
                                            _template_line(modules, start), f"task {start[1]}: templates run each "
                                            f"other in a loop: {circle}", "one of them must not run the other"))
                elif nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    return problems


def _template_line(modules: dict[str, AppModule], ref: Ref) -> int | None:
    return next((t.line for t in modules[ref[0]].templates if t.name == ref[1]), None)
