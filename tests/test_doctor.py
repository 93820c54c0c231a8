"""`remote doctor` on the simulated phone with each real-phone behaviour on: the right ✗ and the right steps.

Through the CLI and the real adbutils client; the phone's own command log shows that the probes
changed nothing (a key nothing reacts to, a keyboard list).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from remote.cli import main
from remote.sim import serve

ALL = ["device state", "Android", "ROM", "tap injection", "keyboard switching", "ADBKeyboard",
       "UI dump", "fast tree", "displays", "rotation", "lock and screen", "screenshot"]


def doctor(tmp_path: Path, capsys: Any, scenario: dict[str, Any], *extra: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "phone.yaml"
    path.write_text(yaml.safe_dump(scenario, allow_unicode=True), encoding="utf-8")
    code = main(["doctor", "--device", "sim", "--scenario", str(path), "--json", *extra])
    report = json.loads(capsys.readouterr().out)
    return code, report


def failed(report: dict[str, Any]) -> dict[str, str]:
    """{check: its measurement and steps as one text} for every ✗."""
    return {c["check"]: c["measured"] + " | " + " ".join(c["steps"]) for c in report["checks"] if not c["ok"]}


def test_the_default_simulated_phone_is_ready_on_every_line(tmp_path, capsys):
    assert main(["doctor", "--device", "sim"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("  ✓") or line.startswith("  ✗")]
    assert [line[4:23].strip() for line in lines] == ALL and all(line.startswith("  ✓") for line in lines)
    assert "ready: every check passed" in out and "Android             13 (SDK 33)" in out


@pytest.mark.parametrize(("scenario", "expected"), [
    ({"rom": "miui", "input_refused": True, "ime_refused": True},
     {"tap injection": "「USB调试（安全设置）」", "keyboard switching": "「USB调试（安全设置）」",
      "ADBKeyboard": "cannot enable it here"}),
    ({"rom": "hyperos", "input_refused": True},
     {"tap injection": "「USB调试（安全设置）」"}),
    ({"rom": "originos", "input_refused": True},
     {"tap injection": "「USB模拟点击」"}),
    ({"rom": "coloros", "ime_refused": True},
     {"keyboard switching": "「禁止权限监控」", "ADBKeyboard": "cannot enable it here"}),
    ({"rom": "emui", "input_refused": True},
     {"tap injection": "no switch for it on this ROM is known"}),
    ({"rom": "oneui", "ime_refused": True, "keyboard": "latin"},
     {"keyboard switching": "no switch for it on this ROM is known", "ADBKeyboard": "cannot enable it here"}),
    ({"android": 16, "adbkeyboard_build": "root-2023"},
     {"ADBKeyboard": "releases/download/v2.5-dev"}),
    ({"adbkeyboard": False},
     {"ADBKeyboard": "not installed"}),
])
def test_each_switch_off_gets_its_cross_and_its_steps(tmp_path, capsys, scenario, expected):
    code, report = doctor(tmp_path, capsys, scenario)
    assert code == 1 and report["ready"] is False
    crosses = failed(report)
    assert set(crosses) == set(expected)
    for name, words in expected.items():
        assert words in crosses[name], (name, crosses[name])
    assert [c["check"] for c in report["checks"]] == ALL          # every check ran, none crashed


def test_keyboard_switching_refused_is_fine_when_adbkeyboard_already_is_the_keyboard(tmp_path, capsys):
    code, report = doctor(tmp_path, capsys, {"rom": "coloros", "ime_refused": True, "keyboard": "adbkeyboard"})
    assert code == 0 and report["ready"] and not failed(report)
    line = next(c for c in report["checks"] if c["check"] == "keyboard switching")
    assert "refused" in line["measured"] and "not needed" in line["measured"]


def test_an_unfixed_build_on_android_16_is_not_passed_off_as_known_good(tmp_path, capsys):
    code, report = doctor(tmp_path, capsys, {"android": 16, "adbkeyboard_build": "v2.4-dev"})
    line = next(c for c in report["checks"] if c["check"] == "ADBKeyboard")
    assert "only v2.5-dev of these receives text" in line["measured"]


@pytest.mark.parametrize(("state", "words"), [
    ("unauthorized", "accept the USB debugging prompt on the phone (and tick 'always allow'"),
    ("offline", "adb connect IP:PORT"),
    ("no permissions", "udev"),
])
def test_a_phone_not_ready_gets_only_the_state_line_with_its_steps(tmp_path, capsys, state, words):
    code, report = doctor(tmp_path, capsys, {"device_state": state})
    assert code == 1 and [c["check"] for c in report["checks"]] == ["device state"]
    assert words in failed(report)["device state"] and state in failed(report)["device state"]


def test_the_probes_change_nothing_on_the_phone(capsys):
    with serve({"rom": "miui", "input_refused": True, "ime_refused": True}) as server:
        before = server.phone.snapshot()
        assert main(["doctor", "--device", server.serial, "--adb-port", str(server.port)]) == 1
        after = server.phone.snapshot()
    out = capsys.readouterr().out
    assert "✗ tap injection" in out and "1. Settings → Additional settings → Developer options" in out
    probes = [c for c in after["commands"] if c.startswith(("input", "ime"))]
    assert probes == ["input keyevent 0", "ime list -s"]
    for key in ("foreground", "focused_text", "chats", "ime", "settings"):
        assert after[key] == before[key]
