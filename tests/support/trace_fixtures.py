"""A small DroidBot output folder written by hand, for unit tests of the trace phone, and the real ones' path.

``notes_recording(tmp_path)`` writes a recording of an imaginary notes app with every quirk the real
ones have (a launcher marked <FIRST>, a dialog window, an invisible and an off-screen view, an outcome
recorded three ways, an outcome without a saved screen, a state captured twice, a PNG saved as .jpg,
a BACK known only from the graph). `TRACES` is the data folder's ``traces`` (`tests.support.data`); `need_traces()` skips a test
with a message where it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.support.data import data_path, looked

TRACES = data_path("traces")
APP = "com.example.notes"
LAUNCHER = "com.android.launcher3"
# state name -> (tag, activity, colour of its screenshot)
STATES = {
    "L": ("2023-10-19_000001", f"{LAUNCHER}/.Launcher", (200, 30, 30)),
    "A": ("2023-10-19_000002", f"{APP}/.Main", (30, 200, 30)),
    "B": ("2023-10-19_000003", f"{APP}/.Edit", (30, 30, 200)),
    "C": ("2023-10-19_000004", f"{APP}/.Other", (200, 200, 30)),
    "D": ("2023-10-19_000005", f"{APP}/.Main", (30, 200, 200)),
    "S": ("2023-10-19_000006", f"{APP}/.Main", (200, 30, 200)),
}
A_AGAIN = "2023-10-19_000007"   # a second capture of A (another colour): the first one is served


def state_str(name: str) -> str:
    return f"{name.lower()}" * 32


def need_traces() -> Path:
    if not TRACES.is_dir():
        pytest.skip(f"DroidBot recordings not found at {looked('traces')}")
    return TRACES


def recordings() -> list[Path]:
    """Every recording with a paths.json under TRACES (empty when absent: the tests using it skip)."""
    return sorted(p for p in TRACES.iterdir() if (p / "paths.json").is_file()) if TRACES.is_dir() else []


def _view(i: int, parent: int, cls: str, box: tuple[int, int, int, int], *, text: str | None = None,
          desc: str | None = None, rid: str | None = None, view_str: str | None = None, visible: bool = True,
          **flags: bool) -> dict[str, Any]:
    return {"temp_id": i, "parent": parent, "children": [], "class": cls, "package": APP, "text": text,
            "content_description": desc, "resource_id": rid, "bounds": [[box[0], box[1]], [box[2], box[3]]],
            "visible": visible, "enabled": True, "clickable": flags.get("clickable", False),
            "long_clickable": False, "checkable": False, "checked": False, "focusable": flags.get("editable", False),
            "focused": flags.get("focused", False), "scrollable": flags.get("scrollable", False), "selected": False,
            "is_password": False, "editable": flags.get("editable", False), "view_str": view_str or f"vs{i}"}


def _tree(name: str) -> list[dict[str, Any]]:
    full, nav = (0, 0, 1080, 1920), (0, 1776, 1080, 1920)
    if name == "L":
        views = [_view(0, -1, "android.widget.FrameLayout", full),
                 _view(1, 0, "android.widget.TextView", (100, 100, 300, 300), text="Notes", view_str="v-icon",
                       clickable=True)]
    elif name == "A":
        views = [_view(0, -1, "android.widget.FrameLayout", full),
                 _view(1, 0, "android.widget.LinearLayout", (0, 150, 1080, 550)),   # layout only
                 _view(2, 1, "android.widget.Button", (100, 200, 500, 300), text="New", view_str="v-new", clickable=True),
                 _view(3, 1, "android.widget.Button", (100, 400, 500, 500), text="Flaky", view_str="v-flaky",
                       clickable=True),
                 _view(4, 0, "android.widget.EditText", (100, 600, 900, 700), text="Title", view_str="v-title",
                       editable=True),
                 _view(5, 0, "android.widget.TextView", (100, 800, 500, 900), text="Secret", visible=False),
                 _view(6, 0, "android.widget.TextView", (100, 2000, 500, 2100), text="Below"),
                 _view(7, 0, "android.widget.ListView", (0, 1000, 1080, 1700), view_str="v-list", scrollable=True),
                 # two list rows alike but for their content: DroidBot gives them one view_str
                 _view(8, 7, "android.widget.FrameLayout", (0, 1000, 1080, 1300), view_str="v-row", clickable=True),
                 _view(9, 8, "android.widget.TextView", (50, 1050, 400, 1100), text="Row one", view_str="v-label"),
                 _view(10, 7, "android.widget.FrameLayout", (0, 1300, 1080, 1600), view_str="v-row", clickable=True),
                 _view(11, 10, "android.widget.ImageView", (50, 1350, 150, 1450), view_str="v-icon2")]
    elif name == "D":
        views = [_view(0, -1, "android.widget.FrameLayout", (27, 565, 1053, 1282)),
                 _view(1, 0, "android.widget.TextView", (60, 600, 1000, 700), text="Delete?"),
                 _view(2, 0, "android.widget.Button", (600, 1100, 1000, 1250), text="OK", rid="android:id/button1",
                       clickable=True)]
    else:
        label = {"B": "Editor", "C": "Other", "S": "Saved"}[name]
        views = [_view(0, -1, "android.widget.FrameLayout", full),
                 _view(1, 0, "android.widget.TextView", (100, 200, 900, 300), text=label),
                 _view(2, 0, "android.widget.Button", (100, 400, 500, 500), text="Done", view_str="v-done",
                       clickable=True)]
    views.append(_view(len(views), 0, "android.view.View", nav, rid="android:id/navigationBarBackground",
                       visible=False))
    for v in views[1:]:
        views[v["parent"]]["children"].append(v["temp_id"])
    return views


def _event(tag: str, kind: str, start: str, stop: str, **body: Any) -> dict[str, Any]:
    view, bounds = body.pop("view", None), body.pop("bounds", None)
    event = {"event_type": kind, **body}
    if view:
        event["view"] = {"view_str": view, "bounds": bounds}
    return {"tag": tag, "event": event, "start_state": state_str(start), "stop_state": state_str(stop),
            "event_str": f"{kind}"}


EVENTS = [
    ("kill_app", "L", "L", {"stop_intent": f"am force-stop {APP}"}),
    ("intent", "L", "A", {"intent": f"am start {APP}/{APP}.Main"}),
    ("touch", "A", "B", {"view": "v-new"}),
    ("key", "B", "A", {"name": "BACK"}),
    ("touch", "A", "B", {"view": "v-flaky"}),
    ("touch", "A", "C", {"view": "v-flaky"}),
    ("touch", "A", "C", {"view": "v-flaky"}),
    ("touch", "B", "M", {"view": "v-done"}),      # M has no saved screen (twice) ...
    ("touch", "B", "M", {"view": "v-done"}),
    ("touch", "B", "A", {"view": "v-done"}),      # ... so A, seen once, is what a tap gives
    ("set_text", "A", "S", {"view": "v-title", "text": "Hello World"}),
    ("scroll", "A", "D", {"view": "v-list", "direction": "DOWN"}),
    ("long_touch", "A", "C", {"view": "v-new", "duration": 2000}),
    ("touch", "A", "C", {"view": "v-label"}),     # the label inside row one (not clickable itself)
    ("touch", "A", "B", {"view": "v-row", "bounds": [[0, 1300], [1080, 1600]]}),   # row two, told apart by its box
]


def notes_recording(root: Path, *, with_launcher: bool = True) -> Path:
    """Write the notes app's recording under `root` and return its folder."""
    folder = root / "notes.apk"
    (folder / "states").mkdir(parents=True)
    (folder / "events").mkdir()
    for name, (tag, activity, colour) in STATES.items():
        _write_state(folder, tag, name, activity, colour, png=name == "B")
    _write_state(folder, A_AGAIN, "A", STATES["A"][1], (0, 0, 0), png=False)
    for i, (kind, start, stop, body) in enumerate(EVENTS):
        event = _event(f"2023-10-19_0001{i:02d}", kind, start, stop, **body)
        (folder / "events" / f"event_{event['tag']}.json").write_text(json.dumps(event), encoding="utf-8")
    nodes = [{"state_str": state_str(n), "label": a.split("/")[-1] + ("\n<FIRST>" if n == "L" and with_launcher else "")}
             for n, (_, a, _) in STATES.items()]
    edges = [{"from": state_str("C"), "to": state_str("A"),
              "events": [{"event_str": f"KeyEvent(state={state_str('C')}, name=BACK)", "event_type": "key"}]},
             {"from": state_str("L"), "to": state_str("A"),
              "events": [{"event_str": f"TouchEvent(state={state_str('L')}, view=v-icon(Launcher/TextView-Notes))",
                          "event_type": "touch"}]}]
    utg = {"nodes": nodes, "edges": edges, "app_package": APP, "device_model_number": "Test Phone",
           "device_sdk_version": 29}
    (folder / "utg.js").write_text("var utg = \n" + json.dumps(utg), encoding="utf-8")
    return folder


def _write_state(folder: Path, tag: str, name: str, activity: str, colour: tuple[int, int, int], *, png: bool) -> None:
    data = {"tag": tag, "state_str": state_str(name), "foreground_activity": activity, "width": 2340,
            "height": 1080, "views": _tree(name)}
    (folder / "states" / f"state_{tag}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    image = Image.new("RGB", (1080, 1920 if png else 2340), (0, 0, 0))
    image.paste(Image.new("RGB", (1080, 1920), colour), (0, 0))
    image.save(folder / "states" / f"screen_{tag}.jpg", format="PNG" if png else "JPEG", quality=95)
