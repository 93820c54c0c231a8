"""The studio's web app: the page, and the JSON API under it (docs/studio.md lists every route).

Every answer is JSON but the images; every error is ``{"error", "hint"}`` with a
status that says whose it is (400 the request, 404 nothing there, 409 the phone
or the page must do something first, 502 the phone broke): `remote.studio.web`.
The phone panel, new modules and the export are in `remote.studio.panel`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from remote.apps import AppModule, ModuleRegistry
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.records import FailureReason
from remote.errors import BadInput, LocateError
from remote.runner.offline import module_locator
from remote.studio import panel
from remote.studio.acting import Acts, Busy, NeedsYes
from remote.studio.draft import Draft, add_kind, plan_of
from remote.studio.guard import Guard
from remote.studio.inspector import best_target, elements, inspect_point
from remote.studio.lines import parse_line
from remote.studio.recording import Recorder
from remote.studio.runs import RunView
from remote.studio.screens import ScreenSource, encode
from remote.studio.web import endpoint, number, whole

logger = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent / "static"
# The simulated phone's own font (WenQuanYi Micro Hei, a subset: Apache-2.0, remote/assets/fonts/README.md), so
# the page shows the phone's Chinese on a machine without CJK fonts; others fall back to the system's.
CJK_FONT = Path(__file__).resolve().parent.parent / "assets" / "fonts" / "WenQuanYiMicroHeiSubset.ttf"
Handler = Callable[["Studio", Request, dict[str, Any]], Any]


@dataclass
class Studio:
    """What the routes share: the screens, the modules, the draft, the acts, the run record."""

    source: ScreenSource
    registry: ModuleRegistry
    module: AppModule
    acts: Acts
    run: RunView | None = None
    mode: str = "live"                       # live | file
    reload: Callable[[], ModuleRegistry] | None = None   # the modules read again (after a save)
    draft: Draft = field(init=False)
    recorder: Recorder = field(init=False)

    def __post_init__(self) -> None:
        self.reset(self.module)

    def reset(self, module: AppModule) -> None:
        self.module = module
        self.draft = Draft(module)
        self.recorder = Recorder(self.source, self.draft, self.acts, self.locator())

    def locator(self) -> HybridLocator:
        """The locator a run of the module uses, without a model (the inspector costs nothing)."""
        return module_locator(self.registry, self.module.name)

    def home_of(self, package: str) -> tuple[str, ...]:
        """The home page markers of the app ``package`` (its module's ``home_ref``), () when no module says."""
        for module in self.registry.modules.values():
            if module.package == package and module.home_refs:
                return module.home_refs
        return ()


# ---------------------------------------------------------------------- routes
def info(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    screen = studio.source.screen()
    return {"mode": studio.mode, "size": list(screen.size), "module": studio.module.name,
            "modules": sorted(studio.registry.modules), "run": studio.run is not None,
            "recording": studio.recorder.on, "asks": studio.acts.settings.person is not None}


def screen_png(studio: Studio, request: Request, body: dict[str, Any]) -> Response:
    fmt = request.query_params.get("format", "png")
    if fmt not in ("png", "jpeg"):
        raise BadInput(f"format {fmt[:10]!r}: png or jpeg")
    image = studio.source.frame()
    data, media = encode(image, fmt)
    return Response(data, media_type=media, headers={"Cache-Control": "no-store",
                                                      "X-Screen-Size": f"{image.width}x{image.height}"})


def screen_elements(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    screen = studio.source.screen(fresh=request.query_params.get("fresh", "1") != "0")
    tree = screen.tree()
    return {"elements": elements(tree), "size": list(screen.size), "tree": tree is not None}


def inspect(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    x, y = number(body, "x"), number(body, "y")
    step = body.get("step")
    # the screen as it is now (the page shows live frames; the phone may have moved on its own), with its tree
    screen = studio.run.screen(whole(step, "step")) if step is not None and studio.run else \
        studio.source.screen(fresh=True)
    w, h = screen.size
    if not (0 <= x < w and 0 <= y < h):
        raise BadInput(f"({x}, {y}) is not on the {w}x{h} screen", hint="x and y are device pixels")
    found = inspect_point(screen, (x, y), studio.locator(), studio.draft.shelf,
                          stable_ids=studio.module.stable_ids)
    best = best_target(found)
    return {"point": [x, y], "candidates": [c.to_dict() for c in found],
            "best": best.target_ref if best else None, "tree": screen.tree() is not None}


def crop_png(studio: Studio, request: Request, body: dict[str, Any]) -> Response:
    name = request.path_params["name"]
    crop = studio.draft.crops.get(name) or studio.draft.shelf.get(name)
    if crop is None:
        raise LocateError(f"no crop named {name[:40]!r}")
    return Response(encode(crop[0], "png")[0], media_type="image/png")


def act(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    step = body.get("step")
    if not isinstance(step, dict):
        raise BadInput("POST /api/act wants {\"step\": {...}}: one step as in tasks.yaml")
    plan = plan_of(studio.module, {"name": "act", "patterns": ["studio act"], "steps": [step]},
                   studio.draft.examples)
    return studio.acts.run(plan, f"studio: {plan.steps[0].label}",
                           crops={**studio.draft.shelf.images, **studio.draft.crops})


def template(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    with studio.draft.lock:
        if request.method == "POST":
            if body.get("new") is True or "module" in body and body["module"] != studio.module.name:
                studio.reset(studio.registry.get(str(body.get("module") or studio.module.name)))
            studio.draft.set_task(body)
        return studio.draft.state()


def template_steps(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """Append a step (``{"step": ...}``, or ``{"kind", "target_ref", "text", "slot"}`` as the page's buttons
    say it); with ``"run": true`` the new steps also run on the phone (the result beside)."""
    with studio.draft.lock:
        count = len(studio.draft.steps)
        if "step" in body:
            studio.draft.add_step(body["step"])
        else:
            kind = str(body.get("kind", ""))
            text = studio.source.front() if kind in ("launch", "app") else str(body.get("text") or "")
            add_kind(studio.draft, kind, str(body.get("target_ref") or ""), text=text,
                     slot=str(body.get("slot") or ""), home=studio.home_of(text) if kind == "launch" else ())
        added = len(studio.draft.steps) - count
    out = studio.draft.state()
    if body.get("run") is True and added:
        n = len(studio.draft.steps)
        try:
            out["result"] = studio.acts.run(studio.draft.plan(n - added + 1, n), f"studio: {studio.draft.name} "
                                            f"step {n}", crops=studio.draft.crops)
        except (NeedsYes, Busy):
            for _ in range(added):               # refused before it ran (a sensitive step nobody could allow)
                studio.draft.remove_step(len(studio.draft.steps))
            raise
        out = studio.draft.state() | {"result": out["result"]}
    return out


def template_step(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """One step: deleted, replaced (``{"line": "{action: tap, ...}"}`` as edited on the page, or ``{"step"}``),
    or moved (``{"to": M}``, dragged)."""
    n = whole(request.path_params.get("n"), "n")
    with studio.draft.lock:
        if request.method == "DELETE":
            studio.draft.remove_step(n)
        elif "to" in body:
            studio.draft.move_step(n, whole(body["to"], "to"))
        else:
            studio.draft.replace_step(n, parse_line(body["line"]) if "line" in body else body.get("step"))
        return studio.draft.state()


def template_run(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    first = whole(body.get("from", 1), "from")
    last = whole(body["to"], "to") if body.get("to") is not None else None
    plan = studio.draft.plan(first, last)
    out = studio.acts.run(plan, f"studio: {studio.draft.name} steps {first}-{last or len(studio.draft.steps)}",
                          crops=studio.draft.crops)
    return already_there(studio, out, first)


def already_there(studio: Studio, out: dict[str, Any], first: int) -> dict[str, Any]:
    """A step that changed nothing, where the screen already shows what the template looks for next (the next
    step's target, or the final check's): said so, as the cause, instead of the runner's bare "no visible change"
    (the phone was already in the state the step leads to, e.g. an app resumed on the page a tap would open)."""
    for step in out["steps"]:
        if step.get("failure") != FailureReason.NO_CHANGE.value:
            continue
        n = first - 1 + int(step["step"])
        later = studio.draft.steps[n:n + 1]
        wanted = [t for s in later for t in _targets(s)] + _targets(studio.draft.success_check)
        screen = studio.source.screen(fresh=True)
        seen = next((t for t in wanted if studio.locator().locate(t, screen).success), None)
        if seen is not None:
            said = (f"the screen was already in the state step {n} leads to: it shows {seen}, which "
                    f"{'step ' + str(n + 1) if seen in _targets(later[0] if later else {}) else 'the final check'} "
                    "looks for; nothing was left for this step to change (start from the app's home: launch this app)")
            step["notes"] = [*step.get("notes", []), said]
            out["error"] = f"step {n}: {said}"
    return out


def _targets(value: Any) -> list[str]:
    """The target_refs a step or a success_check names (its target_ref / target, as one or a list)."""
    if not isinstance(value, dict):
        return []
    found = value.get("target_ref") or value.get("target") or []
    return [t for t in ([found] if isinstance(found, str) else found) if isinstance(t, str)]


def save(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    with studio.draft.lock:
        module = studio.registry.get(str(body.get("module") or studio.module.name))
        studio.draft.module = module
        studio.draft.set_task(body)
        path = studio.draft.save(module.path)
        state = studio.draft.state() | {"saved": str(path)}
        if studio.reload is not None:
            studio.registry = studio.acts.registry = studio.reload()
        studio.reset(studio.registry.get(module.name))
        return state


def record(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    what = request.path_params.get("what", "")
    if what == "start":
        return studio.recorder.start(studio.home_of) | {"template": studio.draft.state()}
    if what == "stop":
        return studio.recorder.stop() | {"template": studio.draft.state()}
    return studio.recorder.act(body) | {"template": studio.draft.state()}


def run_summary(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    return _run(studio).summary()


def run_image(studio: Studio, request: Request, body: dict[str, Any]) -> Response:
    image = _run(studio).image(whole(request.path_params["n"], "n"), request.path_params["phase"])
    return Response(encode(image, "png")[0], media_type="image/png")


def run_redecide(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    n = whole(request.path_params["n"], "n")
    return {"step": n, "decisions": _run(studio).redecide(n)}


# ---------------------------------------------------------------------- the app
def build_app(studio: Studio, *, host: str = "127.0.0.1", token: str | None = None) -> Any:
    def route(path: str, handler: Handler, methods: tuple[str, ...] = ("GET",)) -> Route:
        return Route(path, endpoint(studio, handler), methods=list(methods))

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def font(request: Request) -> Response:
        return FileResponse(CJK_FONT, media_type="font/ttf")

    routes = [
        Route("/", page), Mount("/static", StaticFiles(directory=STATIC), name="static"), Route("/font/cjk.ttf", font),
        route("/api/info", info), route("/api/screen", screen_png), route("/api/elements", screen_elements),
        route("/api/inspect", inspect, ("POST",)), route("/api/crops/{name}.png", crop_png),
        route("/api/act", act, ("POST",)), route("/api/template", template, ("GET", "POST")),
        route("/api/template/steps", template_steps, ("POST",)),
        route("/api/template/steps/{n}", template_step, ("DELETE", "PUT", "POST")),
        route("/api/template/run", template_run, ("POST",)), route("/api/save", save, ("POST",)),
        route("/api/template/export", panel.export), route("/api/modules", panel.new_module, ("POST",)),
        route("/api/phone", panel.phone, ("POST",)),
        route("/api/record/{what}", record, ("POST",)), route("/api/record", record, ("POST",)),
        route("/api/run", run_summary), route("/api/run/steps/{n}/{phase}.png", run_image),
        route("/api/run/steps/{n}/redecide", run_redecide, ("POST",)),
    ]
    return Guard(Starlette(routes=routes), host=host, token=token)


def _run(studio: Studio) -> RunView:
    if studio.run is None:
        raise LocateError("no run record open", hint="start the studio with --run RUN_DIR")
    return studio.run
