"""report.html: a self-contained page a person can read, rebuilt from a run record folder alone.

Screens are embedded as small JPEG thumbnails with the located box (magenta),
the tap point (red cross) and competing candidates (orange) drawn on them.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from remote.core.imagefile import check_size
from remote.errors import BadInput

THUMB_WIDTH = 300


def annotate(image: Image.Image, bbox: Any = None, point: Any = None, candidates: Any = ()) -> Image.Image:
    """A copy of ``image`` with candidates, the box and the tap point drawn (device pixels)."""
    img = image.convert("RGB").copy()
    draw = ImageDraw.Draw(img)
    width = max(2, img.width // 200)
    for cand in candidates or ():
        box = cand.get("bbox") if isinstance(cand, dict) else cand
        if box:
            draw.rectangle(list(box), outline=(255, 150, 0), width=width)
    if bbox:
        draw.rectangle(list(bbox), outline=(0, 200, 0), width=width * 2)
    if point:
        x, y = point
        r = max(8, img.width // 60)
        draw.line([x - r, y, x + r, y], fill=(255, 0, 0), width=width * 2)
        draw.line([x, y - r, x, y + r], fill=(255, 0, 0), width=width * 2)
        draw.ellipse([x - r // 2, y - r // 2, x + r // 2, y + r // 2], outline=(255, 0, 0), width=width)
    return img


def _thumb_data_url(img: Image.Image) -> str:
    scale = THUMB_WIDTH / img.width
    small = img.resize((THUMB_WIDTH, max(1, round(img.height * scale))), Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    small.save(buf, "JPEG", quality=72)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def inside(run_dir: Path, name: Any) -> Path | None:
    """The file ``name`` of a record, only if it lies inside the record's folder (run.json is not trusted)."""
    if not isinstance(name, str) or not name:
        return None
    base = run_dir.resolve()
    path = (base / name).resolve()
    return path if base in path.parents and path.is_file() else None


def _screen_cell(run_dir: Path, name: str | None, step: dict[str, Any], *, with_marks: bool) -> str:
    caption = "before: located box, tap point" if with_marks else "after"
    path = inside(run_dir, name)
    if path is None or name is None:
        return f"<td class=noimg><div class=cap>{caption}</div>no screenshot (no look needed)</td>"
    try:
        check_size(Image.open(path).size, "screenshot")
    except (BadInput, OSError):
        return f"<td class=noimg><div class=cap>{caption}</div>unreadable or oversized screenshot</td>"
    with Image.open(path) as img:
        if with_marks:
            loc = step.get("locate_result") or {}
            img = annotate(img, step.get("bbox"), step.get("tap_point"),
                           loc.get("candidates") if not loc.get("reliable", True) else ())
        return (f'<td><div class=cap>{caption}</div>'
                f'<img src="{_thumb_data_url(img)}" alt="{html.escape(name)}"></td>')


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _step_rows(run_dir: Path, steps: list[dict[str, Any]]) -> str:
    rows = []
    for sr in steps:
        st = sr.get("step") or {}
        verdict = sr.get("verify_result") or {}
        usage = sr.get("model_usage") or {}
        timings = ", ".join(f"{k} {v:.0f} ms" for k, v in (sr.get("timings") or {}).items())
        conf = sr.get("confidence")
        facts = [
            ("action", f"{st.get('action')} {st.get('target_ref') or ''} {json.dumps(st.get('params') or {}, ensure_ascii=False)}"),
            ("description", st.get("description")),
            ("status", sr.get("status")),
            ("level", {0: "0 fire-and-forget", 1: "1 quick verify", 2: "2 locate and execute",
                       3: "3 model"}.get(sr.get("level"), sr.get("level"))),
            ("tier", sr.get("tier") or "—"),
            ("box", sr.get("bbox")),
            ("tap point", sr.get("tap_point")),
            ("confidence", f"{conf:.2f}" if isinstance(conf, int | float) else "—"),
            ("verdict", f"{verdict.get('outcome', '—')} ({verdict.get('method', '')}) {verdict.get('change_description', '')}"
             if verdict else "—"),
            ("times", f"{sr.get('elapsed', 0):.2f} s; {timings}"),
            ("model calls", usage.get("calls", 0)),
            ("retries", sr.get("retry_count", 0)),
            ("error", sr.get("error_message") or ""),
            ("notes", "; ".join(sr.get("notes") or [])),
        ]
        table = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in facts if v not in ("", None))
        arts = sr.get("artifacts") or {}
        status = _esc(sr.get("status"))
        rows.append(
            f'<section class="step {status}"><h3>Step {_esc(st.get("step"))}: {_esc(st.get("action"))} '
            f'<span class=badge>{status}</span></h3><table class=shots><tr>'
            f'{_screen_cell(run_dir, arts.get("before"), sr, with_marks=True)}'
            f'{_screen_cell(run_dir, arts.get("after"), sr, with_marks=False)}'
            f'<td class=facts><table>{table}</table></td></tr></table></section>')
    return "\n".join(rows)


CSS = """body{font-family:system-ui,'Noto Sans CJK SC','Microsoft YaHei',sans-serif;margin:2em;color:#222}
h1{font-size:1.4em} .badge{font-size:.8em;padding:2px 8px;border-radius:8px;background:#ddd}
.success .badge,.status-success{background:#c8f7c5} .failed .badge,.status-failed{background:#f7c5c5}
.skipped .badge{background:#f7ecc5} section.step{border-top:1px solid #ccc;padding:1em 0}
table.shots td{vertical-align:top;padding-right:1em} img{border:1px solid #999;max-width:300px}
.facts th{text-align:left;padding-right:1em;color:#555;font-weight:normal} td.noimg{color:#888;width:300px}
pre{background:#f4f4f4;padding:1em;overflow:auto} .cap{font-size:.8em;color:#777}"""


def render_report(run_dir: Path, data: dict[str, Any]) -> str:
    usage = data.get("model_usage") or {}
    plan = data.get("plan") or {}
    plan_lines = "\n".join(
        f"{s.get('step')}. {s.get('action')} {s.get('target_ref') or ''} "
        f"{json.dumps(s.get('params') or {}, ensure_ascii=False) if s.get('params') else ''} {s.get('description') or ''}"
        for s in plan.get("steps") or [])
    status = data.get("status", "")
    summary = [
        ("task", data.get("task")), ("module", data.get("module")), ("plan source", plan.get("source")),
        ("status", status), ("error", data.get("error")), ("started", data.get("started_at")),
        ("total time", f"{data.get('total_time', 0):.2f} s"),
        ("model calls", f"{usage.get('calls', 0)} ({usage.get('prompt_tokens', 0)} + "
                        f"{usage.get('completion_tokens', 0)} tokens)"),
        ("device", json.dumps(data.get("device") or {}, ensure_ascii=False)),
    ]
    head = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in summary if v)
    state = data.get("device_state")
    state_html = (f"<h2>Simulated phone after the run</h2><pre>{_esc(json.dumps(state, ensure_ascii=False, indent=1))}</pre>"
                  if state else "")
    return (f"<!doctype html><html lang=zh><head><meta charset=utf-8><title>remote: {_esc(data.get('task'))}</title>"
            f"<style>{CSS}</style></head><body><h1>{_esc(data.get('task'))} "
            f"<span class='badge status-{_esc(status)}'>{_esc(status)}</span></h1>"
            f"<table class=facts>{head}</table><h2>Plan</h2><pre>{_esc(plan_lines)}</pre>"
            f"<h2>Steps</h2>{_step_rows(run_dir, data.get('steps') or [])}{state_html}</body></html>")


def write_report(run_dir: str | Path) -> Path:
    """(Re)write ``report.html`` from ``run.json`` and the screens beside it."""
    run_dir = Path(run_dir)
    data = load_record(run_dir)
    out = run_dir / "report.html"
    out.write_text(render_report(run_dir, data), encoding="utf-8")
    return out

def load_record(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / "run.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{path} not found: is {run_dir} a run record folder?") from exc
