"""A DroidBot output folder, read once: its screens (lazily), its recorded inputs, where the run began.

The folder holds ``utg.js`` (the transition graph and the run's metadata),
``states/state_<tag>.json`` + ``states/screen_<tag>.jpg`` (one view tree and
screenshot per screen, keyed by ``state_str``) and ``events/event_<tag>.json``
(every input with the screen before and after). Only the index is read at
start: each state file's head (its ``state_str`` and activity), the events and
the graph's edges. View trees are parsed when a screen is first needed and kept
in a small LRU; screenshots are the phone's business (`frames`).

Every input becomes a `Record` of its start screen: kind (``touch``,
``long_touch``, ``set_text``, ``scroll``, ``key``), the view it acted on
(``view_str`` and DroidBot's box; a graph edge has no box and borrows one from
an event file of the same view), the scroll direction or key name, and the
screen it led to. Event files and graph edges both count. `choose` picks the
most frequent outcome that has a saved screen (ties: the one recorded first).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remote.errors import ConfigError
from remote.kept import Kept

log = logging.getLogger(__name__)

# A recording's index as read (graph, state heads, events: 0.1-0.13 s for the shared ones, 814 event files for
# Weibo's), kept for the next phone of this process on the same unchanged folder: tests and benches start many.
READ_KEPT = 4
_READ: Kept[tuple[Any, ...], tuple[Any, ...]] = Kept(READ_KEPT)
TREE_CACHE = 16           # parsed view trees kept (a weibo tree is up to 250 KB of JSON)
HEAD_BYTES = 2048         # a state file names its tag, state_str and activity in its first lines
_HEAD = {key: re.compile(rf'"{key}"\s*:\s*"([^"]*)"') for key in ("tag", "state_str", "foreground_activity")}
_UTG_KIND = re.compile(r"^(\w+?)Event\(state=")          # TouchEvent(state=…, view=<view_str>(Activity/Class-text))
_UTG_VIEW = re.compile(r", view=([^(),\s]+)\(")
_UTG_TAIL = re.compile(r", (direction|name)=(\w+)\)$")      # ScrollEvent(…, direction=DOWN) / KeyEvent(…, name=BACK)
_KINDS = {"Touch": "touch", "LongTouch": "long_touch", "SetText": "set_text", "Scroll": "scroll", "Key": "key"}
VIEW_KINDS = ("touch", "long_touch", "set_text", "scroll")
ANDROID_RELEASE = {28: "9", 29: "10", 30: "11", 31: "12", 32: "12", 33: "13", 34: "14", 35: "15"}
Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class StateFile:
    """One saved screen: ``state_str``, the capture tag naming both files, the foreground activity."""

    state_str: str
    tag: str
    activity: str           # "com.sina.weibo/.VisitorMainTabActivity"
    json_path: Path
    screen_path: Path

    @property
    def package(self) -> str:
        return self.activity.split("/", 1)[0]


@dataclass(frozen=True)
class Record:
    """One recorded input on a screen and the screen it led to."""

    kind: str
    stop: str
    view_str: str = ""          # the view acted on (not for keys)
    bounds: Box | None = None   # DroidBot's box of that view when the event file has it
    detail: str = ""            # scroll direction (UP/DOWN/LEFT/RIGHT) or key name (BACK)


WHERE_RECORDINGS_COME_FROM = (
    "a trace is the output folder of DroidBot run on your own app (`droidbot -a app.apk -o DIR` with the phone "
    "on adb; github.com/honeynet/droidbot), or a recording someone shared, such as those of Kqramazov/fdroid_utg "
    "(a fresh clone has none); docs/testing.md, \"The trace phone\"")


class Recording:
    """``Recording.load("…/traces/weibo_bfs_greedy")``; `ConfigError` when the folder is not a recording."""

    def __init__(self, folder: Path, meta: dict[str, Any], states: dict[str, StateFile],
                 tags: dict[str, str], events: list[dict[str, Any]], edges: list[dict[str, Any]]) -> None:
        self.folder = folder
        self.meta = meta
        self.states = states            # served screens: a tree and a screenshot
        self.tags = tags                # every capture tag -> its state_str (duplicate captures too)
        self._records: dict[tuple[str, str], list[Record]] = {}
        self._trees: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        for event in events:
            self._add_event(event)
        self._add_edges(edges)
        self.app_package = str(meta.get("app_package") or "")
        self.launcher_state = self._launcher(meta.get("_first_node"))
        self.first_app_state = self._first_app_state(events)

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(cls, folder: str | Path) -> Recording:
        path = Path(folder).expanduser()
        utg_path, states_dir = path / "utg.js", path / "states"
        if not utg_path.is_file() or not states_dir.is_dir():
            what = "no such folder" if not path.is_dir() else "not a DroidBot output folder (needs utg.js and states/)"
            raise ConfigError(what, path=str(path), hint=WHERE_RECORDINGS_COME_FROM)
        key = _stamp(path)
        read = _READ.get(key)
        if read is None:
            meta, edges = _read_utg(utg_path)
            states, tags = _index_states(states_dir)
            if not states:
                raise ConfigError("the recording has no screen with both a view tree and a screenshot", path=str(path))
            read = (meta, states, tags, _read_events(path / "events"), edges)
            _READ.put(key, read)
        meta, states, tags, events, edges = read
        log.info("trace %s: %d screens, %d events, %d edges", path.name, len(states), len(events), len(edges))
        return cls(path, meta, states, tags, events, edges)

    def _add_event(self, event: dict[str, Any]) -> None:
        body = event.get("event") or {}
        kind = str(body.get("event_type"))
        view = body.get("view") or {}
        stop, start = str(event.get("stop_state")), str(event.get("start_state"))
        if kind in VIEW_KINDS and view.get("view_str"):
            detail = str(body.get("direction") or "").upper() if kind == "scroll" else ""
            self._add(start, Record(kind, stop, str(view["view_str"]), _box(view.get("bounds")), detail))
        elif kind == "key" and body.get("name"):
            self._add(start, Record(kind, stop, detail=str(body["name"]).upper()))

    def _add_edges(self, edges: Iterable[dict[str, Any]]) -> None:
        for edge in edges:
            start, stop = str(edge.get("from")), str(edge.get("to"))
            for item in edge.get("events") or ():
                text = str(item.get("event_str", ""))
                m = _UTG_KIND.match(text)
                kind = _KINDS.get(m.group(1)) if m else None
                view, tail = _UTG_VIEW.search(text), _UTG_TAIL.search(text)
                if kind == "key" and tail and tail.group(1) == "name":
                    self._add(start, Record(kind, stop, detail=tail.group(2).upper()))
                elif kind in VIEW_KINDS and view and (kind != "scroll" or tail):
                    known = next((r.bounds for r in self.records(start, kind)
                                  if r.view_str == view.group(1) and r.bounds), None)
                    detail = tail.group(2).upper() if kind == "scroll" and tail else ""
                    self._add(start, Record(kind, stop, view.group(1), known, detail))

    def _add(self, start: str, record: Record) -> None:
        self._records.setdefault((start, record.kind), []).append(record)

    def _launcher(self, first_node: str | None) -> str | None:
        return first_node if first_node in self.states else None

    def _first_app_state(self, events: list[dict[str, Any]]) -> str | None:
        """What the run's first ``am start`` of the app showed (not the launcher), else its first saved screen."""
        launcher_pkg = self.states[self.launcher_state].package if self.launcher_state else ""
        for event in events:
            body = event.get("event") or {}
            intent = str(body.get("intent") or "")
            stop = event.get("stop_state")
            if (body.get("event_type") == "intent" and intent.startswith("am start") and self.app_package
                    and self.app_package in intent and stop in self.states
                    and self.states[stop].package != launcher_pkg):
                return str(stop)
        return self.first_state_of(self.app_package)

    # ------------------------------------------------------------------ queries

    @property
    def name(self) -> str:
        return self.folder.name

    def first_state_of(self, package: str) -> str | None:
        """The first saved screen (in capture order) whose foreground app is `package`."""
        found = sorted((s.tag, s.state_str) for s in self.states.values() if s.package == package)
        return found[0][1] if found else None

    def packages(self) -> list[str]:
        return sorted({s.package for s in self.states.values()} | ({self.app_package} if self.app_package else set()))

    def records(self, state: str, kind: str) -> list[Record]:
        """Every recorded input of `kind` on `state`, in recording order (event files, then graph edges)."""
        return self._records.get((state, kind), [])

    def outcomes(self, state: str, kind: str, key: str) -> dict[str, int]:
        """How often each screen followed: ``key`` is a view_str, ``view_str:DIRECTION`` or a key name."""
        counts: Counter[str] = Counter()
        for r in self.records(state, kind):
            if key in (r.detail if kind == "key" else r.view_str, f"{r.view_str}:{r.detail}"):
                counts[r.stop] += 1
        return dict(counts)

    def choose(self, counts: Counter[str] | dict[str, int]) -> str | None:
        """The most frequent outcome with a saved screen; ties go to the one recorded first (dicts keep order)."""
        served = [(stop, n) for stop, n in counts.items() if stop in self.states]
        return max(served, key=lambda item: item[1])[0] if served else None

    def outcome(self, state: str, kind: str, key: str) -> str | None:
        return self.choose(self.outcomes(state, kind, key))

    def resolve(self, name: str) -> str:
        """A state named by its ``state_str``, a capture tag, or a unique prefix (at least 4 characters)."""
        name = str(name).strip()
        if name in self.states:
            return name
        if name in self.tags and self.tags[name] in self.states:
            return self.tags[name]
        matches = [s for s in self.states if len(name) >= 4 and s.startswith(name)]
        if len(matches) == 1:
            return matches[0]
        why = f"{len(matches)} states start with it" if matches else "no saved screen has that state_str or tag"
        raise ConfigError(f"unknown trace state {name!r}: {why}", path=str(self.folder),
                          hint=f"first app state {self.first_app_state}, launcher {self.launcher_state}")

    def views(self, state: str) -> list[dict[str, Any]]:
        """The saved view tree of `state` (DroidBot's flat list; parsed once, kept in an LRU)."""
        tree = self._trees.get(state)
        if tree is not None:
            self._trees.move_to_end(state)
            return tree
        info = self.states[state]
        try:
            data = json.loads(info.json_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the view tree: {exc}", path=str(info.json_path)) from exc
        tree = [v for v in data.get("views") or [] if isinstance(v, dict)]
        self._trees[state] = tree
        while len(self._trees) > TREE_CACHE:
            self._trees.popitem(last=False)
        return tree

    def texts(self, state: str) -> set[str]:
        """The short visible texts of a saved screen (what a UI dump of it would show as text)."""
        return {str(v["text"]).strip() for v in self.views(state)
                if v.get("visible", True) and isinstance(v.get("text"), str) and 0 < len(v["text"].strip()) <= 50}

    def telling_texts(self, state: str, other: str) -> list[str]:
        """Texts `state` shows that `other` does not: what tells the two screens apart (sorted)."""
        return sorted(self.texts(state) - self.texts(other))

    def device_info(self) -> dict[str, str]:
        sdk = self.meta.get("device_sdk_version")
        return {"model": str(self.meta.get("device_model_number") or "TracePhone"),
                "sdk": str(sdk or "29"), "release": ANDROID_RELEASE.get(sdk, "") if isinstance(sdk, int) else ""}


# ---------------------------------------------------------------------- file readers


def _box(bounds: Any) -> Box | None:
    try:
        (x1, y1), (x2, y2) = bounds
        return int(x1), int(y1), int(x2), int(y2)
    except (TypeError, ValueError):
        return None


def _stamp(path: Path) -> tuple[Any, ...]:
    """What tells a recording read before from one changed since: the graph file, and the folders of states and
    events (a file added or removed changes its folder)."""
    utg = (path / "utg.js").stat()
    events = path / "events"
    return (str(path.resolve()), utg.st_mtime_ns, utg.st_size, (path / "states").stat().st_mtime_ns,
            events.stat().st_mtime_ns if events.is_dir() else None)


def _read_utg(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        utg = json.loads(text[text.index("{"):text.rindex("}") + 1])
    except ValueError as exc:
        raise ConfigError(f"utg.js is not `var utg = {{...}}`: {exc}", path=str(path)) from exc
    meta = {k: v for k, v in utg.items() if k not in ("nodes", "edges")}
    first = next((n.get("state_str") for n in utg.get("nodes") or [] if "<FIRST>" in str(n.get("label", ""))), None)
    meta["_first_node"] = first
    return meta, [e for e in utg.get("edges") or [] if isinstance(e, dict)]


def _index_states(folder: Path) -> tuple[dict[str, StateFile], dict[str, str]]:
    """state_str -> its first capture (with a screenshot), and every tag -> state_str, from the files' heads."""
    states: dict[str, StateFile] = {}
    tags: dict[str, str] = {}
    for json_path in sorted(folder.glob("state_*.json")):
        head = _head(json_path)
        if head is None:
            continue
        tag, state_str, activity = head
        tags[tag] = state_str
        screen = json_path.with_name(f"screen_{tag}.jpg")
        if not screen.is_file():
            screen = json_path.with_name(f"screen_{tag}.png")
        if state_str not in states and screen.is_file():
            states[state_str] = StateFile(state_str, tag, activity, json_path, screen)
    return states, tags


def _head(path: Path) -> tuple[str, str, str] | None:
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    found = {key: rx.search(head) for key, rx in _HEAD.items()}
    if all(found.values()):
        return found["tag"].group(1), found["state_str"].group(1), found["foreground_activity"].group(1)  # type: ignore[union-attr]
    try:  # an unusual key order: read the whole file once
        data = json.loads(path.read_text(encoding="utf-8"))
        return str(data["tag"]), str(data["state_str"]), str(data.get("foreground_activity") or "")
    except (OSError, ValueError, KeyError) as exc:
        log.warning("skipping %s: %s", path.name, exc)
        return None


def _read_events(folder: Path) -> list[dict[str, Any]]:
    events = []
    for path in sorted(folder.glob("event_*.json")) if folder.is_dir() else ():
        try:
            event = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("skipping %s: %s", path.name, exc)
            continue
        if isinstance(event, dict):
            events.append(event)
    return events
