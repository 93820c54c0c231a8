"""report.html: a self-contained page a person can read, rebuilt from a run record folder alone.

From the top: the outcome and the final check in words; the run's facts; a step
table whose verdicts are sentences, with the time each phase took; every plan and
replan with the model's reasons; model calls and tokens per purpose (planning
included); the popups that were closed, as screenshots; each step's details
(screens with the located box, the tap point and competing candidates drawn)
folded in ``<details>``; the raw record (the simulated phone's state too) folded
at the end. It embeds its own CJK font (``report_font``) and loads nothing.

Records of older versions (keys missing) and damaged ones (odd types) still
render: every reader takes what it finds (``report_words``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from remote.core.locate.ui_tree import UITreeError, parse_hierarchy
from remote.core.record import report_font
from remote.core.record.report_html import annotate, badge, esc, facts, figure, grid, legend, page, time_bar
from remote.core.record.report_words import (
    answer_text,
    check_words,
    d,
    item_result,
    num,
    outcome,
    seconds,
    seq,
    short,
    tree_change,
    verdict,
)
from remote.core.safe_files import write_atomic
from remote.errors import BadInput

__all__ = ["annotate", "inside", "load_record", "render_report", "warm", "write_report"]

MAX_DUMP_BYTES = 8_000_000      # a uiautomator dump of a real screen is 10-200 kB
MAX_RAW_CHARS = 2_000_000       # the folded run.json; a longer one is cut (the file itself is beside the report)
MAX_RECORD_BYTES = 20_000_000   # run.json of a 100-step run is well under 1 MB; parsing 200 MB takes 1 GB and minutes


def inside(run_dir: Path, name: Any) -> Path | None:
    """The file ``name`` of a record, only if it lies inside the record's folder (run.json is not trusted)."""
    if not isinstance(name, str) or not name:
        return None
    base = run_dir.resolve()
    path = (base / name).resolve()
    return path if base in path.parents and path.is_file() else None


def _tree_pairs(run_dir: Path, name: Any) -> list[tuple[str, str]] | None:
    """(field, text) of every node of a stored dump, None when there is none (or it cannot be read)."""
    path = inside(run_dir, name)
    try:
        if path is None or path.stat().st_size > MAX_DUMP_BYTES:
            return None
        tree = parse_hierarchy(path.read_bytes())
    except (OSError, UITreeError):
        return None
    return [(n.resource_id or n.class_name, n.text or n.content_desc) for n in tree.nodes if tree.on_screen(n)]


def _change(run_dir: Path, sr: dict[str, Any]) -> str:
    arts = d(sr.get("artifacts"))
    before, after = _tree_pairs(run_dir, arts.get("before_xml")), _tree_pairs(run_dir, arts.get("after_xml"))
    return tree_change(before, after) if before is not None and after is not None else ""


def label(step: dict[str, Any]) -> str:
    """``tap text:发送``, ``input_text '你好'``, ``launch_app com.tencent.mm``."""
    params = d(step.get("params"))
    what = step.get("target_ref") or next((params[k] for k in ("package", "app", "name", "url", "key", "direction",
                                                               "number", "ms") if params.get(k) not in (None, "")), "")
    text = f" '{short(params['text'], 40)}'" if params.get("text") not in (None, "") else ""
    return f"{step.get('action') or '?'} {short(what, 60)}".strip() + text


def _steps(run_dir: Path, steps: list[dict[str, Any]]) -> str:
    rows, scale = [], max((num(sr.get("elapsed")) or 0 for sr in steps), default=0) * 1000
    for i, sr in enumerate(steps, 1):
        st, status = d(sr.get("step")), str(sr.get("status") or "unknown")
        timings = {str(k): v for k, v in d(sr.get("timings")).items() if num(v)}
        elapsed = (num(sr.get("elapsed")) or 0) * 1000
        phases = " · ".join(f"{k} {seconds(v)}" for k, v in timings.items() if v >= 1)
        desc = f"<div class=sub>{esc(short(st.get('description'), 80))}</div>" if st.get("description") else ""
        rows.append([f"<a href='#step-{i}'>{esc(st.get('step', i))}</a>", esc(label(st)) + desc,
                     badge(status, status.replace("_", " ")), esc(verdict(sr, _change(run_dir, sr))),
                     f"{esc(seconds(elapsed))}{time_bar(timings, elapsed, scale)}<div class=sub>{esc(phases)}</div>"])
    if not rows:
        return "<h2>Steps</h2><p>No step ran.</p>"
    return "<h2>Steps</h2>" + grid(["#", "step", "result", "what happened", "time"], rows) + legend()


def _header(data: dict[str, Any]) -> str:
    head, why = outcome(data)
    status = str(data.get("status") or "")
    tone = "ok" if status == "success" else "bad" if status in ("failed", "aborted", "budget_exceeded") else "unsure"
    return (f"<h1>{esc(data.get('task') or '(no task recorded)')}</h1>"
            f"<div class='outcome {tone}'><b>{esc(head)}</b>{esc(why)}</div>{_final_check(data)}")


def _final_check(data: dict[str, Any]) -> str:
    final = d(data.get("final_check"))
    if not final:
        ended = "the run ended before it" if data.get("status") != "success" else "this record has none"
        return f"<h2>Final check</h2><p>No final check was made: {esc(ended)}.</p>"
    rows = [[esc(item.get("what")), badge(item_result(item.get("passed"))), esc(item.get("evidence")),
             esc(item.get("method"))] for item in map(d, seq(final.get("items")))]
    passed = final.get("passed")
    verdict_word = "passed" if passed is True else "failed" if passed is False else "could not tell"
    how = f" (by {final.get('method')})" if final.get("method") else ""
    table = grid(["what must hold", "on the final screen", "evidence", "how"], rows) if rows else ""
    return (f"<h2>Final check: {esc(verdict_word)}{esc(how)}</h2><p>{esc(final.get('summary'))}</p>{table}")


def _answer(data: dict[str, Any]) -> str:
    if data.get("answer") is None:
        return ""
    return f"<h2>Answer</h2><p class=answer><b>{esc(short(answer_text(data['answer']), 400))}</b></p>"


def _summary(data: dict[str, Any]) -> str:
    steps = [d(s) for s in seq(data.get("steps"))]
    ok = sum(s.get("status") == "success" for s in steps)
    usage, llm, device = d(data.get("model_usage")), d(data.get("llm")), d(data.get("device"))
    size = device.get("size")
    total = num(data.get("total_time"))
    return "<h2>The run</h2>" + facts([
        ("module", data.get("module")), ("plan", d(data.get("plan")).get("source")),
        ("steps", f"{ok} of {len(steps)} succeeded" if steps else ""),
        ("started", data.get("started_at")), ("total time", seconds(total * 1000) if total is not None else ""),
        ("model calls", f"{usage.get('calls', 0)} ({usage.get('prompt_tokens', 0)} + "
                        f"{usage.get('completion_tokens', 0)} tokens)"),
        ("model", " ".join(str(x) for x in (llm.get("provider"), llm.get("model")) if x)),
        ("device", " ".join(str(x) for x in (device.get("serial"), "x".join(map(str, size))
                                             if isinstance(size, list) else "", device.get("error")) if x)),
        ("locator strategy", data.get("strategy")), ("dry run", "yes: nothing was touched" if data.get("dry_run")
                                                     is True else ""),
        ("learning", learning_words(d(data.get("learning")))),
    ])


def learning_words(info: dict[str, Any]) -> str:
    """``learned task learned_1f2e, replay 3, healed step 5`` / ``learned as learned_1f2e`` / why not (docs/learning.md)."""
    if info.get("replayed"):
        healed = [str(n) for n in seq(info.get("healed_steps"))]
        return (f"learned task {info['replayed']}" + (f", replay {info['replay']}" if info.get("replay") else "")
                + (f", healed step {', '.join(healed)}" if healed else "")
                + (", handed over to the planner" if info.get("handed_over") else "")
                + (", trusted" if info.get("trusted") else "") + (", set aside" if info.get("set_aside") else ""))
    if info.get("learned"):
        return f"learned as {info['learned']}: the same sentence now runs with no model ({info.get('file', '')})"
    return f"not learned: {info['why_not']}" if info.get("why_not") else ""


def _analysis(analysis: dict[str, Any]) -> str:
    rows = [(str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
            for k, v in analysis.items() if k != "replans"]
    return facts([(k, short(v, 400)) for k, v in rows])


def _plan_steps(steps: list[Any]) -> str:
    items = "".join(f"<li>{esc(label(s))}{' — ' + esc(short(s.get('description'), 80)) if s.get('description') else ''}"
                    "</li>" for s in map(d, steps))
    return f"<ol class=plan>{items}</ol>" if items else "<p>(no steps)</p>"


def _plans(data: dict[str, Any]) -> str:
    plan = d(data.get("plan"))
    if not plan:
        reply = data.get("model_reply")
        shown = f"<p>The model's last reply, which could not be used:</p><pre>{esc(short(reply, 4000))}</pre>" \
            if isinstance(reply, str) and reply else ""
        return f"<h2>Plans</h2><p>No plan was made.</p>{shown}"
    analysis = d(plan.get("analysis"))
    source = str(plan.get("source") or "")
    origin = {"template": f"the {data.get('module') or ''} module's task template (no model call)",
              "learned": "a learned task (no model call)", "model": "the model"}.get(source, source or "unknown")
    out = [f"<h2>Plans</h2><h3>Plan 1, from {esc(origin)}</h3>",
           "<p class=sub>the model's analysis:</p>" if source == "model" and analysis else "", _analysis(analysis),
           _plan_steps(seq(plan.get("steps"))),
           f"<p>Final check: {esc(check_words(plan.get('success_check')))}</p>"]
    for n, rp in enumerate(map(d, seq(analysis.get("replans"))), 2):
        out += [f"<h3>Plan {n}, replanned by the model after step {esc(rp.get('after_step'))} failed</h3>",
                f"<p>Why: {esc(short(rp.get('reason'), 400))}</p>",
                "<p class=sub>the model's analysis:</p>" if d(rp.get("analysis")) else "",
                _analysis(d(rp.get("analysis"))), _plan_steps(seq(rp.get("steps"))),
                f"<p>Final check: {esc(check_words(rp.get('success_check')))}</p>"]
    return "".join(out)


def _model_calls(data: dict[str, Any]) -> str:
    usage = d(data.get("model_usage"))
    by_purpose = {str(k): d(v) for k, v in d(usage.get("by_purpose")).items()}
    if not usage.get("calls") and not by_purpose:
        return "<h2>Model calls</h2><p>None: every step was planned and found without a model.</p>"
    in_steps: dict[str, float] = {}
    for sr in map(d, seq(data.get("steps"))):
        for purpose, slot in d(d(sr.get("model_usage")).get("by_purpose")).items():
            in_steps[str(purpose)] = in_steps.get(str(purpose), 0) + (num(d(slot).get("calls")) or 0)
    rows = []
    for purpose, slot in sorted(by_purpose.items(), key=lambda kv: ("plan", "locate", "verify").index(kv[0])
                                if kv[0] in ("plan", "locate", "verify") else 9):
        calls, during = num(slot.get("calls")) or 0, in_steps.get(purpose, 0)
        rows.append([esc(purpose), f"{calls:.0f}", f"{during:.0f}", f"{max(0, calls - during):.0f}",
                     esc(slot.get("prompt_tokens", 0)), esc(slot.get("completion_tokens", 0)),
                     esc(seconds((num(slot.get("seconds")) or 0) * 1000))])
    rows.append(["<b>all</b>", esc(usage.get("calls", 0)), f"{sum(in_steps.values()):.0f}",
                 f"{max(0, (num(usage.get('calls')) or 0) - sum(in_steps.values())):.0f}",
                 esc(usage.get("prompt_tokens", 0)), esc(usage.get("completion_tokens", 0)),
                 esc(seconds((num(usage.get("seconds")) or 0) * 1000))])
    return ("<h2>Model calls</h2>" + grid(["purpose", "calls", "during steps", "outside steps", "prompt tokens",
                                           "completion tokens", "time"], rows, numeric=(1, 2, 3, 4, 5, 6))
            + "<p class=sub>Outside steps: planning before the first step, replanning, the final check.</p>")


def _popups(run_dir: Path, steps: list[dict[str, Any]]) -> str:
    cards = []
    for i, sr in enumerate(steps, 1):
        for popup in map(d, seq(sr.get("popups"))):
            caption = f"step {d(sr.get('step')).get('step', i)}: {popup.get('type') or 'popup'} — " \
                      f"{short(popup.get('description'), 120)}"
            cards.append(figure(inside(run_dir, popup.get("image")), caption))
    if not cards:
        return ""
    return f"<h2>Popups closed</h2><div class=popups>{''.join(cards)}</div>"


def _step_details(run_dir: Path, steps: list[dict[str, Any]]) -> str:
    out = []
    for i, sr in enumerate(steps, 1):
        st, arts, loc = d(sr.get("step")), d(sr.get("artifacts")), d(sr.get("locate_result"))
        marks = {"bbox": sr.get("bbox"), "point": sr.get("tap_point"),
                 "candidates": seq(loc.get("candidates")) if loc.get("reliable") is False else ()}
        marked = _marks_ok(marks) and bool(marks["bbox"] or marks["point"] or marks["candidates"])
        shots = (figure(inside(run_dir, arts.get("before")),
                        "before: located box (green), tap point (red)" if marked else "before",
                        marks if marked else None, tree=inside(run_dir, arts.get("before_xml")))
                 + figure(inside(run_dir, arts.get("after")), "after", tree=inside(run_dir, arts.get("after_xml"))))
        status = str(sr.get("status") or "unknown")
        out.append(f"<details id='step-{i}'><summary>Step {esc(st.get('step', i))}: {esc(label(st))} "
                   f"{badge(status, status.replace('_', ' '))}</summary><div class=shots>{shots}"
                   f"<div>{facts(_step_facts(sr))}</div></div></details>")
    return "<h2>Step details</h2>" + "".join(out) if out else ""


def _marks_ok(marks: dict[str, Any]) -> bool:
    def box(value: Any, size: int) -> bool:     # pixels of a screen: anything else is not drawn
        if not isinstance(value, list | tuple) or len(value) != size:
            return False
        coords = [num(x) for x in value]
        return all(c is not None and abs(c) < 1e5 for c in coords)
    cands = [c.get("bbox") if isinstance(c, dict) else c for c in marks["candidates"]]
    return (marks["bbox"] is None or box(marks["bbox"], 4)) and (marks["point"] is None or box(marks["point"], 2)) \
        and all(box(c, 4) for c in cands)


def _step_facts(sr: dict[str, Any]) -> list[tuple[str, Any]]:
    """A step's facts for its details, in the order shown: what it was asked, how its target was found, how it
    was checked and what it cost, how it ended."""
    return [*_asked(d(sr.get("step"))), *_found(sr, d(sr.get("locate_result"))), *_checked(sr), *_ended(sr)]


def _asked(st: dict[str, Any]) -> list[tuple[str, Any]]:
    params = {k: p for k, p in d(st.get("params")).items() if p not in (None, "", {}, [])}
    targets = " | ".join(str(t) for t in [st.get("target_ref"), *seq(st.get("alternatives"))] if t)
    return [("description", st.get("description")), ("targets", targets),
            ("parameters", json.dumps(params, ensure_ascii=False) if params else "")]


def _found(sr: dict[str, Any], loc: dict[str, Any]) -> list[tuple[str, Any]]:
    conf = num(sr.get("confidence"))
    return [
        ("found by", f"{loc.get('method_used') or sr.get('tier') or ''} {loc.get('matched_ref') or ''}".strip()
         if loc.get("success") or (not loc and sr.get("tier")) else ""),
        ("looked", ", ".join(str(t) for t in seq(loc.get("tiers_tried"))) if loc.get("success") is False else ""),
        ("confidence", f"{conf:.2f}" if conf is not None else ""), ("box", sr.get("bbox")),
        ("tap point", sr.get("tap_point")),
        ("look-alikes", f"{len(seq(loc.get('candidates')))} candidates" if loc.get("reliable") is False else ""),
    ]


def _checked(sr: dict[str, Any]) -> list[tuple[str, Any]]:
    v, usage = d(sr.get("verify_result")), d(sr.get("model_usage"))
    return [
        ("check after", " — ".join(str(x) for x in (v.get("method"), v.get("change_description"),
                                                    v.get("current_state"), v.get("suggestion_detail")) if x)),
        ("time", " · ".join(f"{k} {seconds(num(t))}" for k, t in d(sr.get("timings")).items() if num(t) is not None)),
        ("model calls", ", ".join(f"{d(s).get('calls', 0)} {p}" for p, s in d(usage.get("by_purpose")).items())),
    ]


def _ended(sr: dict[str, Any]) -> list[tuple[str, Any]]:
    parent = d(sr.get("step")).get("parent")
    return [
        ("in block", f"step {parent}" if parent else ""),
        ("looks", "; ".join(f"{d(lk).get('kind')} {d(lk).get('target')}: {d(lk).get('evidence')}"
                             for lk in seq(sr.get("looks")))[:600]),
        ("retries", sr.get("retry_count") or ""), ("failure", sr.get("failure")), ("error", sr.get("error_message")),
        ("notes", "; ".join(str(n) for n in seq(sr.get("notes")))),
    ]


def _raw(data: dict[str, Any]) -> str:
    out = ["<h2>Raw record</h2>"]
    state = data.get("device_state")
    if state:
        commands = len(seq(d(state).get("commands")))
        out.append(f"<details><summary>The simulated phone after the run ({commands} shell commands)</summary>"
                   f"<pre>{esc(json.dumps(state, ensure_ascii=False, indent=1))}</pre></details>")
    rest = {k: v for k, v in data.items() if k != "device_state"}
    text = json.dumps(rest, ensure_ascii=False, indent=1, default=str)
    cut = f"\n… cut at {MAX_RAW_CHARS} characters: see run.json" if len(text) > MAX_RAW_CHARS else ""
    out.append(f"<details><summary>run.json</summary><pre>{esc(text[:MAX_RAW_CHARS] + cut)}</pre></details>")
    return "".join(out)


def render_report(run_dir: Path, data: dict[str, Any]) -> str:
    """The page for the record ``data`` of the folder ``run_dir`` (screens are read from there)."""
    data = d(data)
    steps = [d(s) for s in seq(data.get("steps"))]
    body = "".join([_header(data), _answer(data), _summary(data), _steps(run_dir, steps), _popups(run_dir, steps),
                    _plans(data),
                    _model_calls(data), _step_details(run_dir, steps), _raw(data)])
    return page(f"remote: {short(data.get('task'), 80)}", body)


def warm(run_dir: Path, data: dict[str, Any]) -> None:
    """Make what of the report a finished step no longer changes (its screens' thumbnails, remembered by
    ``report_html``), and set up the font cutter, so the run's final report finds them ready."""
    steps = [d(s) for s in seq(d(data).get("steps"))]
    _step_details(run_dir, steps)
    _popups(run_dir, steps)
    report_font.warm()


def write_report(run_dir: str | Path) -> Path:
    """(Re)write ``report.html`` from ``run.json`` and the screens beside it."""
    run_dir = Path(run_dir)
    data = load_record(run_dir)
    out = run_dir / "report.html"
    write_atomic(out, render_report(run_dir, data))
    return out


def load_record(run_dir: str | Path) -> dict[str, Any]:
    """run.json of a record folder; BadInput when it is missing, not JSON, not a record, larger than
    ``MAX_RECORD_BYTES`` (refused before it is read), or a link to a file outside the folder."""
    path = Path(run_dir) / "run.json"
    try:
        if path.is_symlink() and inside(Path(run_dir), "run.json") is None:
            raise BadInput(f"{path} links to a file outside its record folder: not read")
        if path.exists() and not path.is_file():
            raise BadInput(f"{path} is not a regular file: not read")
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise BadInput(f"{path} is {path.stat().st_size // 1_000_000} MB: larger than a run record "
                           f"({MAX_RECORD_BYTES // 1_000_000} MB at most); not read")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BadInput(f"{path} not found: is {run_dir} a run record folder?") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"{path} is not readable JSON ({short(exc, 120)})") from exc
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not isinstance(data, dict):
        raise BadInput(f"{path} is not a run record (a JSON object is expected)")
    return data
