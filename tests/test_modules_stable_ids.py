"""`modules check` warns about id: targets in modules whose app renames its ids (no stable_ids: true)."""

from __future__ import annotations

import json

from remote.apps import ModuleRegistry
from remote.cli import main
from remote.commands.modules import check, id_warnings
from remote.core.locate.target_ref import parse_target
from tests.test_apps import write_module

TASKS = """\
    tasks:
      - name: send
        patterns: ["发给{who}"]
        steps:
          - {action: launch_app, params: {package: com.example.chat}}
          - {action: input_text, target_ref: "id:com.example.chat:id/a_z", params: {text: "{who}"}}
          - {action: tap, target_ref: "text:发送", fallback: {action: tap, target_ref: "id:com.example.chat:id/b8k"}}
        success_check: {text: "{who}"}
    """


def test_shipped_modules_are_clean_and_wechat_names_no_id():
    registry = ModuleRegistry()
    assert check(registry) == []
    wechat = registry.get("wechat")
    assert not wechat.stable_ids
    refs = [s.get("target_ref") for t in wechat.templates for s in t.steps if s.get("target_ref")]
    assert refs and not [r for r in refs if parse_target(r)[0] == "id"]
    assert {m.name for m in registry.modules.values() if m.stable_ids} == {"chrome", "settings"}


def test_a_planted_id_target_is_warned_with_file_line_and_the_forms_that_survive(tmp_path, capsys):
    folder = write_module(tmp_path, "chat", "name: chat\npackage: com.example.chat\nkeywords: [发给]\n", TASKS)
    registry = ModuleRegistry([tmp_path])
    warned = id_warnings(registry)
    assert len(warned) == 2 and check(registry) == warned        # warnings only: the module still loads and runs
    assert warned[0].startswith(f"{folder / 'tasks.yaml'}:6: warning: task send: 'id:com.example.chat:id/a_z'")
    assert "role:CLASS:LABEL or editable:" in warned[0] and "stable_ids: true" in warned[0]
    assert "id:com.example.chat:id/b8k" in warned[1]      # a fallback's target counts too


def test_stable_ids_true_silences_the_warning(tmp_path):
    write_module(tmp_path, "chat", "name: chat\npackage: com.example.chat\nstable_ids: true\n", TASKS)
    assert id_warnings(ModuleRegistry([tmp_path])) == []


def test_an_id_home_ref_is_warned_too(tmp_path):
    write_module(tmp_path, "chat", 'name: chat\nhome_ref: "id:com.example.chat:id/tab"\n', TASKS)
    assert any("home_ref" in w for w in id_warnings(ModuleRegistry([tmp_path])))


def test_stable_ids_must_be_a_boolean(tmp_path):
    write_module(tmp_path, "chat", "name: chat\nstable_ids: sometimes\n", TASKS)
    problems = check(ModuleRegistry([tmp_path]))
    assert any("config.yaml:2" in p and "stable_ids must be true or false" in p for p in problems), problems


def test_a_role_without_a_class_is_a_problem(tmp_path):
    write_module(tmp_path, "chat", "name: chat\n", """\
        tasks:
          - name: send
            patterns: ["发送"]
            steps:
              - {action: tap, target_ref: "role::发送"}
            success_check: {app: com.example.chat}
        """)
    problems = check(ModuleRegistry([tmp_path]))
    assert len(problems) == 1 and "names no class" in problems[0] and ": warning: " not in problems[0]


def test_the_command_prints_warnings_and_still_exits_0_on_the_shipped_modules(capsys):
    assert main(["modules", "check"]) == 0
    out = capsys.readouterr().out
    assert "warning:" not in out and "all good" in out
    assert main(["modules", "check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []
