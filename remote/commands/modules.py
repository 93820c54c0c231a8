"""`remote modules [list|check|learned]`: what the app modules can do, and whether they are sound."""

from __future__ import annotations

import argparse
import json
from typing import Any

from remote.apps import APPS_DIR, ModuleRegistry
from remote.apps.schema import step_targets, walk
from remote.commands._modules import registry as module_registry
from remote.core.locate.assets import AssetsManager
from remote.core.locate.target_ref import parse_role, parse_target


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
        tasks_file = module.path / "tasks.yaml"
        for template in module.templates:
            for ref, line in _targets(template.steps):
                if parse_target(ref)[0] == "id":
                    out.append(f"{tasks_file}:{line or template.line}: warning: task {template.name}: {ref!r} names "
                               f"a resource id, which {module.display_name or module.name} may rename in its next "
                               "release (name it by text:, desc:, role:CLASS:LABEL or editable:, or declare "
                               "stable_ids: true in config.yaml if the app keeps its ids)")
        for home in module.home_refs:
            if parse_target(home)[0] != "id":
                continue
            out.append(f"{module.path / 'config.yaml'}: warning: home_ref {home!r} names a resource id "
                       "and the module does not declare stable_ids: true")
    return out


def check(registry: ModuleRegistry) -> list[str]:
    """Every problem of every module, once each, as ``file:line: message (hint)``; warnings say so."""
    problems = [str(p) for p in registry.problems]
    for module in registry.modules.values():
        assets = AssetsManager(module_dirs=[module.path])
        problems.extend(assets.problems())
        tasks_file = module.path / "tasks.yaml"
        for template in module.templates:
            for ref, line in _refs(template.steps):
                if not assets.has(ref):
                    problems.append(f"{tasks_file}:{line or template.line}: task {template.name}: reference "
                                    f"{ref!r} has no image (add images/{ref}.png or an alias)")
            for ref, line in _targets(template.steps):
                kind, value = parse_target(ref)
                if kind == "role" and not parse_role(value)[0]:
                    problems.append(f"{tasks_file}:{line or template.line}: task {template.name}: {ref!r} names no "
                                    "class (role:CLASS:LABEL, e.g. role:Button:发送)")
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


def run(args: argparse.Namespace) -> int:
    registry = module_registry()
    if args.action == "check":
        problems, advice = check(registry), notes(registry)
        if args.json:
            errors = [p for p in problems if ": warning: " not in p]
            print(json.dumps({"ok": not errors, "problems": errors,
                              "warnings": [p for p in problems if ": warning: " in p], "notes": advice},
                             ensure_ascii=False))
        else:
            for p in problems:
                print(p)
            for note in advice:
                print(f"note: {note}")
            n = sum(len(m.templates) for m in registry.modules.values())
            errors = [p for p in problems if ": warning: " not in p]
            broken = f", {len(registry.broken)} not loadable ({', '.join(sorted(registry.broken))})" \
                if registry.broken else ""
            print(f"{len(registry.modules)} modules, {n} task templates{broken}: "
                  + ("all good" if not problems else f"{len(errors)} problem(s), {len(problems) - len(errors)} "
                     "warning(s)"))
        return 1 if any(": warning: " not in p for p in problems) else 0
    if args.action == "learned":
        from remote.ai.vision_agent import list_learned

        entries = list_learned(AssetsManager(module_dirs=registry.image_dirs()))
        if args.json:
            print(json.dumps(entries, ensure_ascii=False, indent=1))
        elif not entries:
            print("no learned reference images yet (they appear when the vision model finds a named target)")
        else:
            for e in entries:
                print(f"{e.get('name')}: {e.get('path')} (screen {e.get('screen_size')}, {e.get('created', '')})")
        return 0
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
    for problem in registry.problems:
        print(f"\nproblem: {problem}")
    if registry.broken:
        print(f"\nnot loadable: {', '.join(sorted(registry.broken))} (see `remote modules check`)")
    return 0
