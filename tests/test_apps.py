"""App modules: templates with slots, routing weights, YAML errors with file:line, sensitivity, handlers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from remote.apps import APPS_DIR, ModuleRegistry
from remote.apps.base import compile_pattern, fill_slots
from remote.apps.loading import load_module
from remote.commands.modules import check
from remote.core.plan.execution_strategy import batch_steps, classify, wait_after_ms
from remote.core.records import ActionName, ExecutionLevel, StepPlan
from remote.errors import ConfigError


@pytest.fixture(scope="module")
def registry() -> ModuleRegistry:
    return ModuleRegistry()


def write_module(base: Path, name: str, config: str, tasks: str | None = None, handler: str | None = None) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(textwrap.dedent(config), encoding="utf-8")
    if tasks is not None:
        (folder / "tasks.yaml").write_text(textwrap.dedent(tasks), encoding="utf-8")
    if handler is not None:
        (folder / "handler.py").write_text(textwrap.dedent(handler), encoding="utf-8")
    return folder


def test_shipped_modules_load_and_check_clean(registry):
    assert {"wechat", "system", "settings", "chrome"} <= set(registry.modules)
    assert registry.default.name == "system"
    assert check(registry) == []


@pytest.mark.parametrize("task,module,template,slots", [
    ("给张三发微信消息说你好", "wechat", "send_message", {"contact": "张三", "message": "你好"}),
    ("给张三发消息说你好", "wechat", "send_message", {"contact": "张三", "message": "你好"}),
    ("给李四发消息 Hello, world! 😀", "wechat", "send_message", {"contact": "李四", "message": "Hello, world! 😀"}),
    ("打开微信", "wechat", "open", {}),
    ("微信搜索王五", "wechat", "search_contact", {"contact": "王五"}),
    ("返回微信首页", "wechat", "back_to_chat_list", {}),
    ("打开WiFi", "settings", "switch_on", {"setting": "WLAN"}),
    ("关掉蓝牙。", "settings", "switch_off", {"setting": "蓝牙"}),
    ("打开网页 example.com", "chrome", "open_url", {"url": "example.com"}),
    ("在浏览器搜索天气", "chrome", "search", {"query": "天气"}),
    ("打开相机", "system", "open_known_app", {"app": "com.android.camera2"}),
    ("打开地图", "system", "open_app_by_name", {"app": "地图"}),
    ("调大音量", "system", "volume_up", {}),
    ("返回桌面", "system", "go_home", {}),
])
def test_routing_and_template_slots(registry, task, module, template, slots):
    mod, score = registry.route(task)
    assert mod.name == module
    found = registry.handler(mod).match(task)
    assert found is not None and found[0].name == template and found[1] == slots
    assert score >= 0.5


def test_routing_weights_and_default(registry):
    wechat = registry.get("wechat")
    assert registry.score(wechat, "给张三发微信消息说你好") == 0.9          # template 0.5 + keyword 0.4
    assert registry.score(wechat, "微信里有什么新消息") == 0.4               # keyword only
    assert registry.score(wechat, "com.tencent.mm 是什么") == 0.1           # package name only
    module, score = registry.route("今天天气怎么样")
    assert (module.name, score) == ("system", 0.0)
    assert registry.handler(module).plan("今天天气怎么样") is None          # the model plans it then


def test_template_plan_fills_slots_literally_and_validates(registry):
    hostile = '"; reboot; echo "{message}$(id)'
    plan = registry.handler(registry.get("wechat")).plan(f"给张三发消息说{hostile}")
    typed = [s.params["text"] for s in plan.steps if s.action is ActionName.INPUT_TEXT]
    assert typed == ["张三", hostile]
    assert [s.step for s in plan.steps] == list(range(1, len(plan.steps) + 1))
    assert plan.source == "template" and plan.success_check.text == (hostile,)
    assert not any(s.sensitive for s in plan.steps)


def test_compile_pattern_last_slot_takes_the_rest():
    rx = compile_pattern("给{contact}发消息{message}")
    m = rx.fullmatch("给张三发消息说 明天 见")
    assert m.group("contact") == "张三" and m.group("message") == "说 明天 见"
    with pytest.raises(ValueError):
        compile_pattern("{a}和{a}")
    assert fill_slots({"t": "text:{x}", "l": ["{y}", 3]}, {"x": "{y}", "y": "Y"}) == {"t": "text:{y}", "l": ["Y", 3]}


def test_broken_yaml_names_file_and_line(tmp_path):
    folder = write_module(tmp_path, "bad", "name: bad\nkeywords: [a, b\n")
    with pytest.raises(ConfigError) as err:
        load_module(folder)
    assert f"{folder / 'config.yaml'}:" in str(err.value) and "invalid YAML" in str(err.value)


def test_unknown_action_in_a_template_names_the_step_line(tmp_path):
    folder = write_module(tmp_path, "m", "name: m\n", """\
        tasks:
          - name: t
            patterns: [做事]
            steps:
              - {action: tap, target_ref: "text:好"}
              - {action: clik_it, target_ref: "text:坏"}
        """)
    with pytest.raises(ConfigError) as err:
        load_module(folder)
    assert f"{folder / 'tasks.yaml'}:6:" in str(err.value) and "clik_it" in str(err.value)


def test_undeclared_slot_and_unknown_config_keys_are_errors(tmp_path):
    folder = write_module(tmp_path, "m", "name: m\n", """\
        tasks:
          - name: t
            patterns: ["找{who}"]
            steps:
              - {action: tap, target_ref: "text:{whom}"}
        """)
    with pytest.raises(ConfigError, match=r"slot \{whom\} is used but no pattern declares it"):
        load_module(folder)
    folder2 = write_module(tmp_path, "n", "name: n\npackages: x\n")
    with pytest.raises(ConfigError, match="unknown key 'packages'.*did you mean 'package'"):
        load_module(folder2)


def test_registry_collects_problems_and_skips_the_broken_module(tmp_path):
    write_module(tmp_path, "ok", "name: ok\nkeywords: [好]\n")
    write_module(tmp_path, "bad", "name: [\n")
    reg = ModuleRegistry([tmp_path])
    assert list(reg.modules) == ["ok"] and len(reg.problems) == 1 and "bad" in str(reg.problems[0])
    with pytest.raises(ConfigError, match="module 'bad' cannot be loaded"):
        reg.get("bad")


def test_sensitivity_is_declared_by_modules_not_by_typed_text(tmp_path):
    write_module(tmp_path, "pay", "name: pay\nsensitive: [领取红包]\n", """\
        tasks:
          - name: send
            patterns: ["发{text}"]
            steps:
              - {action: input_text, params: {text: "{text}"}}
              - {action: tap, target_ref: "text:领取红包"}
              - {action: tap, target_ref: "text:确定", sensitive: true}
              - {action: tap, target_ref: "text:删除"}
        """)
    reg = ModuleRegistry([tmp_path])
    plan = reg.handler(reg.get("pay")).plan("发请删除这条转账记录")
    assert [s.sensitive for s in plan.steps] == [False, True, True, True]


def test_handler_py_overrides_planning(registry):
    plan = registry.handler(registry.get("chrome")).plan("打开网页 example.com。")
    assert plan.steps[0].params["url"] == "https://example.com"
    plan2 = registry.handler(registry.get("chrome")).plan("访问 http://a.b/c")
    assert plan2.steps[0].params["url"] == "http://a.b/c"


def test_broken_handler_py_is_a_config_error(tmp_path):
    write_module(tmp_path, "h", "name: h\n", handler="raise RuntimeError('boom')\n")
    reg = ModuleRegistry([tmp_path])
    with pytest.raises(ConfigError, match="handler.py failed to import: boom"):
        reg.handler(reg.get("h"))


def test_shipped_references_exist_for_every_module():
    for name in ("wechat", "system", "settings", "chrome"):
        images = list((APPS_DIR / name / "images").glob("*.png"))
        assert images, f"module {name} ships no reference image"
        assert (APPS_DIR / name / "images" / "aliases.yaml").is_file()
        assert (APPS_DIR / name / "prompts" / "planner.txt").is_file()


@pytest.mark.parametrize("step,level", [
    (StepPlan(1, ActionName.LAUNCH_APP, params={"package": "com.tencent.mm"}), ExecutionLevel.FIRE_AND_FORGET),
    (StepPlan(1, ActionName.PRESS_KEY, params={"key": "BACK"}), ExecutionLevel.FIRE_AND_FORGET),
    (StepPlan(1, ActionName.SWIPE, params={"direction": "up"}), ExecutionLevel.QUICK_VERIFY),
    (StepPlan(1, ActionName.INPUT_TEXT, params={"text": "x"}), ExecutionLevel.QUICK_VERIFY),
    (StepPlan(1, ActionName.TAP, "text:发送"), ExecutionLevel.LOCATE_AND_EXECUTE),
    (StepPlan(1, ActionName.TAP, "wechat"), ExecutionLevel.LOCATE_AND_EXECUTE),
    (StepPlan(1, ActionName.BACK_TO_HOME), ExecutionLevel.LOCATE_AND_EXECUTE),
    (StepPlan(1, ActionName.TAP, "dynamic:底部输入框"), ExecutionLevel.FULL_AI),
])
def test_execution_levels(step, level):
    assert classify(step) is level


def test_waits_and_batching():
    launch = StepPlan(1, ActionName.LAUNCH_APP, params={"package": "com.tencent.mm"}, wait_after=0)
    url = StepPlan(2, ActionName.OPEN_URL, params={"url": "https://example.com"}, wait_after=0)
    assert wait_after_ms(launch) == 500 and wait_after_ms(url) == 2500
    assert wait_after_ms(StepPlan(3, ActionName.TAP, "text:a", wait_after=1200)) == 1200
    assert wait_after_ms(StepPlan(4, ActionName.TAP, "dynamic:a", wait_after=0)) == 800
    steps = [launch, StepPlan(2, ActionName.WAIT), url, StepPlan(4, ActionName.TAP, "dynamic:x"),
             StepPlan(5, ActionName.GO_HOME), StepPlan(6, ActionName.PRESS_KEY, params={"key": "BACK"})]
    assert [[s.step for s in b] for b in batch_steps(steps)] == [[1, 2, 2], [4], [5, 6]]


def test_check_notes_module_images_without_their_screen_size(tmp_path):
    from PIL import Image, PngImagePlugin

    from remote.commands.modules import notes
    from remote.core.locate.assets import SOURCE_SIZE_KEY

    folder = write_module(tmp_path, "demo", """\
        name: demo
        display_name: Demo
        keywords: [demo]
        """)
    (folder / "images").mkdir()
    icon = Image.new("RGB", (40, 40), "red")
    icon.save(folder / "images" / "hand_cut.png")
    sized = PngImagePlugin.PngInfo()
    sized.add_text(SOURCE_SIZE_KEY, "1080x2400")
    icon.save(folder / "images" / "captured.png", pnginfo=sized)
    registry = ModuleRegistry([tmp_path])
    advice = notes(registry)
    assert len(advice) == 1 and "hand_cut.png: no screen size stored" in advice[0]
    assert check(registry) == []            # advice, not a fault: `modules check` still passes
