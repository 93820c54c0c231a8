"""SUCCESS means checked: every shipped template declares a final check, key presses are checked by what they
change (the media volume, the screen), and a template without a check never ends SUCCESS (issue 36 item 8)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from remote.apps import ModuleRegistry
from remote.commands.modules import check
from remote.core.device.audio import Volume, music_volume
from remote.core.plan.actions import ArgsError
from remote.core.plan.checks import parse_success_check
from remote.core.records import TaskStatus
from tests.support.cli_fixtures import remote_cli

UNCHECKED_MODULE = {
    "config.yaml": "name: beeper\npackage: com.example.beeper\n",
    "tasks.yaml": """\
        tasks:
          - name: beep
            patterns: [嘀一声]
            steps:
              - {action: press_key, params: {key: VOLUME_DOWN}}
        """,
}


def _module(base: Path) -> Path:
    folder = base / "beeper"
    folder.mkdir(parents=True)
    for name, text in UNCHECKED_MODULE.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return base


def test_every_shipped_template_declares_a_final_check():
    registry = ModuleRegistry()
    templates = [(m.name, t) for m in registry.modules.values() for t in m.templates]
    assert len(templates) >= 20
    unchecked = [f"{name}.{t.name} (line {t.line})" for name, t in templates
                 if not parse_success_check(t.success_check) and not t.answer]
    assert unchecked == []
    assert not [p for p in check(registry) if "no success_check" in p]


def test_volume_and_changed_are_clauses_of_the_grammar():
    wanted = parse_success_check({"volume": "up", "changed": True})
    assert wanted and wanted.volume == "up" and wanted.changed and wanted.needs_start
    assert parse_success_check(wanted.to_dict()) == wanted
    assert "the media volume went up" in wanted.describe()
    for bad in ({"volume": "louder"}, {"changed": "yes"}):
        with pytest.raises(ArgsError):
            parse_success_check(bad)
    assert not parse_success_check({"app": "x"}).needs_start


def test_media_volume_as_dumpsys_audio_prints_it():
    text = ("- STREAM_RING:\n   Max: 7\n   streamVolume:5\n- STREAM_MUSIC:\n   Muted: true\n   Min: 0\n   Max: 15\n"
            "   Current: 2 (speaker): 11, 4000000 (usb_headset): 3\n   Devices: usb_headset\n- STREAM_ALARM:\n")
    assert music_volume(text) == Volume(3, 15, True)
    assert music_volume("- STREAM_MUSIC:\n   Max: 15\n   Devices: hdmi\n") is None


@pytest.mark.parametrize("task,start,end", [("调大音量", 7, 8), ("调大音量", 15, 15), ("调小音量", 0, 0)])
def test_volume_templates_are_checked_on_the_phone(make_runner, sim_phone, task, start, end):
    sim_phone.volume = start
    result = make_runner().run(task)
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.volume == end
    assert result.final_check.passed is True and f"{start}/15 -> {end}/15" in result.final_check.summary


def test_back_is_checked_by_the_screen_it_leaves(make_runner, sim_phone):
    assert make_runner().run("打开和王五的聊天").status is TaskStatus.SUCCESS
    result = make_runner().run("返回")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["foreground"]["screen"] != "chat:王五"


def test_back_with_nowhere_to_go_is_not_a_success(make_runner, sim_phone):
    result = make_runner().run("返回")    # the launcher's first page: BACK changes nothing
    assert result.status is TaskStatus.FAILED
    assert "the same texts on the screen" in result.final_check.summary


@pytest.mark.slow
def test_a_template_without_a_check_never_prints_success(tmp_path, cli_env):
    modules = _module(tmp_path / "modules")
    env = {**cli_env, "REMOTE_MODULES": str(modules)}
    checked = remote_cli("modules", "check", env=env, cwd=tmp_path)
    assert f"{modules / 'beeper' / 'tasks.yaml'}:2: warning: task beep: no success_check" in checked.stdout
    run = remote_cli("run", "--device", "sim", "--runs-dir", str(tmp_path / "runs"), "嘀一声", env=env, cwd=tmp_path)
    assert run.returncode == 1, run.stderr[-2000:]
    assert "SUCCESS" not in run.stdout and "UNCHECKED: 嘀一声" in run.stdout
    assert "no final check: the template declares no final check" in run.stdout
    as_json = remote_cli("run", "--device", "sim", "--json", "--runs-dir", str(tmp_path / "runs"), "嘀一声",
                         env=env, cwd=tmp_path)
    assert '"status": "unchecked"' in as_json.stdout and as_json.returncode == 1
