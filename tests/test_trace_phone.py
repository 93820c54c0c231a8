"""The trace phone on a hand-written recording: what each input leads to, the dump, the screens, the limits.

The real recordings (the data folder's traces, `tests.support.data`) are exercised in test_trace_protocol.py and test_trace_replay.py.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from remote.errors import ConfigError
from remote.sim import make_phone
from remote.sim.scenario import Scenario
from remote.sim.trace import Recording, TracePhone
from remote.sim.trace import frames as trace_frames
from remote.sim.trace import recording as trace_recording
from tests.support.trace_fixtures import A_AGAIN, STATES, notes_recording, state_str

L, A, B, C, D, S = (state_str(n) for n in "LABCDS")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return notes_recording(tmp_path)


def phone(folder: Path, start: str | None = None) -> TracePhone:
    return TracePhone(trace=str(folder), trace_start=start, uiautomator_delay_ms=0)


def nodes(xml: str) -> list[ET.Element]:
    return list(ET.fromstring(xml).iter("node"))


# ---------------------------------------------------------------- the recording


def test_the_index_knows_launcher_first_app_state_and_served_screens(notes):
    rec = Recording.load(notes)
    assert rec.launcher_state == L and rec.first_app_state == A
    assert set(rec.states) == {L, A, B, C, D, S}          # M is referenced by events but has no files
    assert rec.states[A].tag == STATES["A"][0]             # the first capture of A is the one served
    assert rec.tags[A_AGAIN] == A
    assert rec.packages() == ["com.android.launcher3", "com.example.notes"]


def test_outcomes_count_event_files_and_graph_edges(notes):
    rec = Recording.load(notes)
    assert rec.outcomes(A, "touch", "v-flaky") == {B: 1, C: 2}
    assert rec.outcome(A, "touch", "v-flaky") == C                 # the most frequent
    assert rec.outcomes(B, "touch", "v-done") == {"m" * 32: 2, A: 1}
    assert rec.outcome(B, "touch", "v-done") == A                  # the frequent one has no saved screen
    assert rec.outcome(C, "key", "BACK") == A                      # known from utg.js only
    assert rec.outcome(L, "touch", "v-icon") == A
    assert rec.outcome(A, "scroll", "v-list:DOWN") == D


@pytest.mark.parametrize("name", [S, STATES["S"][0], "ssss"])
def test_a_state_is_named_by_state_str_tag_or_prefix(notes, name):
    assert Recording.load(notes).resolve(name) == S


@pytest.mark.parametrize("name, why", [("zzzz", "no saved screen"), ("mmmm", "no saved screen"), ("ss", "no saved")])
def test_an_unknown_start_is_a_clear_config_error(notes, name, why):
    with pytest.raises(ConfigError, match=why) as info:
        phone(notes, name)
    assert "first app state" in str(info.value)


def test_a_folder_that_is_not_a_recording_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="not a DroidBot output folder"):
        TracePhone(trace=str(tmp_path))
    (tmp_path / "utg.js").write_text("var utg = {broken", encoding="utf-8")
    (tmp_path / "states").mkdir()
    with pytest.raises(ConfigError, match="utg.js"):
        TracePhone(trace=str(tmp_path))


def test_state_files_are_read_lazily_and_trees_kept_few(notes, monkeypatch):
    monkeypatch.setattr(trace_recording, "TREE_CACHE", 2)
    p = phone(notes, A)
    rec = p.recording
    for name in (B, C, D, S, L):
        rec.views(name)
    assert len(rec._trees) == 2 and list(rec._trees) == [S, L]


# ---------------------------------------------------------------- inputs


def test_default_start_is_the_launcher_else_the_first_app_state(tmp_path):
    assert phone(notes_recording(tmp_path / "a")).snapshot()["trace_state"] == L
    assert phone(notes_recording(tmp_path / "b", with_launcher=False)).snapshot()["trace_state"] == A


def test_a_tap_on_a_recorded_view_follows_its_most_frequent_outcome(notes):
    p = phone(notes, A)
    p.tap(300, 450)                                 # "Flaky": B once, C twice
    assert p.snapshot()["trace_state"] == C
    p.key(4)                                        # BACK from C: only the graph knows it
    assert p.snapshot()["visited"] == [A, C, A] and p.snapshot()["unrecorded_inputs"] == 0


def test_a_tap_anywhere_on_the_view_that_handled_a_recorded_touch_repeats_it(notes):
    p = phone(notes, A)
    p.tap(900, 1250)                                 # row one, away from its label (DroidBot tapped the label)
    assert p.snapshot()["trace_state"] == C
    p = phone(notes, A)
    p.tap(900, 1500)                                 # row two: same view_str as row one, its own recorded box
    assert p.snapshot()["trace_state"] == B and p.snapshot()["unrecorded_inputs"] == 0


def test_a_tap_on_nothing_recorded_changes_nothing_and_is_counted(notes):
    p = phone(notes, A)
    p.tap(1000, 100)                                 # the root only
    p.tap(540, 1650)                                 # the list below its rows
    p.tap(300, 850)                                  # where the invisible "Secret" would be
    snap = p.snapshot()
    assert snap["trace_state"] == A and snap["visited"] == [A] and snap["unrecorded_inputs"] == 3


def test_back_without_a_recorded_back_stays(notes):
    p = phone(notes, S)
    p.key(4)
    assert p.snapshot()["trace_state"] == S and p.snapshot()["unrecorded_inputs"] == 1


def test_the_navigation_bar_presses_back_and_home(notes):
    p = phone(notes, B)
    p.tap(200, 1850)                                 # left third of the bar: BACK (B -> A recorded)
    assert p.snapshot()["trace_state"] == A
    p.tap(540, 1850)                                 # middle: HOME
    assert p.snapshot()["trace_state"] == L


def test_swipe_long_press_and_their_directions(notes):
    p = phone(notes, A)
    p.swipe(540, 1300, 540, 1100, 300)               # finger up: DroidBot's DOWN
    assert p.snapshot()["trace_state"] == D
    p = phone(notes, A)
    p.swipe(540, 1100, 540, 1300, 300)               # finger down: UP, never recorded
    assert p.snapshot()["trace_state"] == A and p.snapshot()["unrecorded_inputs"] == 1
    p.swipe(300, 250, 302, 251, 2000)                # a long press on "New"
    assert p.snapshot()["trace_state"] == C


def test_home_then_launch_resumes_and_force_stop_restarts(notes):
    p = phone(notes, B)
    p.home()
    assert p.snapshot()["trace_state"] == L
    assert p.launch("com.example.notes") and p.snapshot()["trace_state"] == B
    assert p.launch("com.example.notes") and p.snapshot()["visited"] == [B, L, B]   # in front: no change
    p.force_stop("com.example.notes")
    assert p.snapshot()["trace_state"] == L
    assert p.launch("com.example.notes") and p.snapshot()["trace_state"] == A
    assert not p.launch("com.example.absent")
    p.launch("com.example.notes")
    assert p.launch("com.android.launcher3") and p.snapshot()["trace_state"] == L


def test_typing_goes_into_the_focused_field_and_follows_a_recorded_set_text(notes):
    p = phone(notes, A)
    assert not p.type_text("lost")                   # nothing focused yet
    p.tap(500, 650)                                  # the EditText: focus, no recorded tap
    assert p.keyboard_shown()
    assert p.type_text("Hi")                         # a set_text on it was recorded: A -> S
    assert p.snapshot()["trace_state"] == S and p.snapshot()["unrecorded_inputs"] == 1


def test_typed_text_shows_in_the_dump_of_a_field_without_a_recorded_set_text(tmp_path):
    folder = notes_recording(tmp_path)
    for path in (folder / "events").glob("*.json"):
        if "set_text" in path.read_text(encoding="utf-8"):
            path.unlink()
    p = phone(folder, A)
    p.tap(500, 650)
    p.type_text("abc")
    p.key(67)
    field = next(n for n in nodes(p.dump_xml()) if n.get("class") == "android.widget.EditText")
    assert field.get("text") == "Titleab" and field.get("focused") == "true"
    assert p.snapshot()["focused_text"] == "Titleab" and p.snapshot()["trace_state"] == A


# ---------------------------------------------------------------- what the phone shows


def test_the_dump_leaves_out_invisible_and_off_screen_views_and_clips(notes):
    p = phone(notes, A)
    found = nodes(p.dump_xml())
    texts = [n.get("text") for n in found]
    assert "New" in texts and "Title" in texts and "Secret" not in texts and "Below" not in texts
    assert not any(n.get("resource-id") == "android:id/navigationBarBackground" for n in found)
    assert found[0].get("bounds") == "[0,0][1080,1920]"
    rows = [n for n in found if n.get("class") == "android.widget.FrameLayout" and n.get("clickable") == "true"]
    assert [(r.get("index"), r.get("NAF")) for r in rows] == [("0", None), ("1", "true")]   # row two: no label
    assert next(n for n in found if n.get("text") == "New").get("NAF") is None


def test_a_dialog_state_dumps_the_dialog_window_only(notes):
    found = nodes(phone(notes, D).dump_xml())
    assert found[0].get("bounds") == "[27,565][1053,1282]" and [n.get("text") for n in found][1:3] == ["Delete?", "OK"]


def test_compressed_dump_drops_layout_only_containers(notes):
    full, compressed = nodes(phone(notes, A).dump_xml()), nodes(phone(notes, A).dump_xml(compressed=True))
    assert len(compressed) < len(full) and {n.get("text") for n in compressed} >= {"New", "Flaky", "Title"}


def test_screencap_is_the_recorded_screenshot_cropped_to_the_app_area(notes):
    p = phone(notes, A)
    assert p.size == (1080, 1920)
    image = Image.open(io.BytesIO(p.screencap(png=True)))
    assert image.size == (1080, 1920)
    r, g, b = image.convert("RGB").getpixel((540, 1900))
    assert g > 150 and r < 80 and b < 80              # A's green down to the last row: no black band
    raw = p.screencap(png=False)
    assert int.from_bytes(raw[:4], "little") == 1080 and int.from_bytes(raw[4:8], "little") == 1920
    p.tap(300, 250)                                   # -> B, whose screenshot is a PNG named .jpg (1080x1920)
    assert Image.open(io.BytesIO(p.screencap(png=True))).convert("RGB").getpixel((5, 5))[2] > 150


def test_screens_are_decoded_when_first_served_and_kept_few(notes, monkeypatch):
    monkeypatch.setattr(trace_frames, "KEEP", 2)
    p = phone(notes, A)
    p.frames = trace_frames.Frames(p.size)
    assert p.frames.decoded == 0                      # nothing decoded before the first screencap
    for x, y in ((300, 250), (200, 1850), (300, 250), (200, 1850)):   # A -> B -> A -> B -> A
        p.screencap(png=False)
        p.tap(x, y)
    assert p.frames.decoded == 2 and len(p.frames._shots) == 2


def test_a_secure_scenario_captures_black(notes):
    p = TracePhone(trace=str(notes), trace_start=A, secure_screen=True)
    assert Image.open(io.BytesIO(p.screencap(png=True))).convert("L").getextrema() == (0, 0)


def test_the_scenario_file_selects_the_trace_phone_relative_to_itself(notes, tmp_path):
    path = tmp_path / "scenarios" / "notes.yaml"
    path.parent.mkdir()
    path.write_text(f"trace: ../{notes.name}\ntrace_start: {STATES['B'][0]}\nuiautomator_delay_ms: 0\n", encoding="utf-8")
    p = make_phone(Scenario.load(path))
    assert isinstance(p, TracePhone) and p.snapshot()["trace_state"] == B
    with pytest.raises(ConfigError, match="trace_start needs trace"):
        Scenario(trace_start="abcd")
