"""The phone panel (keys, swipes, rotation, text into the focused field), a new module made from the page, and the
export.

The panel's keys are a fixed list (BACK, HOME, recent apps, volume): none calls,
ends a call or opens an app, so none needs a yes; they go straight to the phone
(`Acts.direct`: the allow list's gated phone beyond loopback, one act at a time).
While recording, BACK and HOME become steps (``press_key``) run through the
runner like every recorded action. Text goes through the runner as an
``input_text`` step, so a typed pay or delete word is judged as in a run.
Rotating sends the two fixed settings commands Android is turned with over adb
(`ROTATE`); it is not a step, so it is refused while recording.
"""

from __future__ import annotations

import json
import pprint
from pathlib import Path
from typing import Any

from starlette.requests import Request

from remote.apps import APPS_DIR
from remote.config import Settings
from remote.core.device import screen_state
from remote.core.safe_files import write_atomic
from remote.errors import BadInput, ConfigError
from remote.studio.draft import NAME, plan_of
from remote.studio.web import number

Studio = Any    # remote.studio.app.Studio, which imports these routes (named here without the import cycle)

PANEL_KEYS = ("BACK", "HOME", "APP_SWITCH", "VOLUME_UP", "VOLUME_DOWN")
# How the panel turns the phone: a quarter turn left or right, or back to the natural (portrait) orientation. A turn
# left is Surface.ROTATION_90 ("if the device is rotated 90 degrees counter-clockwise ... ROTATION_90",
# developer.android.com/reference/android/view/Display#getRotation()), so the quarter turns add 1 or 3.
ROTATE = {"left": 1, "right": 3, "portrait": 0}
MODULE_NAME = NAME         # a module's name is a word, as a task's


def phone(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """``{"key": "BACK"}``, ``{"swipe": [x1, y1, x2, y2]}`` (device pixels) or ``{"text": "..."}``."""
    recording = studio.recorder.on
    if "key" in body:
        key = str(body["key"]).upper()
        if key not in PANEL_KEYS:
            raise BadInput(f"the panel's keys are {', '.join(PANEL_KEYS)}, not {str(body['key'])[:20]!r}")
        if recording and key in ("BACK", "HOME"):
            return _recorded(studio, {"action": "key", "key": key})
        studio.acts.direct(lambda device: device.input_keyevent(key))
        return {"done": f"pressed {key}"}
    if "swipe" in body:
        points = body["swipe"]
        if not isinstance(points, list) or len(points) != 4:
            raise BadInput("swipe wants [x1, y1, x2, y2] in device pixels")
        x1, y1, x2, y2 = (number({"swipe": p}, "swipe") for p in points)
        w, h = studio.source.screen().size
        if not all(0 <= x < w for x in (x1, x2)) or not all(0 <= y < h for y in (y1, y2)):
            raise BadInput(f"the swipe leaves the {w}x{h} screen")
        studio.acts.direct(lambda device: device.swipe(x1, y1, x2, y2, 300))
        return {"done": f"swiped ({x1}, {y1}) -> ({x2}, {y2})"}
    if "rotate" in body:
        return _rotate(studio, body["rotate"], recording)
    if "text" in body:
        text = body["text"]
        if not isinstance(text, str) or not text or len(text) > 2000:
            raise BadInput("text: what to type into the focused field (at most 2000 characters)")
        if recording:
            return _recorded(studio, {"action": "type", "text": text})
        plan = plan_of(studio.module, {"name": "type", "patterns": ["studio type"],
                                       "steps": [{"action": "input_text", "params": {"text": text}}]}, {})
        return {"result": studio.acts.run(plan, "studio: type into the focused field")}
    raise BadInput("the panel sends {\"key\"}, {\"swipe\"}, {\"rotate\"} or {\"text\"}")


def _rotate(studio: Studio, how: Any, recording: bool) -> dict[str, Any]:
    """``{"rotate": "left"|"right"|"portrait"}``: turn the display as Android is turned over adb, auto-rotate off
    and then ``user_rotation`` (Settings.System ACCELEROMETER_ROTATION / USER_ROTATION, developer.android.com/
    reference/android/provider/Settings.System), from the rotation ``dumpsys display`` says it has now (R9)."""
    if not isinstance(how, str) or how not in ROTATE:
        raise BadInput(f"rotate is one of {', '.join(ROTATE)}, not {str(how)[:20]!r}")
    if recording:
        raise BadInput("turning the phone is not a step of a task", hint="stop the recording to turn the phone")
    turned: list[int] = []

    def doing(device: Any) -> None:
        now = screen_state.rotation(device.shell(["dumpsys", "display"]))
        to = (now + ROTATE[how]) % 4 if ROTATE[how] else 0
        device.shell(["settings", "put", "system", "accelerometer_rotation", "0"])
        device.shell(["settings", "put", "system", "user_rotation", str(to)])
        turned.append(to)

    studio.acts.direct(doing)
    return {"done": f"turned the phone to {turned[0] * 90}°", "rotation": turned[0]}


def _recorded(studio: Studio, action: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = studio.recorder.act(action) | {"template": studio.draft.state()}
    return out


def new_module(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """``{"name", "display_name"?, "package"?}``: a module of one's own, in the first REMOTE_MODULES folder, with
    an empty ``tasks: []``; the draft moves to it."""
    name = body.get("name")
    if not isinstance(name, str) or not MODULE_NAME.fullmatch(name):
        raise BadInput("a module's name is a word: letters, digits, _ and - (e.g. my_settings)")
    if name in studio.registry.modules:
        raise BadInput(f"a module named {name!r} exists already", hint="pick it in the module menu")
    dirs = [Path(d) for d in Settings.from_env().module_dirs]
    if not dirs:
        raise ConfigError("new modules go in a folder of your own, and REMOTE_MODULES names none",
                          hint="export REMOTE_MODULES=~/remote-modules and start the studio again (docs/modules.md)")
    folder = dirs[0] / name
    if folder.exists() or folder.resolve().is_relative_to(APPS_DIR.resolve()):
        raise ConfigError(f"{folder} exists already", hint="pick another name")
    display = str(body.get("display_name") or name)[:60]
    package = str(body.get("package") or "")
    if package and not is_package(package):
        raise BadInput(f"{package[:60]!r} is not a package name")
    config = {"name": name, "display_name": display, "keywords": [], **({"package": package} if package else {})}
    folder.mkdir(parents=True)
    # JSON is YAML: the values are written quoted whatever they hold
    write_atomic(folder / "config.yaml", "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n"
                                                 for k, v in config.items()))
    write_atomic(folder / "tasks.yaml", "# built in remote studio\ntasks: []\n")
    if studio.reload is not None:
        studio.registry = studio.acts.registry = studio.reload()
    with studio.draft.lock:
        studio.reset(studio.registry.get(name))
        out: dict[str, Any] = studio.draft.state() | {"created": str(folder)}
        return out


def is_package(package: str) -> bool:
    parts = package.split(".")
    return len(parts) >= 2 and all(p[:1].isalpha() and p.replace("_", "").isalnum() for p in parts)


PYTHON = '''"""{name}, built in remote studio: its steps run by remote's own runner from a script of yours."""
from remote.commands._modules import registry
from remote.core.device.adb_controller import ADBController
from remote.runner import build_runner
from remote.studio.draft import plan_of

TASK = {task}
EXAMPLES = {examples}   # the value each {{slot}} runs with

modules = registry()    # the shipped modules and those in REMOTE_MODULES
plan = plan_of(modules.get({module!r}), TASK, EXAMPLES)
phone = ADBController({serial!r}, port={port}).connect()
result = build_runner(phone, registry=modules).run({label!r}, plan=plan)
print(result.status.value, result.final_check.summary if result.final_check else "no final check")
'''


def export(studio: Studio, request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """The task as YAML to paste into a tasks.yaml, and as a Python script that runs the same steps."""
    with studio.draft.lock:
        task = studio.draft.task()
        adb = getattr(studio.source, "adb", None)
        serial = str(getattr(adb, "serial", "") or "SERIAL")
        port = int(getattr(getattr(adb, "link", None), "port", 5037) or 5037)
        script = PYTHON.format(name=task["name"], task=pprint.pformat(task, width=100, sort_dicts=False),
                               examples=repr(studio.draft.examples),
                               module=studio.module.name, serial=serial, port=port,
                               label=(task["patterns"] or [task["name"]])[0])
        return {"yaml": studio.draft.yaml(), "python": script}
