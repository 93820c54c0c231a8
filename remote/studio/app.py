"""The studio's web app: the page, and the JSON API under it (docs/studio.md lists every route).

Every answer is JSON but the images; every error is ``{"error", "hint"}`` with a
status that says whose it is (400 the request, 404 nothing there, 409 the phone
or the page must do something first, 502 the phone broke). Handlers do their
work in a worker thread: the page keeps its frames coming while a step runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from remote.apps import AppModule, ModuleRegistry
from remote.core.locate.hybrid_locator import HybridLocator
from remote.errors import ActionError, BadInput, DeviceError, LocateError, RemoteError, TaskError
from remote.runner.offline import module_locator
from remote.studio.acting import Acts, Busy, NeedsYes, NoPhone
from remote.studio.draft import Draft, add_kind, plan_of
from remote.studio.guard import MAX_BODY_BYTES, Guard
from remote.studio.inspector import best_target, elements, inspect_point
from remote.studio.recording import Recorder
from remote.studio.runs import RunView
from remote.studio.screens import ScreenSource, encode

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


# ---------------------------------------------------------------------- routes
def info(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    screen = studio.source.screen()
    return {"mode": studio.mode, "size": list(screen.size), "module": studio.module.name,
            "modules": sorted(studio.registry.modules), "run": studio.run is not None,
            "recording": studio.recorder.on}


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
    x, y = _number(body, "x"), _number(body, "y")
    step = body.get("step")
    # the screen as it is now (the page shows live frames; the phone may have moved on its own), with its tree
    screen = studio.run.screen(_int(step, "step")) if step is not None and studio.run else \
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
    return studio.acts.run(plan, f"studio: {plan.steps[0].label}", confirmed=body.get("confirm") is True,
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
    say it), or delete one; with ``"run": true`` the new step also runs on the phone (its result beside)."""
    with studio.draft.lock:
        count = len(studio.draft.steps)
        if request.method == "DELETE":
            studio.draft.remove_step(_int(request.path_params.get("n"), "n"))
        elif "step" in body:
            studio.draft.add_step(body["step"])
        else:
            kind = str(body.get("kind", ""))
            text = studio.source.front() if kind == "launch" else str(body.get("text") or "")
            add_kind(studio.draft, kind, str(body.get("target_ref") or ""), text=text, slot=str(body.get("slot") or ""))
        added = len(studio.draft.steps) > count
    out = studio.draft.state()
    if body.get("run") is True and added:
        n = len(studio.draft.steps)
        try:
            out["result"] = studio.acts.run(studio.draft.plan(n, n), f"studio: {studio.draft.name} step {n}",
                                            confirmed=body.get("confirm") is True, crops=studio.draft.crops)
        except NeedsYes:
            studio.draft.remove_step(n)     # asked first: sent again with the yes, it is appended then
            raise
    return out


def template_run(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    first = _int(body.get("from", 1), "from")
    last = _int(body["to"], "to") if body.get("to") is not None else None
    plan = studio.draft.plan(first, last)
    return studio.acts.run(plan, f"studio: {studio.draft.name} steps {first}-{last or len(studio.draft.steps)}",
                           confirmed=body.get("confirm") is True, crops=studio.draft.crops)


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
        return studio.recorder.start()
    if what == "stop":
        return studio.recorder.stop() | {"template": studio.draft.state()}
    return studio.recorder.act(body, confirmed=body.get("confirm") is True) | {"template": studio.draft.state()}


def run_summary(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    return _run(studio).summary()


def run_image(studio: Studio, request: Request, body: dict[str, Any]) -> Response:
    image = _run(studio).image(_int(request.path_params["n"], "n"), request.path_params["phase"])
    return Response(encode(image, "png")[0], media_type="image/png")


def run_redecide(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    n = _int(request.path_params["n"], "n")
    return {"step": n, "decisions": _run(studio).redecide(n)}


# ---------------------------------------------------------------------- plumbing
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
        route("/api/template/steps/{n}", template_steps, ("DELETE",)),
        route("/api/template/run", template_run, ("POST",)), route("/api/save", save, ("POST",)),
        route("/api/record/{what}", record, ("POST",)), route("/api/record", record, ("POST",)),
        route("/api/run", run_summary), route("/api/run/steps/{n}/{phase}.png", run_image),
        route("/api/run/steps/{n}/redecide", run_redecide, ("POST",)),
    ]
    return Guard(Starlette(routes=routes), host=host, token=token)


def endpoint(studio: Studio, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def call(request: Request) -> Response:
        try:
            body = await _body(request) if request.method == "POST" else {}
            out = await run_in_threadpool(handler, studio, request, body)
        except RemoteError as exc:
            return _failure(exc)
        return out if isinstance(out, Response) else JSONResponse(out)
    return call


STATUS: tuple[tuple[type[RemoteError], int], ...] = (
    (NeedsYes, 409), (Busy, 409), (NoPhone, 409), (BadInput, 400), (LocateError, 404), (ActionError, 400),
    (DeviceError, 502), (TaskError, 409), (RemoteError, 400))


def _failure(exc: RemoteError) -> JSONResponse:
    status = next(code for kind, code in STATUS if isinstance(exc, kind))
    payload: dict[str, Any] = {"error": exc.message, "hint": exc.hint, "kind": type(exc).__name__}
    if isinstance(exc, NeedsYes):
        payload["needs_confirmation"] = exc.reasons
    return JSONResponse(payload, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise BadInput(f"request body over {MAX_BODY_BYTES // 1024} kB")
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise BadInput(f"the body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadInput("the body must be a JSON object")
    return data


def _number(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise BadInput(f"{key} must be a number (device pixels), not {str(value)[:20]!r}")
    return int(value)


def _int(value: Any, what: str) -> int:
    try:
        return int(str(value))
    except ValueError as exc:
        raise BadInput(f"{what} must be a whole number, not {str(value)[:20]!r}") from exc


def _run(studio: Studio) -> RunView:
    if studio.run is None:
        raise LocateError("no run record open", hint="start the studio with --run RUN_DIR")
    return studio.run
