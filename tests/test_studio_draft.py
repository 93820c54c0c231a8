"""The studio's template draft, without a phone: checked with `modules check`'s own messages, saved into a module
with its text, comments and crops, and the step kinds the page's buttons write."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from remote.apps import ModuleRegistry
from remote.commands.modules import check
from remote.core.locate.assets import SOURCE_SIZE_KEY
from remote.errors import BadInput, ConfigError
from remote.studio.draft import FLOW_KINDS, Draft, add_kind
from remote.studio.lines import parse_line

CONFIG = "name: mine\ndisplay_name: 我的\nkeywords: [我的]\n"
TASKS = "# my tasks: keep this comment\ntasks:\n  - name: first\n    patterns: [打开我的]\n    steps:\n" \
        "      - {action: launch_app, params: {package: com.example.mine}}\n    success_check: {app: com.example.mine}\n"


def module_at(root: Path) -> ModuleRegistry:
    (root / "mine").mkdir(parents=True, exist_ok=True)
    (root / "mine" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "mine" / "tasks.yaml").write_text(TASKS, encoding="utf-8")
    return ModuleRegistry([root])


def test_the_draft_says_what_modules_check_says_of_the_same_task(tmp_path: Path) -> None:
    draft = Draft(module_at(tmp_path).get("mine"), name="second", patterns=["找{who}"])
    draft.add_step({"action": "tap", "target_ref": "no_image_here"})
    draft.add_step({"action": "tap", "target_ref": "role::发送"})
    said = [p.split(": ", 1)[1] for p in draft.problems()]
    # the same task in the file, checked by `remote modules check`
    tasks = tmp_path / "mine" / "tasks.yaml"
    tasks.write_text(draft.yaml(), encoding="utf-8")
    from_file = [p.split(": ", 1)[1] for p in check(ModuleRegistry([tmp_path])) if str(tasks) in p]
    assert said and sorted(said) == sorted(from_file)
    assert any("reference 'no_image_here' has no image" in p for p in said)
    assert any("'role::发送' names no class" in p for p in said)


def test_saving_appends_the_task_keeps_the_file_and_writes_its_crops(tmp_path: Path) -> None:
    registry = module_at(tmp_path)
    draft = Draft(registry.get("mine"), name="second", patterns=["打开我的第二页"])
    crop = draft.shelf.add(Image.new("RGB", (40, 30), (200, 10, 10)), (1080, 2400))
    draft.add_step({"action": "launch_app", "params": {"package": "com.example.mine"}})
    assert add_kind(draft, "tap", crop) == {"action": "tap", "target_ref": crop}
    draft.set_task({"success_check": {"app": "com.example.mine"}})
    assert draft.problems() == []                  # the crop not yet saved counts as an image
    written = draft.save(registry.get("mine").path)
    text = written.read_text(encoding="utf-8")
    assert text.startswith(TASKS) and "# built in remote studio (second)" in text
    assert f"target_ref: second_{crop[len('studio_c'):]}" in text
    with Image.open(tmp_path / "mine" / "images" / f"second_{crop[len('studio_c'):]}.png") as saved:
        assert saved.size == (40, 30) and saved.info[SOURCE_SIZE_KEY] == "1080x2400"
    again = ModuleRegistry([tmp_path]).get("mine")
    assert [t.name for t in again.templates] == ["first", "second"]
    with pytest.raises(BadInput, match="has a task named 'second' already"):
        Draft(again, name="second", patterns=["再来"], steps=[{"action": "go_home"}],
              success_check={"app": "x.y"}).save(again.path)
    with pytest.raises(BadInput, match="no final check: a run of it could never end SUCCESS"):
        Draft(again, name="third", patterns=["再来"], steps=[{"action": "go_home"}]).save(again.path)


def test_a_save_into_an_empty_tasks_list_appends_the_first_task(tmp_path: Path) -> None:
    registry = module_at(tmp_path)
    tasks = tmp_path / "mine" / "tasks.yaml"
    tasks.write_text("# mine\ntasks: []\n", encoding="utf-8")
    draft = Draft(ModuleRegistry([tmp_path]).get("mine"), name="first_one", patterns=["第一个"],
                  steps=[{"action": "go_home"}], success_check={"app": "com.example.mine"})
    draft.save(tasks.parent)
    assert [t.name for t in ModuleRegistry([tmp_path]).get("mine").templates] == ["first_one"]
    assert registry is not None


def test_a_save_that_would_break_the_file_writes_nothing(tmp_path: Path) -> None:
    registry = module_at(tmp_path)
    tasks = tmp_path / "mine" / "tasks.yaml"
    tasks.write_text(TASKS + "other_key: 1\n", encoding="utf-8")   # tasks: is not the last key: an append breaks it
    draft = Draft(registry.get("mine"), name="third", patterns=["第三个"], steps=[{"action": "go_home"}],
                  success_check={"app": "com.example.mine"})
    with pytest.raises(ConfigError, match="saving third would break"):
        draft.save(tasks.parent)
    assert tasks.read_text(encoding="utf-8") == TASKS + "other_key: 1\n"


def test_the_buttons_write_steps_the_schema_accepts(tmp_path: Path) -> None:
    draft = Draft(module_at(tmp_path).get("mine"), name="typing", patterns=["说{message}"])
    add_kind(draft, "launch", "", text="com.example.mine")
    add_kind(draft, "type", "editable:", text="你好", slot="message")
    assert draft.steps[-1] == {"action": "input_text", "params": {"text": "{message}"}, "target_ref": "editable:"}
    assert draft.examples == {"message": "你好"}
    add_kind(draft, "wait", "text:已发送")
    if FLOW_KINDS:   # issue 28's step kinds
        assert draft.steps[-1] == {"wait_until": {"visible": "text:已发送", "timeout_ms": 5000}}
    else:            # today's schema: the step before must see it
        assert draft.steps[-1]["verify_ref"] == "text:已发送"
    # the final check's buttons build the task's success_check, never a step
    steps = len(draft.steps)
    for kind, ref in (("check", "text:你好"), ("gone", "text:发送失败"), ("switch_on", "role:toggle:WLAN")):
        add_kind(draft, kind, ref)
    add_kind(draft, "app", "", text="com.example.mine")
    assert len(draft.steps) == steps and draft.success_check == {
        "target": "text:你好", "absent": ["text:发送失败"], "toggle": {"target": "role:toggle:WLAN", "state": "on"},
        "app": "com.example.mine"}
    assert draft.state()["ends"].startswith("SUCCESS when com.example.mine in front and the screen shows text:你好")
    assert not [p for p in draft.problems() if ": warning: " not in p]
    plan = draft.plan(2, 2)
    assert plan.steps[0].params["text"] == "你好"                       # run with the slot's example
    with pytest.raises(BadInput, match="unknown action"):
        draft.add_step({"action": "clik"})
    with pytest.raises(BadInput, match="slot name"):
        add_kind(draft, "type", "", text="x", slot="not a word")


def test_steps_are_edited_as_yaml_lines_moved_and_their_problems_sit_beside_them(tmp_path: Path) -> None:
    draft = Draft(module_at(tmp_path).get("mine"), name="lines", patterns=["行"])
    draft.add_step({"action": "launch_app", "params": {"package": "com.example.mine"}})
    draft.add_step({"action": "tap", "target_ref": "text:一"})
    draft.add_step({"action": "tap", "target_ref": "no_image_here"})
    state = draft.state()
    assert state["lines"][1] == "{action: tap, target_ref: 'text:一'}"
    # modules check's message about the missing image sits beside step 3, and only there
    assert state["step_problems"][:2] == [[], []]
    assert any("reference 'no_image_here' has no image" in p for p in state["step_problems"][2])
    draft.replace_step(2, parse_line("{action: tap, target_ref: 'text:二'}"))
    assert draft.steps[1] == {"action": "tap", "target_ref": "text:二"}
    with pytest.raises(BadInput, match="unknown action"):
        draft.replace_step(2, parse_line("{action: clik}"))
    with pytest.raises(ConfigError):
        parse_line("{action: [")                                          # not YAML: the reader's own error
    draft.move_step(3, 1)
    assert [s.get("target_ref") for s in draft.steps] == ["no_image_here", None, "text:二"]
    with pytest.raises(BadInput, match="no step 9"):
        draft.move_step(9, 1)
