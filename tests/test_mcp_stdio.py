"""`python -m remote mcp` driven by the MCP SDK's own client over stdio, as an agent drives it.

The server runs as a child process. Either it starts its own simulated phone
(``--device sim``: everything is observed through the tools, as an agent would),
or it is pointed at a simulated phone this test serves (``--device remote-sim
--adb-port P``), so the test can also read the phone's own record of what
reached it: the exact tap pixels, the typed text, whether anything rebooted.
Sessions use the handshake protocol (2025-11-25), which is what Claude Desktop,
Claude Code and Cursor speak; test_mcp_http.py covers the 2026-07-28 path.
"""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from PIL import Image

from remote.sim import serve

pytestmark = pytest.mark.slow
Answer = Callable[[str], dict[str, Any] | None]   # elicitation message -> content to accept, or None to decline


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def image_of(result: types.CallToolResult) -> Image.Image:
    data = next(c.data for c in result.content if c.type == "image")
    return Image.open(io.BytesIO(base64.b64decode(data)))


def elicitor(answer: Answer | None, asked: list[str] | None = None) -> Callable[..., Any]:
    """An elicitation callback: ``answer`` plays the person (content to accept, None to decline)."""
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if asked is not None:
            asked.append(params.message)
        content = answer(params.message) if answer is not None else None
        return types.ElicitResult(action="accept", content=content) if content is not None \
            else types.ElicitResult(action="decline")
    return elicit


@asynccontextmanager
async def mcp_session(args: list[str], tmp: Path, answer: Answer | None = None,
                      asked: list[str] | None = None) -> AsyncIterator[Client]:
    """A client on a fresh ``python -m remote mcp ARGS`` child; ``answer`` plays the person."""
    elicit = elicitor(answer, asked)
    env = {"ADBUTILS_ADB_PATH": "/bin/true", "PYTHONUNBUFFERED": "1"}
    params = StdioServerParameters(command=sys.executable, cwd=str(tmp), env=env,
                                   args=["-m", "remote", "mcp", "--runs-dir", str(tmp / "runs"),
                                         "--work-dir", str(tmp / "work"), *args])
    async with Client(params, mode="legacy", elicitation_callback=elicit, read_timeout_seconds=180) as client:
        yield client


async def call(client: Client, tool: str, /, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool(tool, arguments)


async def ok(client: Client, tool: str, /, **arguments: Any) -> str:
    result = await call(client, tool, **arguments)
    assert not result.is_error, f"{tool}({arguments}) failed: {text_of(result)}"
    return text_of(result)


def allow_all(message: str) -> dict[str, Any]:
    return {"allow": True, "done": True}


# ---------------------------------------------------------------- the headline, by tool calls alone


def test_the_headline_task_by_tool_calls_alone(tmp_path):
    asked: list[str] = []

    async def scenario() -> None:
        async with mcp_session(["--device", "sim"], tmp_path, allow_all, asked) as client:
            assert client.protocol_version == "2025-11-25"
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"screenshot", "zoom", "tap", "double_tap", "long_press", "drag", "scroll", "scroll_to", "type",
                    "key", "open_app", "list_apps", "stop_app", "open_url", "clipboard_read", "clipboard_write",
                    "wait", "wait_for", "batch", "run_task", "request_access", "teach_step",
                    "teach_batch"} <= names
            assert "allowed for this MCP session only (the person allowed it; other sessions do not get it): " \
                   "com.tencent.mm" in \
                await ok(client, "request_access", apps=["微信"], reason="send a message")
            assert any("com.tencent.mm" in m for m in asked)
            shot = await call(client, "screenshot", max_side=640)
            assert image_of(shot).size == (288, 640)
            assert "1 image px = 3.75 device px" in text_of(shot)
            await ok(client, "open_app", name="微信")
            assert "desc:搜索 found via tree (confidence" in await ok(client, "tap", target_ref="desc:搜索")
            assert "reads back as typed" in await ok(client, "type", text="张三")
            await ok(client, "tap", target_ref="text:张三")
            await ok(client, "type", text="你好", target_ref="editable:")
            await ok(client, "tap", target_ref="text:发送")
            final = text_of(await call(client, "screenshot", max_side=640))
            assert '[Button] "你好"' in final and "id=bkl" in final   # 8.0.47's message id (remote/sim/versions.py)

            # batch: per action, did the screen change?
            result = await call(client, "batch", actions=[{"action": "wait", "seconds": 0.05},
                                                          {"action": "tap", "target_ref": "desc:返回"}])
            lines = text_of(result).splitlines()
            assert lines[0].startswith("1. wait: ok, screen unchanged")
            assert lines[1].startswith("2. tap: ok, screen changed")
            assert image_of(result).size == (288, 640)          # the size this session asked for last

            # no model is configured (the child's environment has no key): the vision tier says so
            dynamic = await call(client, "tap", target_ref="dynamic:右上角的加号")
            assert dynamic.is_error and "need a vision model" in text_of(dynamic)
    anyio.run(scenario)


def test_run_task_reports_progress_and_its_record_and_teach_mode_waits_for_the_person(tmp_path):
    asked: list[str] = []

    async def scenario() -> None:
        async with mcp_session(["--device", "sim", "--allow", "微信"], tmp_path, allow_all, asked) as client:
            progress: list[tuple[float, float | None, str | None]] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append((done, total, message))

            result = await client.call_tool("run_task", {"task": "给李四发微信消息说周末好"},
                                            progress_callback=on_progress)
            text = text_of(result)
            assert not result.is_error, text
            assert text.startswith("SUCCESS: 给李四发微信消息说周末好")
            record = Path(text.rsplit("record: ", 1)[1].strip())
            assert record.is_file() and record.parent.parent == tmp_path / "runs"
            assert progress[0][0] == 0 and "plan" in (progress[0][2] or "")
            assert [p[0] for p in progress[1:]] == list(range(1, len(progress)))
            assert '"周末好"' in text_of(await call(client, "screenshot"))

            asked.clear()
            taught = await call(client, "teach_step", text="点左上角的返回", target="desc:返回")
            assert not taught.is_error and "pressed next" in text_of(taught)
            assert image_of(taught).size == (324, 720)          # the default size: this session asked for none
            assert "点左上角的返回" in asked[0] and "desc:返回 found via tree" in asked[0]
            picture = Path(asked[0].split("Annotated screenshot: ")[1].splitlines()[0])
            assert Image.open(picture).size == (324, 720)
            batch = await ok(client, "teach_batch", steps=[{"text": "点返回", "target": "desc:返回"},
                                                           {"text": "再点一次返回"}])
            assert len(asked) == 3 and "Step 1/2: 点返回" in asked[1] and "Step 2/2: 再点一次返回" in asked[2]
            assert batch.count("done") == 2
    anyio.run(scenario)


# ---------------------------------------------------------------- on a phone this test can see into


@asynccontextmanager
async def outside_phone(tmp: Path, answer: Answer | None = None, asked: list[str] | None = None,
                        allow: str | None = None, **scenario: Any) -> AsyncIterator[tuple[Client, Any]]:
    server = serve(uiautomator_delay_ms=0, **scenario)
    try:
        args = ["--device", server.serial, "--adb-port", str(server.port), *(["--allow", allow] if allow else [])]
        async with mcp_session(args, tmp, answer, asked) as client:
            yield client, server.phone
    finally:
        server.close()


async def tap_icon_by_coordinates(client: Client, phone: Any) -> None:
    """screenshot at max_side 640, tap the 微信 icon's centre in image pixels: the phone gets its pixels."""
    listing = text_of(await call(client, "screenshot", max_side=640))
    line = next(ln for ln in listing.splitlines() if '[Button] "微信"' in ln)
    x, y, w, h = (int(v) for v in line.split("(")[1].split(")")[0].replace("x", " ").replace(",", " ").split())
    icon = phone.find(desc="微信")              # the phone's own widget: where the icon really is
    assert icon is not None
    x1, y1, x2, y2 = icon.bounds
    report = await ok(client, "tap", x=x + w / 2, y=y + h / 2)
    tx, ty = (int(v) for v in next(c for c in reversed(phone.commands) if c.startswith("input tap")).split()[-2:])
    scale = phone.size[0] / 288
    assert x1 <= tx < x2 and y1 <= ty < y2
    assert abs(tx - (x1 + x2) / 2) <= scale and abs(ty - (y1 + y2) / 2) <= scale   # the centre, to a pixel
    assert f"device ({tx},{ty})" in report
    assert phone.snapshot()["foreground"]["package"] == "com.tencent.mm"


@pytest.mark.parametrize("resolution", ["720x1600", "1440x3200"])
def test_a_tap_in_screenshot_coordinates_lands_on_the_right_device_pixels(tmp_path, resolution):
    async def scenario() -> None:
        async with outside_phone(tmp_path, allow="微信", resolution=resolution) as (client, phone):
            await tap_icon_by_coordinates(client, phone)
    anyio.run(scenario)


def test_at_1080_taps_land_the_gate_refuses_text_arrives_verbatim_and_a_dropped_phone_errs(tmp_path):
    answers = [True, True, False, True]   # allow Settings, then WeChat; refuse the sensitive tap; then allow it

    def person(message: str) -> dict[str, Any] | None:
        return {"allow": True} if answers.pop(0) else None

    async def scenario() -> None:
        async with outside_phone(tmp_path, person, resolution="1080x2400") as (client, phone):
            await ok(client, "request_access", apps=["com.android.settings"])
            taps = len([c for c in phone.commands if c.startswith("input tap")])
            refused = await call(client, "tap", target_ref="desc:微信")     # its icon would open WeChat
            assert refused.is_error and "would open com.tencent.mm" in text_of(refused)
            phone.launch("com.tencent.mm")                                   # the person opened it
            refused = await call(client, "tap", target_ref="desc:搜索")
            assert refused.is_error
            assert "com.tencent.mm is in front and is not in this session's allowed apps" in text_of(refused)
            assert len([c for c in phone.commands if c.startswith("input tap")]) == taps
            phone.home()

            await ok(client, "request_access", apps=["微信"])
            await tap_icon_by_coordinates(client, phone)
            await ok(client, "tap", target_ref="desc:搜索")
            await ok(client, "type", text="张三")
            await ok(client, "tap", target_ref="text:张三")
            typed = '你好😀 "; reboot; echo " $(id) `ls` \\n'
            await ok(client, "type", text=typed, target_ref="editable:", submit=False)
            assert phone.snapshot()["focused_text"] == typed
            await ok(client, "tap", target_ref="text:发送")
            assert phone.snapshot()["chats"]["张三"] == [typed]
            assert phone.reboots == 0 and phone.snapshot()["ime"] != "com.android.adbkeyboard/.AdbIME"

            with phone.lock:                                        # an ad with a 红包 over the chat list
                while phone.screen != "main":
                    phone.back()
                phone.ad_pending = True
                phone.changed()
            declined = await call(client, "tap", target_ref="text:新人专享红包 最高88元")
            assert declined.is_error and "did not allow this sensitive action (红包" in text_of(declined)
            assert "sensitive (红包): confirmed by the person" in \
                await ok(client, "tap", target_ref="text:新人专享红包 最高88元")

            phone.gone = True                                       # the cable is pulled
            dropped = await call(client, "tap", target_ref="desc:搜索")
            assert dropped.is_error and "the phone is not reachable" in text_of(dropped)
            assert "hint:" in text_of(dropped)
    anyio.run(scenario)

