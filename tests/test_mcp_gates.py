"""The MCP gates an agent must not walk around (issue 24, items 8-11 and 13), through the SDK's own client.

Item 8 runs `python -m remote mcp` over stdio against a simulated phone this test
serves, so the phone's own record says what reached it. The others use the
SDK's client on the server in process (``Client(build_server(session))``,
legacy mode: a session that can be asked mid-call), which is quicker and sees
the same tools. Every test judges the phone's state, not only the replies.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from remote.apps import ModuleRegistry
from remote.core.locate.ui_tree import parse_hierarchy
from remote.mcp import tools_device
from remote.mcp.access import AccessGate
from remote.mcp.server import build_server
from remote.mcp.session import Session, SessionOptions
from remote.mcp.touch import touch_at
from remote.sim import SimPhone, serve
from tests.test_mcp_stdio import call, elicitor, image_of, mcp_session, text_of

REGISTRY = ModuleRegistry()
TOUCHES = ("input tap", "input swipe", "input keyevent")
Answer = Callable[[str], dict[str, Any] | None]


def touches(phone: Any) -> list[str]:
    return [c for c in phone.commands if c.removeprefix("cmd ").startswith(TOUCHES)]   # `cmd input` from Android 11


def decline(message: str) -> None:
    return None


class Person:
    """Says no to everything until told ``yes = True``; keeps every question."""

    def __init__(self) -> None:
        self.yes = False
        self.asked: list[str] = []

    def __call__(self, message: str) -> dict[str, Any] | None:
        self.asked.append(message)
        return {"allow": True, "done": True} if self.yes else None


@asynccontextmanager
async def in_process(session: Session, answer: Answer | None = decline,
                     asked: list[str] | None = None) -> AsyncIterator[Client]:
    """The SDK's client on the server in process; ``answer`` plays the person (None: a client without
    elicitation)."""
    kwargs: dict[str, Any] = {"elicitation_callback": elicitor(answer, asked)} if answer is not None else {}
    async with Client(build_server(session), mode="legacy", read_timeout_seconds=60, **kwargs) as client:
        yield client


@pytest.fixture
def session(adb: Any, sim_phone: Any, tmp_path: Path) -> Session:
    return Session(adb, registry=REGISTRY, gate=AccessGate(), phone=sim_phone,
                   options=SessionOptions(runs_dir=tmp_path / "runs", work_dir=tmp_path / "work", busy_wait=3,
                                          launch_settle_s=0.2))


def image_point(phone: Any, bounds: tuple[int, int, int, int], image_width: int) -> tuple[float, float]:
    scale = phone.size[0] / image_width
    return ((bounds[0] + bounds[2]) / 2 / scale, (bounds[1] + bounds[3]) / 2 / scale)


# ---------------------------------------------------------------- item 8: the element a touch reaches (pure)


def test_the_touch_reaches_the_ad_drawn_over_the_row_and_a_button_is_judged_with_its_card():
    phone = SimPhone(ad_popup=True)
    phone.launch("com.tencent.mm")
    tree = parse_hierarchy(phone.dump_xml(), phone.size)
    text = phone.find(text="新人专享红包 最高88元")
    assert text is not None
    reached = touch_at(tree, text.center)
    assert reached is not None and "红包" in reached.name and reached.node.bounds == (0, 0, *phone.size)
    button = phone.find(text="立即领取")
    assert button is not None
    claimed = touch_at(tree, button.center)
    assert claimed is not None and claimed.name == "立即领取" and "红包" in claimed.words
    with phone.lock:
        phone.ad_pending = False
        phone.changed()
    row = touch_at(parse_hierarchy(phone.dump_xml(), phone.size), text.center)
    assert row is not None and "红包" not in row.words and row.node.resource_id.endswith(":id/s4i")


def test_the_pure_rules_keep_their_documented_examples():
    import doctest

    from remote.core.device import keyrules
    from remote.mcp import asking, server, touch

    for module in (touch, keyrules, server, asking):
        failed, tried = doctest.testmod(module)
        assert tried and not failed, module.__name__
    assert keyrules.rule(999).kind is keyrules.KeyKind.UNKNOWN
    assert {keyrules.rule(c).kind for c in (5, 6, 79)} == {keyrules.KeyKind.CALL}
    assert all(keyrules.rule(c).kind is keyrules.KeyKind.APP for c in (27, 64, 176, 207, 219, 231, 289, 304))


# ---------------------------------------------------------------- item 8: over stdio, the person saying no


@pytest.mark.slow
def test_a_coordinate_act_on_a_red_packet_ad_is_judged_by_the_ad_and_never_reaches_the_phone(tmp_path):
    asked: list[str] = []
    server = serve(uiautomator_delay_ms=0, ad_popup=True)
    phone = server.phone

    async def scenario() -> None:
        args = ["--device", server.serial, "--adb-port", str(server.port), "--allow", "微信"]
        async with mcp_session(args, tmp_path, decline, asked) as client:
            assert not (await call(client, "open_app", name="微信")).is_error
            assert phone.snapshot()["foreground"]["screen"] == "ad_popup"
            shot = await call(client, "screenshot", max_side=640, with_elements=False)
            x, y = image_point(phone, phone.find(text="新人专享红包 最高88元").bounds, image_of(shot).width)
            bx, by = image_point(phone, phone.find(text="立即领取").bounds, image_of(shot).width)
            before = len(touches(phone))
            refusals = [
                await call(client, "tap", x=x, y=y),
                await call(client, "long_press", x=x, y=y),
                await call(client, "double_tap", x=bx, y=by),
                await call(client, "batch", actions=[{"action": "tap", "x": x, "y": y}]),
                await call(client, "drag", start={"x": 10, "y": 300}, end={"x": bx, "y": by}),
            ]
            for result in refusals:
                said = text_of(result)
                assert "did not allow this sensitive action (红包" in said, said
            assert "广告 · 限时福利 · 新人专享红包" in text_of(refusals[0])       # the element really there
            assert "立即领取" in text_of(refusals[2]) and "新人专享红包" in text_of(refusals[2])
            assert len(asked) == 5 and all("红包" in q for q in asked)
            assert touches(phone)[before:] == []                            # nothing reached the phone
            assert phone.snapshot()["foreground"]["screen"] == "ad_popup"

            # a stale screenshot (taken before the ad) and max_elements=0: the tree of now decides
            with phone.lock:
                phone.ad_pending = False
                phone.changed()
            await call(client, "screenshot", max_side=640, max_elements=0)
            with phone.lock:
                phone.ad_pending = True
                phone.changed()
            stale = await call(client, "tap", x=x, y=y)
            assert stale.is_error and "新人专享红包" in text_of(stale)
            assert touches(phone)[before:] == [] and phone.snapshot()["chats"] == {}

            # the close button is no red packet: it goes through, and says what it reached
            cx, cy = image_point(phone, phone.find(desc="关闭").bounds, image_of(shot).width)
            closed = await call(client, "tap", x=cx, y=cy)
            assert not closed.is_error and "'关闭'" in text_of(closed)
            assert phone.snapshot()["foreground"]["screen"] == "chats"
    try:
        anyio.run(scenario)
    finally:
        server.close()


def test_a_coordinate_tap_where_no_element_is_known_asks_in_an_app_with_sensitive_steps(session, sim_phone):
    session.gate.grant(["com.tencent.mm"])       # the operator's --allow: every session starts with it

    async def scenario() -> None:
        async with in_process(session) as client:
            await call(client, "open_app", name="微信")
            shot = await call(client, "screenshot", max_side=540)
            before = len(touches(sim_phone))
            title = sim_phone.find(text="微信")                       # the title: a text nothing clickable holds
            assert title is not None and not title.clickable
            x, y = image_point(sim_phone, title.bounds, image_of(shot).width)
            refused = await call(client, "tap", x=x, y=y)
            assert refused.is_error and "unknown target" in text_of(refused), text_of(refused)
            assert "no element the UI tree shows" in text_of(refused)
            assert touches(sim_phone)[before:] == []
    anyio.run(scenario)


# ---------------------------------------------------------------- item 9: every phone action of an act is checked


def typed(phone: Any) -> list[str]:
    return [c for c in phone.commands if "ADB_INPUT" in c or c.removeprefix("cmd ").startswith(("input text", "input keyevent 66"))]


def test_type_stops_when_its_tap_opened_an_app_not_allowed(session, sim_phone):
    async def scenario() -> None:
        async with in_process(session) as client:
            before = len(typed(sim_phone))
            result = await call(client, "type", text="hello", target_ref="desc:计算器", submit=True)
            assert result.is_error
            assert "brought com.android.calculator2 to the front" in text_of(result), text_of(result)
            assert typed(sim_phone)[before:] == []                       # no text, no ENTER reached the phone
            assert sim_phone.snapshot()["foreground"]["package"] == "com.android.launcher3"
    anyio.run(scenario)


# ---------------------------------------------------------------- item 10: raw key codes


def keys_pressed(phone: Any) -> list[str]:
    return [c for c in phone.commands if c.removeprefix("cmd ").startswith("input keyevent")]


def test_keys_that_call_or_launch_apps_obey_the_gate(session, sim_phone):
    person = Person()
    asked = person.asked

    async def scenario() -> None:
        async with in_process(session, person) as client:
            for code in ("176", "KEYCODE_CALL", "call", "64", "207", "219", "27", "KEYCODE_CALCULATOR"):
                result = await call(client, "key", combo=code)
                assert result.is_error, (code, text_of(result))
            assert keys_pressed(sim_phone) == []
            assert sim_phone.snapshot()["foreground"]["package"] == "com.android.launcher3"
            assert len(asked) == 2 and all("phone call" in q for q in asked)   # CALL twice: the person said no
            refused = await call(client, "key", combo="176")
            assert "opens the system settings (com.android.settings), not in this session's allowed apps" \
                in text_of(refused)

            await call(client, "request_access", apps=["设置"])               # declined: still refused
            assert (await call(client, "key", combo="176")).is_error
            person.yes = True                                                # with Settings allowed, it opens it
            assert not (await call(client, "request_access", apps=["设置"])).is_error
            assert not (await call(client, "key", combo="176")).is_error
            assert sim_phone.snapshot()["foreground"]["package"] == "com.android.settings"
            assert not (await call(client, "key", combo="back")).is_error
    anyio.run(scenario)


def test_a_model_planned_task_pressing_app_and_call_keys_does_not_succeed(adb, sim_phone, tmp_path, model_server,
                                                                         llm_config):
    from tests.test_runner_model import plan

    model_server.script("plan", plan({"action": "press_key", "params": {"key": 176}},
                                     {"action": "press_key", "params": {"key": 5}},
                                     {"action": "press_key", "params": {"key": 207}}))
    session = Session(adb, registry=REGISTRY, llm=llm_config, gate=AccessGate(), phone=sim_phone,
                      options=SessionOptions(runs_dir=tmp_path / "runs", work_dir=tmp_path, launch_settle_s=0.2))

    async def scenario() -> None:
        async with in_process(session) as client:
            result = await call(client, "run_task", task="帮我随便按几个特殊按键看看", max_seconds=60)
            assert result.is_error and not text_of(result).startswith("SUCCESS"), text_of(result)
            # the runner's own gate stops it first: a key that opens Settings needs the person's yes (declined here)
            record = json.loads(next((tmp_path / "runs").glob("*/run.json")).read_text(encoding="utf-8"))
            assert record["failure"] == "not_confirmed", record
            assert "SETTINGS (key 176), which opens the system settings" in json.dumps(record, ensure_ascii=False)
            assert not any(c.split()[-1] in ("176", "5", "207") for c in keys_pressed(sim_phone))
            assert sim_phone.snapshot()["foreground"]["package"] == "com.android.launcher3"
    anyio.run(scenario)


# ---------------------------------------------------------------- item 11: the launcher is no way around the gate


def test_home_screen_icons_open_only_allowed_apps_and_a_screenshot_of_another_app_shows_nothing(session, sim_phone):
    person = Person()

    async def scenario() -> None:
        async with in_process(session, person) as client:
            listing = await call(client, "screenshot", max_side=540)
            icon = sim_phone.find(desc="微信")
            x, y = image_point(sim_phone, icon.bounds, image_of(listing).width)
            before = len(touches(sim_phone))
            refused = await call(client, "tap", x=x, y=y)
            assert refused.is_error and "would open com.tencent.mm" in text_of(refused), text_of(refused)
            assert touches(sim_phone)[before:] == []
            left = await call(client, "tap", target_ref="desc:计算器")      # an app no module names: opened, left
            assert left.is_error and "pressed HOME to leave it" in text_of(left)
            assert sim_phone.snapshot()["foreground"]["package"] == "com.android.launcher3"

            sim_phone.launch("com.tencent.mm")                               # it got there some other way
            shot = await call(client, "screenshot")
            said = text_of(shot)
            assert "com.tencent.mm is not in this session's allowed apps" in said
            assert "张三" not in said and "微信" not in said.split("Foreground")[0]
            assert not any(c.type == "image" for c in shot.content)
            assert (await call(client, "tap", x=10, y=300)).is_error
            assert not (await call(client, "key", combo="home")).is_error       # the way out is always there
            person.yes = True
            assert not (await call(client, "request_access", apps=["微信"])).is_error
            assert not (await call(client, "tap", x=x, y=y)).is_error
            assert sim_phone.snapshot()["foreground"]["package"] == "com.tencent.mm"
            assert "张三" in text_of(await call(client, "screenshot"))
    anyio.run(scenario)


# ---------------------------------------------------------------- item 13: a call's deadline stops its work


def test_a_batch_that_times_out_stops_polling_the_phone_and_leaves_it_free(session, sim_phone, monkeypatch):
    monkeypatch.setattr(tools_device, "ACT_TIMEOUT", 1.0)          # the batch's deadline: 3 s instead of 360 s
    waits = [{"action": "wait_for", "target_ref": "text:不存在的按钮", "timeout": 300}] * 30

    async def scenario() -> None:
        async with in_process(session) as client:
            started = time.monotonic()
            result = await call(client, "batch", actions=waits)
            assert result.is_error and "timed out after 3 s" in text_of(result)
            assert time.monotonic() - started < 10
            await anyio.sleep(0.8)                                   # one poll interval for the thread to notice
            polled = len(sim_phone.commands)
            await anyio.sleep(1.5)
            assert len(sim_phone.commands) - polled <= 1, sim_phone.commands[polled:]
            shot = await call(client, "screenshot")                   # the phone is free at once
            assert not shot.is_error, text_of(shot)
    anyio.run(scenario)


# ---------------------------------------------------------------- item 14: tokens, bounded texts, stop_app


def test_a_short_token_is_refused_beyond_loopback(capsys, monkeypatch):
    from remote.cli import main

    monkeypatch.setenv("REMOTE_MCP_TOKEN", "x")
    assert main(["mcp", "--device", "no-such-phone", "--http", "0.0.0.0:8765"]) == 2
    assert "at least 16" in capsys.readouterr().err


def test_what_the_person_is_shown_is_bounded_and_stop_app_spares_the_system(session, sim_phone):
    person = Person()
    huge = "请允许" + "很长的理由" * 200_000                    # a million characters

    async def scenario() -> None:
        async with in_process(session, person) as client:
            refused = await call(client, "request_access", apps=["微信"], reason=huge)
            assert refused.is_error
            shown = person.asked[-1]
            assert len(shown) < 600 and "more characters not shown" in shown and "请允许很长的理由" in shown
            person.yes = True
            await call(client, "teach_step", text="点这里" * 100_000)
            assert len(person.asked[-1]) < 1000 and "more characters not shown" in person.asked[-1]

            assert not (await call(client, "request_access", apps=["com.android.systemui", "com.android.launcher3"])
                        ).is_error or True
            for package in ("com.android.systemui", "com.android.launcher3", "com.android.phone"):
                stopped = await call(client, "stop_app", name=package)
                assert stopped.is_error and "part of the phone itself" in text_of(stopped), text_of(stopped)
            assert not any("force-stop" in c for c in sim_phone.commands)
    anyio.run(scenario)
