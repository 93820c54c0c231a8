"""Every path of every recording's paths.json, replayed through the real runner on the trace phone.

The loopback model server returns the path as a plan of ``tap text:``/``tap desc:`` steps (one model
call); the runner locates each label on the served screen, taps it over ADB, and the trace phone must
end on the path's last state having visited exactly the path's states. One path goes through
``python -m remote run --device sim --scenario FILE`` with the trace in the scenario file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from remote import cli
from remote.apps.learned import LearnedStore
from remote.core.device.adb_controller import ADBController
from remote.core.records import TaskStatus
from remote.runner import RunOptions, build_runner
from remote.runner.clock import Clock
from remote.runner.learner import Learner
from remote.sim import serve
from remote.sim.trace import TracePhone
from tests.support.data import looked
from tests.support.model_fixtures import SECRET_KEY
from tests.support.runner_fixtures import no_sleep
from tests.support.trace_fixtures import recordings

CASES = [pytest.param(folder, i, path, id=f"{folder.name}-{i}")
         for folder in recordings()
         for i, path in enumerate(json.loads((folder / "paths.json").read_text(encoding="utf-8"))["paths"])]
if not CASES:
    CASES = [pytest.param(None, 0, [], marks=pytest.mark.skip(
        reason=f"DroidBot recordings not found at {looked('traces')}: no path to replay"))]


# Weibo's area list (876ee2…) returns to the screen that opened it. DroidBot tapped its "Back" label once after
# opening it from the sign-up page (5acec9…); a path that opens it from the login page (aa9393…) gets back there,
# as the recording's two taps of the Back button around that label did. Tapping the label itself reproduces
# DroidBot's outcome (test_trace_phone_paths_at_droidbots_points); the runner taps the button's centre.
HISTORY = {("876ee2d06177bde3eafc56d10988b972", "Back", "5acec9bd51e799103a19962ec89bccbf"):
           "aa93932eb34505ff1b1516b3e94a0c2b"}


def expected_end(path: list[dict[str, Any]]) -> str:
    last = path[-1]
    for (start, label, stop), instead in HISTORY.items():
        if (last["start_state"], last["label"], last["stop_state"]) == (start, label, stop):
            return instead
    return last["stop_state"]


def plan_of(path: list[dict[str, Any]], recording: Any) -> dict[str, Any]:
    """The path as a model's plan; its final check: the last screen's app in front and a text that screen
    shows and the one before it does not."""
    steps = [{"step": i, "action": "tap", "target_ref": f"{step['label_kind']}:{step['label']}",
              "description": f"tap {step['label']!r}"} for i, step in enumerate(path, 1)]
    last = expected_end(path)
    check: dict[str, Any] = {"app": recording.states[last].package}
    telling = recording.telling_texts(last, path[-1]["start_state"])
    if telling:
        check["text"] = telling[0]
    return {"analysis": {"current_screen": "a recorded screen"}, "steps": steps, "success_criteria": "the path's end",
            "success_check": check, "potential_issues": []}


@pytest.fixture
def sim_scenario(request: pytest.FixtureRequest) -> dict[str, Any]:
    folder, path = request.node.callspec.params["folder"], request.node.callspec.params["path"]
    return {"uiautomator_delay_ms": 0, "trace": str(folder), "trace_start": path[0]["start_state"]} if folder else {}


@pytest.mark.parametrize("folder, index, path", CASES)
def test_trace_phone_paths_at_droidbots_points(folder, index, path):
    """Tapping the centre of each path's view (where DroidBot tapped) ends in the path's last state."""
    phone = TracePhone(trace=str(folder), trace_start=path[0]["start_state"])
    for step in path:
        (x1, y1), (x2, y2) = step["bounds"]
        phone.tap((x1 + x2) // 2, (y1 + y2) // 2)
    assert phone.snapshot()["visited"] == [path[0]["start_state"]] + [step["stop_state"] for step in path]


@pytest.mark.slow
@pytest.mark.parametrize("folder, index, path", CASES)
def test_a_recorded_path_replayed_as_taps_ends_in_its_last_state(folder, index, path, fast_adb, sim_phone,
                                                                 model_server, llm_config, sim_scenario, tmp_path):
    model_server.script("plan", plan_of(path, sim_phone.recording))
    learned = LearnedStore(tmp_path / "learned")
    runner = build_runner(fast_adb, llm=llm_config, options=RunOptions(runs_dir=None),   # no record: no PNGs
                          device_state=sim_phone.snapshot, clock=Clock(300, sleep=no_sleep),
                          learner=Learner(learned))
    result = runner.run(f"replay recorded path number {index}")
    snap = sim_phone.snapshot()
    assert snap["trace_state"] == expected_end(path)
    assert snap["visited"] == [path[0]["start_state"]] + [step["stop_state"] for step in path[:-1]] + [expected_end(path)]
    assert result.model_usage.calls == 1                 # the plan; every label was found without a model
    # A dialog the last tap opens (bluepie's and adfree's notification access) is the step's result: it stays
    assert not [n for sr in result.step_results for n in sr.notes if n.startswith("dismissed")]
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert snap["unrecorded_inputs"] == 0
    assert result.learning.get("learned"), result.learning

    # Learned: the same path on a fresh trace phone, with no model at all (docs/learning.md)
    with serve(sim_scenario) as second:
        adb = ADBController(second.serial, port=second.port, socket_timeout=5, command_timeout=10,
                            state_dir=str(tmp_path / "ime2"), sleep=no_sleep)
        try:
            replay = build_runner(adb.connect(), llm=None, options=RunOptions(runs_dir=None),
                                  device_state=second.phone.snapshot, clock=Clock(300, sleep=no_sleep),
                                  learner=Learner(learned)).run(f"replay recorded path number {index}")
        finally:
            adb.close()
        again = second.phone.snapshot()
    assert replay.status is TaskStatus.SUCCESS and replay.plan_source == "learned", replay.error_message
    assert replay.model_usage.calls == 0 and again["trace_state"] == expected_end(path)
    assert again["unrecorded_inputs"] == 0


def test_the_run_command_replays_a_path_from_a_scenario_file(model_server, tmp_path, monkeypatch, capsys):
    folder = next((f for f in recordings() if f.name == "com.uberspot.a2048.apk"), None)
    if folder is None:
        pytest.skip(f"DroidBot recordings not found at {looked('traces')}")
    path = max(json.loads((folder / "paths.json").read_text(encoding="utf-8"))["paths"], key=len)
    scenario = tmp_path / "trace.yaml"
    scenario.write_text(f"trace: {folder}\ntrace_start: {path[0]['start_state'][:8]}\nuiautomator_delay_ms: 0\n",
                        encoding="utf-8")
    for key, value in {"CUSTOM_LLM_BASE_URL": model_server.url, "CUSTOM_LLM_API_KEY": SECRET_KEY,
                       "CUSTOM_LLM_MODEL": "test-vl", "LLM_PROVIDER": "custom"}.items():
        monkeypatch.setenv(key, value)
    model_server.script("plan", plan_of(path, TracePhone(trace=str(folder)).recording))
    code = cli.main(["run", "--device", "sim", "--scenario", str(scenario), "--json", "--runs-dir",
                     str(tmp_path / "runs"), "replay the longest 2048 path"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["status"] == "success" and summary["model_calls"] == 1
    record = json.loads((Path(summary["record"]) / "run.json").read_text(encoding="utf-8"))
    assert record["device_state"]["trace_state"] == path[-1]["stop_state"]
    assert record["device_state"]["unrecorded_inputs"] == 0 and SECRET_KEY not in json.dumps(record)


def test_run_with_trace_but_not_the_simulated_device_is_refused(tmp_path, capsys):
    code = cli.main(["run", "--trace", str(tmp_path), "--runs-dir", str(tmp_path / "runs"), "anything"])
    assert code == 2 and "--trace" in capsys.readouterr().err


def test_sim_with_a_folder_that_is_not_a_recording_says_so(tmp_path, capsys):
    code = cli.main(["sim", "--port", "5099", "--trace", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "not a DroidBot output folder" in err and "Traceback" not in err
