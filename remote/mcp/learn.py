"""``save_task``: the agent's own calls that did a task, saved as a learned task that runs with no model.

The session's journal (`remote.mcp.journal`) holds the acting calls that
succeeded since the session began, its last save or its last ``run_task``. Saved,
they become a candidate template through the compiler a model's run goes through
(`remote.runner.learning.compile_run`): targets as texts and labels of the tree,
crops where an element shows none, the sentence's values as ``{slots}``, anchors,
password fields refused. The check it ends with must pass on the screen now: the
targets the agent names, else the target its last ``wait_for`` found; the app in
front is checked too. A sequence with no such check is not saved (an "app in
front" alone proves nothing about the task).

Sensitive steps are marked by the module's rules as a model's are, so a replay
asks the person where the agent's call asked. The candidate is then replayed by
``run_task`` and ``remote run`` (docs/learning.md) and trusted after clean replays.
"""

from __future__ import annotations

from remote.apps.learned import LearnedStore
from remote.core.plan.checks import SuccessCheck
from remote.core.plan.sensitivity import mark
from remote.core.plan.steps import TaskPlan
from remote.core.records import FinalCheckResult, StepResult, StepStatus, TaskResult, TaskStatus
from remote.errors import ActionError, RemoteError
from remote.mcp.journal import Act
from remote.mcp.session import Session
from remote.runner.learner import acting_module
from remote.runner.learning import compile_run

CHECKS = 4


def save_task(session: Session, task: str, check: list[str], slots: dict[str, str]) -> str:
    """Save the journal's acts as a learned task for ``task``; what was saved, or an ActionError saying why
    nothing was."""
    store = _store(session)
    acts = list(session.journal.acts)
    if not acts:
        raise ActionError("nothing to save: no acting call has succeeded since this session began, its last "
                          "save_task or its last run_task",
                          hint="do the task with open_app, tap, type, key ... then call save_task")
    targets = _checks(session, check)
    package = session.front().get("package", "")
    session.gate.check(package, "save a task")
    screen = session.live_screen()
    missing = [t for t in targets if not _on(session, t, screen)]
    if missing:
        raise ActionError(f"the check does not pass on the screen now: {', '.join(missing)} not found",
                          hint="name what the finished screen shows (text:…, desc:…), as a screenshot lists it")
    _require_named(acts)
    words = _words(session, package)
    plan = TaskPlan(steps=[mark(a.step, words) for a in acts], source="mcp", module="",
                    success_check=SuccessCheck(app=package or None, target=tuple(targets)),
                    analysis={"slots": {k: str(v) for k, v in slots.items()}})
    result = TaskResult(status=TaskStatus.SUCCESS, task=task, plan=plan,
                        step_results=[StepResult(step=a.step, status=StepStatus.SUCCESS, tap_point=a.point,
                                                 screenshot_before=a.screen) for a in acts],
                        final_check=FinalCheckResult(True, [], plan.success_check.describe(), "tree"))
    module = acting_module(result, session.registry)
    compiled = compile_run(task, result, session.locator, stable_ids=module.stable_ids if module else False,
                           source_run="mcp session")
    if compiled.task is None:
        raise ActionError(f"not saved: {compiled.refused}")
    compiled.meta.update(module=module.name if module else "", app=module.package if module else package,
                         screen=list(session.adb.window_size()))
    try:
        saved = store.save(compiled.task, compiled.meta, compiled.crops)
    except (RemoteError, OSError) as exc:
        raise ActionError(f"could not save the learned task: {exc}") from exc
    session.journal.clear()
    return (f"saved {len(compiled.task['steps'])} steps as learned task {saved.name} ({saved.path}); patterns: "
            f"{' | '.join(saved.template.patterns)}; final check: {plan.success_check.describe()}. run_task (or "
            f"`remote run`) with such a sentence now replays it with no model; it is trusted after "
            f"{store.trust_after} clean replays")


def _checks(session: Session, check: list[str]) -> list[str]:
    """The targets the learned task's final check looks for: those given (at most ``CHECKS``), else the one
    the last wait_for found; an ActionError when there is none."""
    targets = [c.strip() for c in check if c.strip()][:CHECKS] or ([session.journal.seen] if session.journal.seen else [])
    if not targets:
        raise ActionError("a learned task needs the check its run ended with: none was given and no wait_for "
                          "found its target after the last act",
                          hint="pass check=[\"text:…\"] (what the finished screen shows), or call wait_for first")
    return targets


def _require_named(acts: list[Act]) -> None:
    """Every act can be written down: what it touched was on a readable UI tree, what it typed was read back
    (a password field is never stored); an ActionError naming the first that cannot."""
    blind = [n for n, a in enumerate(acts, start=1) if a.point is not None and a.screen is None]
    if blind:
        raise ActionError(f"act {blind[0]} of {len(acts)} touched a screen whose UI tree could not be read, so "
                          "what it touched cannot be named", hint="do the task again, then save it")
    unread = [n for n, a in enumerate(acts, start=1) if not a.checked]
    if unread:
        raise ActionError(f"act {unread[0]} of {len(acts)} typed with verify=false: whether its field was a "
                          "password field is not known, and a password is never stored",
                          hint="type with verify on (the default), then save")


def _store(session: Session) -> LearnedStore:
    store = session.options.learned
    if store is None or not session.options.learn:
        raise ActionError("learning is off for this server (--no-learn, or no learned-task folder)",
                          hint="start `remote mcp` without --no-learn")
    return store


def _on(session: Session, target: str, screen: object) -> bool:
    found = session.locator.locate_with_fallback(target, ["tree", "visual", "ocr"], screen)
    return bool(found.success and found.reliable)


def _words(session: Session, package: str) -> tuple[str, ...]:
    """The sensitive words of the module of the app in front (every module's words when none claims it)."""
    for module in session.registry.modules.values():
        if module.package == package:
            return tuple(module.sensitive)
    return tuple(w for m in session.registry.modules.values() for w in m.sensitive)
