"""`remote modules [list|check|learned]`: what the app modules can do, and whether they are sound."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from remote.apps import APPS_DIR, AppModule, ModuleRegistry, TaskTemplate
from remote.apps.learned import LearnedStore
from remote.apps.schema import step_targets, walk
from remote.commands._learned import store as learned_store
from remote.commands._modules import registry as module_registry
from remote.core.locate.assets import AssetsManager
from remote.core.locate.target_ref import parse_role, parse_target
from remote.errors import BadInput


def _targets(template_steps: Any) -> list[tuple[str, int | None]]:
    """Every target a template's steps name (blocks' steps included): target_ref (and its alternatives), the
    fallback's, verify_ref, a flow step's target and its when's."""
    return [(ref, line) for _, step, line in walk(list(template_steps)) for ref in step_targets(step)]


def _refs(template_steps: Any) -> list[tuple[str, int | None]]:
    """Reference names (not text:/id:/… and not slot-filled) used by a template's steps and fallbacks."""
    return [(ref, line) for ref, line in _targets(template_steps) if "{" not in ref and parse_target(ref)[0] == "ref"]


def id_warnings(registry: ModuleRegistry) -> list[str]:
    """Targets that break on an app update: ``id:`` in a module whose app renames its ids.

    A module declares ``stable_ids: true`` in config.yaml when its app keeps resource ids
    across releases (Chrome, Settings); elsewhere (WeChat obfuscates and renames them in
    every release) an ``id:`` target is a warning naming the forms that survive.
    """
    out = []
    for module in registry.modules.values():
        if module.stable_ids:
            continue
        for template in module.templates:
            out += template_id_warnings(module, module.path / "tasks.yaml", template)
        for home in module.home_refs:
            if parse_target(home)[0] != "id":
                continue
            out.append(f"{module.path / 'config.yaml'}: warning: home_ref {home!r} names a resource id "
                       "and the module does not declare stable_ids: true")
    return out


def template_id_warnings(module: AppModule, tasks_file: Path, template: TaskTemplate) -> list[str]:
    """The ``id:`` targets of one template of a module whose app renames its ids."""
    if module.stable_ids:
        return []
    return [f"{tasks_file}:{line or template.line}: warning: task {template.name}: {ref!r} names a resource id, "
            f"which {module.display_name or module.name} may rename in its next release (name it by text:, "
            "desc:, role:CLASS:LABEL or editable:, or declare stable_ids: true in config.yaml if the app keeps "
            "its ids)" for ref, line in _targets(template.steps) if parse_target(ref)[0] == "id"]


def template_problems(tasks_file: Path, template: TaskTemplate, assets: AssetsManager) -> list[str]:
    """What `modules check` says of one template's targets beyond its schema: a reference name with no image
    (in ``assets``), a ``role:`` that names no class."""
    problems = []
    for ref, line in _refs(template.steps):
        if not assets.has(ref):
            problems.append(f"{tasks_file}:{line or template.line}: task {template.name}: reference "
                            f"{ref!r} has no image (add images/{ref}.png or an alias)")
    for ref, line in _targets(template.steps):
        kind, value = parse_target(ref)
        if kind == "role" and not parse_role(value)[0]:
            problems.append(f"{tasks_file}:{line or template.line}: task {template.name}: {ref!r} names no "
                            "class (role:CLASS:LABEL, e.g. role:Button:发送)")
    return problems


def check(registry: ModuleRegistry) -> list[str]:
    """Every problem of every module, once each, as ``file:line: message (hint)``; warnings say so."""
    problems = [str(p) for p in registry.problems]
    for module in registry.modules.values():
        assets = AssetsManager(module_dirs=[module.path])
        problems.extend(assets.problems())
        for template in module.templates:
            problems += template_problems(module.path / "tasks.yaml", template, assets)
        for home in module.home_refs:
            if parse_target(home)[0] == "ref" and not assets.has(home):
                problems.append(f"{module.path / 'config.yaml'}: home_ref {home!r} has no image")
    return problems + id_warnings(registry)


def notes(registry: ModuleRegistry) -> list[str]:
    """Advice that is not a fault: module images that do not store their screen size."""
    out = []
    for module in registry.modules.values():
        for path in AssetsManager(module_dirs=[module.path]).without_screen_size():
            if module.path in path.parents:
                out.append(f"{path}: no screen size stored: searched over 0.5-1.5x, so an absent target costs"
                           " about twice as long and the same icon drawn at another size can be taken for"
                           " it; capture it again with `remote capture-ref` (it stores the size)")
    return out


def learned_problems(store: LearnedStore, registry: ModuleRegistry) -> list[str]:
    """The learned tasks checked as module tasks are: their YAML, their module, their reference crops."""
    problems = []
    tasks = store.tasks()
    problems += [str(p) for p in store.problems]
    assets = AssetsManager(module_dirs=[store.folder, *registry.image_dirs()])
    for learned in tasks.values():
        if learned.module and learned.module not in registry.modules:
            problems.append(f"{learned.path}: warning: learned for module {learned.module!r}, which is not loaded")
        for ref, line in _refs(learned.template.steps):
            if not assets.has(ref):
                problems.append(f"{learned.path}:{line or learned.template.line}: reference {ref!r} has no image "
                                f"(expected {store.images_dir / (ref + '.png')})")
    return problems


def learned_command(args: argparse.Namespace, registry: ModuleRegistry) -> int:
    """``modules learned | promote NAME | forget NAME | adopt NAME --module M`` (docs/learning.md)."""
    from remote.ai.vision_agent import list_learned

    store = learned_store(args)
    if args.action != "learned":
        if not args.name:
            raise BadInput(f"`remote modules {args.action}` needs the learned task's name",
                           hint="`remote modules learned` lists them")
        if args.action == "promote":
            promoted = store.promote(args.name)
            print(f"{args.name}: trusted ({promoted.clean_replays} clean replays so far)")
        elif args.action == "forget":
            print(f"forgot {args.name} ({store.forget(args.name)})")
        else:
            if not args.module:
                raise BadInput("adopt needs --module M: the module whose tasks.yaml takes the learned task")
            module = registry.get(args.module)
            written = store.adopt(args.name, module.path)
            print(f"{args.name} is now a task of module {module.name} ({written}); check it: remote modules check")
        return 0
    tasks = [t.summary() for t in store.tasks().values()]
    images = list_learned(AssetsManager(module_dirs=registry.image_dirs()))
    if args.json:
        print(json.dumps({"folder": str(store.folder), "tasks": tasks, "images": images,
                          "problems": [str(p) for p in store.problems]}, ensure_ascii=False, indent=1))
        return 0
    print(f"learned tasks in {store.folder}:" if tasks else
          f"no learned tasks in {store.folder} yet (a task the model solves is learned there)")
    for t in tasks:
        state = "set aside" if t["set_aside"] else "trusted" if t["trusted"] else "candidate"
        print(f"  {t['name']} [{state}] module {t['module'] or '-'}: {' | '.join(t['patterns'])}")
        print(f"      {t['replays']} replays ({t['clean_replays']} clean), {t['heals']} heals, last: "
              f"{t['last_result'] or '-'}; learned from {t['source_run'] or '-'}")
    for problem in store.problems:
        print(f"  problem: {problem}")
    if images:
        print("learned reference images (the vision model found a named target):")
        for e in images:
            print(f"  {e.get('name')}: {e.get('path')} (screen {e.get('screen_size')}, {e.get('created', '')})")
    return 0


def run(args: argparse.Namespace) -> int:
    registry = module_registry()
    if args.action == "check":
        return _check(args, registry)
    if args.action in ("learned", "promote", "forget", "adopt"):
        return learned_command(args, registry)
    return _list(args, registry)


def _check(args: argparse.Namespace, registry: ModuleRegistry) -> int:
    """`remote modules check`: every module's and learned task's problems and warnings; 1 when one is a problem."""
    problems, advice = check(registry), notes(registry)
    problems += learned_problems(learned_store(args), registry)
    errors = [p for p in problems if ": warning: " not in p]
    if args.json:
        print(json.dumps({"ok": not errors, "problems": errors,
                          "warnings": [p for p in problems if ": warning: " in p], "notes": advice},
                         ensure_ascii=False))
        return 1 if errors else 0
    for p in problems:
        print(p)
    for note in advice:
        print(f"note: {note}")
    n = sum(len(m.templates) for m in registry.modules.values())
    broken = f", {len(registry.broken)} not loadable ({', '.join(sorted(registry.broken))})" \
        if registry.broken else ""
    print(f"{len(registry.modules)} modules, {n} task templates{broken}: "
          + ("all good" if not problems else f"{len(errors)} problem(s), {len(problems) - len(errors)} "
             "warning(s)"))
    return 1 if errors else 0


def _list(args: argparse.Namespace, registry: ModuleRegistry) -> int:
    """`remote modules`: each module with its templates' patterns (``--json``: as data)."""
    data: list[dict[str, Any]] = [{"name": m.name, "display_name": m.display_name, "package": m.package, "default": m.default,
             "keywords": list(m.keywords), "path": str(m.path),
             "templates": [{"name": t.name, "patterns": list(t.patterns)} for t in m.templates]}
            for m in registry.modules.values()]
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return 0
    print(f"modules in {APPS_DIR}:")
    for m in data:
        print(f"\n{m['name']} ({m['display_name']}, {m['package'] or 'no package'})" + (" [default]" if m["default"] else ""))
        for t in m["templates"]:
            print(f"  {t['name']:20} " + " | ".join(t["patterns"]))
    if registry.problems:    # as `modules check` prints them: an error plain, a warning with "warning:"
        wrong = sum(not p.warning for p in registry.problems)
        print(f"\n{wrong} problem(s), {len(registry.problems) - wrong} warning(s) (`remote modules check`):")
    for problem in registry.problems:
        print(problem)
    if registry.broken:
        print(f"\nnot loadable: {', '.join(sorted(registry.broken))} (see `remote modules check`)")
    return 0
