"""`remote studio` (docs/studio.md): its JSON API over real HTTP against the simulated phone, then the page in a
real browser (Debian's chromium, headless, driven by Playwright's Python package).

One simulated phone and one studio server (uvicorn on a free loopback port) for the whole file; each test
starts from the app it needs (the app force-stopped, then launched through the API). What is judged is the
phone's state (the simulated phone's snapshot) and what the API says.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib import error, request

import pytest
import uvicorn
from PIL import Image

from remote import cli
from remote.commands._modules import registry as module_registry
from remote.core.device.adb_controller import ADBController
from remote.errors import ConfigError
from remote.mcp.access import AccessGate
from remote.mcp.gated import GatedDevice
from remote.runner import Limits
from remote.sim import serve
from remote.studio.acting import Acts, ActSettings
from remote.studio.app import Studio, build_app
from remote.studio.guard import check_token
from remote.studio.runs import RunView
from remote.studio.screens import LivePhone, StillScreen

CHROMIUM = "/usr/bin/chromium"
TEST_MODULE = """name: studiotest
display_name: 工作室测试
keywords: []
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Answer:
    def __init__(self, status_code: int, headers: Any, content: bytes) -> None:
        self.status_code, self.headers, self.content = status_code, headers, content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class Http:
    """A plain HTTP client of the studio (the standard library's: what any script has)."""

    def __init__(self, base: str) -> None:
        self.base = base

    def send(self, method: str, path: str, content: bytes | None = None, headers: dict[str, str] | None = None,
             json_body: Any = None) -> Answer:
        head = dict(headers or {})
        if json_body is not None:
            content = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
            head.setdefault("Content-Type", "application/json")
        req = request.Request(self.base + path, data=content, headers=head, method=method)
        try:
            with request.urlopen(req, timeout=60) as answer:
                return Answer(answer.status, answer.headers, answer.read())
        except error.HTTPError as exc:
            return Answer(exc.code, exc.headers, exc.read())

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.send("GET", path, headers=headers)

    def post(self, path: str, json: Any = None, content: bytes | None = None,
             headers: dict[str, str] | None = None) -> Answer:
        return self.send("POST", path, content=content, headers=headers, json_body=json)


class Rig:
    """The simulated phone, the studio on it, and an HTTP client of the studio."""

    def __init__(self, server: Any, studio: Studio, base: str, modules: Path, runs: Path) -> None:
        self.server, self.studio, self.base, self.modules, self.runs = server, studio, base, modules, runs
        self.http = Http(base)

    @property
    def phone(self) -> Any:
        return self.server.phone

    def post(self, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        answer = self.http.post(path, json=body)
        assert answer.status_code == status, answer.text
        data: dict[str, Any] = answer.json()
        return data

    def start_app(self, package: str) -> None:
        """The app from its first screen: force-stopped, then launched through the studio."""
        self.phone.force_stop(package)
        out = self.post("/api/act", {"step": {"action": "launch_app", "params": {"package": package}}})
        assert out["status"] == "success", out

    def element(self, text: str) -> dict[str, Any]:
        found = [e for e in self.http.get("/api/elements").json()["elements"] if e["text"] == text]
        assert found, f"no element reads {text!r}"
        return found[-1]

    def inspect(self, text: str) -> dict[str, Any]:
        box = self.element(text)["box"]
        return self.post("/api/inspect", {"x": (box[0] + box[2]) // 2, "y": (box[1] + box[3]) // 2})


@contextlib.contextmanager
def served(app: Any) -> Iterator[str]:
    """``app`` on a free loopback port, in a thread, for the length of the block."""
    port = _free_port()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not web.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert web.started, "the studio did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        web.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    root = tmp_path_factory.mktemp("studio")
    modules, runs, work = root / "modules", root / "runs", root / "work"
    (modules / "studiotest").mkdir(parents=True)
    (modules / "studiotest" / "config.yaml").write_text(TEST_MODULE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as env, serve({"uiautomator_delay_ms": 0}) as server:
        env.setenv("REMOTE_MODULES", str(modules))
        # the suite's tree mode for the whole module (its tests' own setting comes after this fixture is made): a
        # run the studio starts reads trees as its own controller does (a dump there would stop that one's server)
        env.setenv("REMOTE_TREE", os.environ.get("REMOTE_SUITE_TREE", "dump"))
        adb = ADBController(server.serial, port=server.port, state_dir=str(root / "ime")).connect()
        registry = module_registry()
        source = LivePhone(adb)
        acts = Acts(source, registry, ActSettings(limits=Limits(max_seconds=60), runs_dir=runs, work_dir=work,
                                                  device_state=server.phone.snapshot))
        studio = Studio(source, registry, registry.get("wechat"), acts, reload=module_registry)
        try:
            with served(build_app(studio)) as base:
                yield Rig(server, studio, base, modules, runs)
        finally:
            adb.close()


# ---------------------------------------------------------------------- inspect
def test_a_point_on_the_chat_list_is_named_text_zhangsan_first_unique_by_the_tree(rig: Rig) -> None:
    rig.start_app("com.tencent.mm")
    out = rig.inspect("张三")
    best = out["candidates"][0]
    assert (best["target_ref"], best["tier"], best["unique"]) == ("text:张三", "tree", True)
    assert out["best"] == "text:张三"
    x, y = out["point"]
    assert best["box"][0] <= x < best["box"][2] and best["box"][1] <= y < best["box"][3]   # the row at the point
    assert best["tap"] == [(best["box"][0] + best["box"][2]) // 2, (best["box"][1] + best["box"][3]) // 2]
    assert [c["target_ref"] for c in out["candidates"]][:2] == ["text:张三", "role:TextView:张三"]


def test_a_look_alike_is_refused_with_both_places(rig: Rig) -> None:
    rig.start_app("com.tencent.mm")
    tab = rig.element("微信")["box"]                          # the last 微信 on the screen: the tab bar's
    out = rig.inspect("微信")
    refused = next(c for c in out["candidates"] if c["target_ref"] == "text:微信")
    assert not refused["unique"] and len(refused["places"]) == 2 and "look alike" in refused["why"]
    tops = sorted(p[1] for p in refused["places"])
    assert tops[0] < 300 and tops[1] >= tab[1] - 200         # the title bar's 微信 and the tab's
    # the page is offered what does find the tab alone: a crop cut on the spot, found by the template tier
    assert out["candidates"][0]["unique"] and out["candidates"][0]["kind"] == "crop"
    assert out["best"] == out["candidates"][0]["target_ref"]
    assert rig.http.get(out["candidates"][0]["image"]).headers["content-type"] == "image/png"
    # an icon drawn on every row of Settings: its crop is refused, every place it matches listed
    rig.start_app("com.android.settings")
    icons = [e["box"] for e in rig.http.get("/api/elements").json()["elements"] if e["id"].endswith("id/icon")]
    out = rig.post("/api/inspect", {"x": (icons[0][0] + icons[0][2]) // 2, "y": (icons[0][1] + icons[0][3]) // 2})
    crop = next(c for c in out["candidates"] if c["kind"] == "crop")
    assert not crop["unique"] and crop["tier"] == "template" and "look alike" in crop["why"]
    assert sorted(map(tuple, crop["places"])) == sorted(map(tuple, icons))   # each row's icon, the one clicked too
    assert out["best"] == "text:网络和互联网"                                 # what names the row alone


# ---------------------------------------------------------------------- act
def test_act_taps_through_the_runner_and_the_screen_changes(rig: Rig) -> None:
    rig.start_app("com.tencent.mm")
    before = rig.http.get("/api/screen").content
    out = rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:张三"}})
    assert out["status"] == "success" and out["steps"][0]["tier"] == "tree"
    assert rig.phone.snapshot()["foreground"]["screen"] == "chat:张三"
    assert rig.http.get("/api/screen").content != before
    assert (Path(out["record"]) / "run.json").is_file()          # a run record, as `remote run` writes


def test_the_panel_turns_the_phone_with_the_two_rotation_settings_and_refuses_anything_else(rig: Rig) -> None:
    rig.start_app("com.android.settings")
    try:
        out = rig.post("/api/phone", {"rotate": "left"})
        assert out["rotation"] == 1 and rig.phone.hw.rotation == 1                    # the phone turned
        assert rig.phone.commands[-2:] == ["settings put system accelerometer_rotation 0",
                                           "settings put system user_rotation 1"]
        assert Image.open(io.BytesIO(rig.http.get("/api/screen").content)).size == (2400, 1080)
        assert rig.http.get("/api/elements").json()["size"] == [2400, 1080]
        assert rig.post("/api/phone", {"rotate": "left"})["rotation"] == 2            # the next quarter turn
        assert rig.post("/api/phone", {"rotate": "right"})["rotation"] == 1
        sent = len(rig.phone.commands)
        for body in ({"rotate": "settings put system user_rotation 2"}, {"rotate": 2}, {"rotate": "up"}):
            assert "rotate is one of left, right, portrait" in rig.post("/api/phone", body, 400)["error"]
        assert len(rig.phone.commands) == sent and rig.phone.hw.rotation == 1        # nothing reached the phone
    finally:
        assert rig.post("/api/phone", {"rotate": "portrait"})["rotation"] == 0
    assert rig.phone.hw.rotation == 0 and rig.http.get("/api/elements").json()["size"] == [1080, 2400]


def test_bad_requests_get_clear_json_errors(rig: Rig) -> None:
    assert "step 1: unknown action 'clik'" in rig.post("/api/act", {"step": {"action": "clik"}}, 400)["error"]
    assert "not JSON" in rig.http.post("/api/inspect", content=b"{", headers={"Content-Type": "application/json"}
                                       ).json()["error"]
    assert rig.http.post("/api/inspect", content=b"x" * 300_000,
                         headers={"Content-Type": "application/json"}).status_code == 413
    assert rig.post("/api/inspect", {"x": 99999, "y": 1}, 400)["hint"] == "x and y are device pixels"
    # a sensitive step is not done without a yes on the terminal: this studio has none, and a page's "confirm" is
    # not a person's yes (any script of the page's origin could send it)
    commands = len(rig.phone.snapshot()["commands"])
    asked = rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:删除聊天记录"}, "confirm": True}, 409)
    assert asked["needs_confirmation"] and asked["error"].startswith("sensitive: step 1")
    assert len(rig.phone.snapshot()["commands"]) == commands                 # nothing was sent to the phone
    # a page elsewhere that rebinds its name to 127.0.0.1 is refused
    assert rig.http.get("/api/info", headers={"Host": "evil.example:80"}).status_code == 421
    assert rig.http.post("/api/inspect", json={"x": 1, "y": 1},
                         headers={"Origin": "http://evil.example"}).status_code == 403


# ---------------------------------------------------------------------- build, save, run
@pytest.mark.slow
def test_a_three_step_template_built_through_the_api_is_saved_and_runs_with_no_model(rig: Rig) -> None:
    rig.phone.force_stop("com.android.settings")
    rig.post("/api/template", {"module": "studiotest"})
    rig.post("/api/act", {"step": {"action": "launch_app", "params": {"package": "com.android.settings"}}})
    state = rig.post("/api/template/steps", {"kind": "launch", "run": True})
    # the launch goes back to Settings' home page (the settings module's home_ref), as shipped templates do
    assert state["task"]["steps"][:2] == [{"action": "launch_app", "params": {"package": "com.android.settings"}},
                                          {"action": "back_to_home", "target_ref": ["text:搜索设置", "text:搜索设置项"]}]
    assert state["result"]["status"] == "success" and "home page" in state["notes"][0]
    for label in ("网络和互联网", "WLAN"):
        best = rig.inspect(label)["best"]
        assert best == f"text:{label}"
        state = rig.post("/api/template/steps", {"kind": "tap", "target_ref": best, "run": True})
        assert state["result"]["status"] == "success", state["result"]
    rig.post("/api/template/steps", {"kind": "wait", "target_ref": rig.inspect("WLAN")["best"]})
    state = rig.post("/api/template/steps", {"kind": "check", "target_ref": rig.inspect("网络和互联网")["best"]})
    # with issue 28's step kinds "wait until this shows" is a wait_until step (before them, the verify_ref of the
    # step before); "check this is visible" is always the task's success_check: what makes a run SUCCESS
    assert len(state["task"]["steps"]) == (5 if state["flow_kinds"] else 4) and "text:WLAN" in state["yaml"]
    assert state["task"]["success_check"] == {"target": "text:网络和互联网"}
    assert state["problems"] == [] and state["ok"], state["problems"]
    wlan = rig.phone.snapshot()["settings"]["wlan"]
    saved = rig.post("/api/save", {"module": "studiotest", "name": "flip_wlan", "patterns": ["翻转一下网络页的无线开关"]})
    tasks = rig.modules / "studiotest" / "tasks.yaml"
    assert saved["saved"] == str(tasks) and "name: flip_wlan" in tasks.read_text(encoding="utf-8")
    assert cli.main(["modules", "check"]) == 0
    rig.phone.force_stop("com.android.settings")
    code = cli.main(["run", "翻转一下网络页的无线开关", "--device", rig.server.serial, "--adb-port", str(rig.server.port),
                     "--runs-dir", str(rig.runs / "saved"), "--json"])
    assert code == 0
    assert rig.phone.snapshot()["settings"]["wlan"] is (not wlan)    # the phone's switch flipped again
    record = json.loads(next((rig.runs / "saved").glob("*/run.json")).read_text(encoding="utf-8"))
    assert record["final_check"]["passed"] is True, record["final_check"]
    if state["flow_kinds"]:   # the studio's wait ran as a step of its own, and held
        assert {s["step"]["action"]: s["status"] for s in record["steps"]}["wait_until"] == "success"


def test_a_draft_is_checked_with_the_messages_of_modules_check(rig: Rig) -> None:
    rig.post("/api/template", {"module": "wechat", "name": "draft_check", "patterns": ["试试{who}"]})
    state = rig.post("/api/template/steps", {"step": {"action": "tap", "target_ref": "no_such_image"}})
    text = "\n".join(state["problems"])
    assert "tasks.yaml (studio draft):" in text and "reference 'no_such_image' has no image" in text
    assert "slot {who} is declared but never used" in text and not state["ok"]
    assert rig.post("/api/template/steps", {"step": {"action": "tap", "wait_afer": 3}}, 400)["error"]


# ---------------------------------------------------------------------- record
def test_record_mode_turns_each_action_into_a_step_that_ran_on_the_phone(rig: Rig) -> None:
    rig.start_app("com.tencent.mm")
    rig.post("/api/template", {"module": "wechat", "new": True})
    started = rig.post("/api/record/start", {})
    # started inside WeChat: the launch that gets here is recorded first (back to its home, where a replay starts)
    assert [s.get("action") for s in started["template"]["task"]["steps"]] == ["launch_app", "back_to_home"]
    box = rig.element("李四")["box"]
    out = rig.post("/api/record", {"action": "tap", "x": box[0] + 40, "y": box[1] + 10})
    # named as the learning compiler names what a run touched: the forms that find it alone, best first
    assert out["recorded"] and out["step"] == {"action": "tap", "target_ref": ["text:李四", "role:TextView:李四"]}
    assert rig.phone.snapshot()["foreground"]["screen"] == "chat:李四"
    field = next(e for e in rig.http.get("/api/elements").json()["elements"] if e["editable"])["box"]
    out = rig.post("/api/record", {"action": "type", "text": "周末见", "slot": "message", "x": field[0] + 20,
                                   "y": field[1] + 20})
    assert out["recorded"] and out["step"] == {"action": "input_text", "params": {"text": "{message}"},
                                               "target_ref": "editable:"}      # the chat's only text field
    assert rig.phone.snapshot()["focused_text"] == "周末见"                  # typed with the example value
    send = rig.element("发送")["box"]
    out = rig.post("/api/record", {"action": "tap", "x": (send[0] + send[2]) // 2, "y": (send[1] + send[3]) // 2})
    assert out["recorded"] and rig.phone.snapshot()["chats"]["李四"] == ["周末见"]
    stop = rig.post("/api/record/stop", {})
    assert stop["steps"] == 5 and stop["proposed_check"]["app"] == "com.tencent.mm"
    assert any(c["kind"] == "app" and c["chosen"] for c in stop["choices"])
    state = rig.post("/api/template", {"name": "weekend", "sentence": "跟李四说周末见",
                                       "success_check": {"text": "{message}"}})
    assert state["task"]["patterns"] == ["跟李四说{message}"] and state["ok"], state["problems"]
    rig.post("/api/record/start", {})
    short = rig.post("/api/record", {"action": "swipe", "x": 500, "y": 900, "x2": 505, "y2": 902}, 400)
    assert short["error"] == "that swipe is a tap: move further"
    assert len(rig.post("/api/record/stop", {})["template"]["task"]["steps"]) == 5     # nothing added


# ---------------------------------------------------------------------- a run record
def test_a_run_record_opens_step_by_step_and_a_step_is_decided_again_as_replay_does(rig: Rig) -> None:
    rig.start_app("com.tencent.mm")
    record = rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:王五"}})["record"]
    rig.studio.run = RunView(Path(record), rig.studio.registry)
    try:
        summary = rig.http.get("/api/run").json()
        step = summary["steps"][0]
        assert (step["action"], step["target_ref"], step["status"], step["tier"]) == ("tap", "text:王五", "success", "tree")
        assert rig.http.get("/api/run/steps/1/before.png").headers["content-type"] == "image/png"
        decisions = rig.post("/api/run/steps/1/redecide", {})["decisions"]
        assert decisions and decisions[0]["kind"] == "locate" and not decisions[0]["changed"]
        assert rig.http.get("/api/run/steps/9/before.png").status_code == 400
        # a recorded screen inspects like the live one
        out = rig.post("/api/inspect", {"x": 540, "y": step["box"][1] + 30, "step": 1})
        assert out["best"] == "text:王五"
    finally:
        rig.studio.run = None


# ---------------------------------------------------------------------- a screenshot file
def test_a_screenshot_file_with_its_dump_inspects_like_the_phone_and_acts_on_nothing(rig: Rig) -> None:
    rig.start_app("com.tencent.mm")
    live = rig.studio.source.screen(fresh=True)
    still = StillScreen(live.pil.copy(), live.xml)
    acts = Acts(still, rig.studio.registry, ActSettings(runs_dir=None, work_dir=rig.runs / "still"))
    with served(build_app(Studio(still, rig.studio.registry, rig.studio.registry.get("wechat"), acts,
                                 mode="file"))) as base:
        http = Http(base)
        assert http.get("/api/info").json()["mode"] == "file"
        box = next(e for e in http.get("/api/elements").json()["elements"] if e["text"] == "王五")["box"]
        out = http.post("/api/inspect", json={"x": box[0] + 5, "y": box[1] + 5}).json()
        assert out["best"] == "text:王五" and out["candidates"][0]["tier"] == "tree"
        refused = http.post("/api/act", json={"step": {"action": "tap", "target_ref": "text:王五"}})
        assert refused.status_code == 409 and "no phone" in refused.json()["error"]
    assert rig.phone.snapshot()["foreground"]["screen"] == "chats"


# ---------------------------------------------------------------------- beyond loopback
def test_beyond_loopback_a_token_is_needed_and_only_allowed_apps_are_acted_in(rig: Rig) -> None:
    with pytest.raises(ConfigError, match="needs a token"):
        check_token("0.0.0.0", None)
    with pytest.raises(ConfigError, match="at least 16"):
        check_token("192.168.1.5", "short")
    check_token("127.0.0.2", None)
    token = "t" * 24
    source = LivePhone(rig.studio.source.adb, GatedDevice(rig.studio.source.adb, AccessGate(["com.android.settings"])))
    acts = Acts(source, rig.studio.registry, ActSettings(runs_dir=None, work_dir=rig.runs / "gated"))
    studio = Studio(source, rig.studio.registry, rig.studio.registry.get("wechat"), acts)
    with served(build_app(studio, host="0.0.0.0", token=token)) as base:   # as if served on every address
        http = Http(base)
        assert http.get("/api/info").status_code == 401
        assert http.get("/api/info", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        first = http.get(f"/?token={token}")
        cookie = first.headers["set-cookie"].split(";")[0]
        assert first.status_code == 200 and "HttpOnly" in first.headers["set-cookie"]
        assert http.get("/api/info", headers={"Cookie": cookie}).status_code == 200
        rig.start_app("com.tencent.mm")
        out = http.post("/api/act", json={"step": {"action": "tap", "target_ref": "text:张三"}},
                        headers={"Cookie": cookie}).json()
        assert out["status"] == "failed" and "not in this session's allowed apps" in out["steps"][0]["error"]
        assert rig.phone.snapshot()["foreground"]["screen"] == "chats"       # nothing was tapped


def test_a_step_that_finds_its_screen_already_there_says_so_not_no_visible_change(rig: Rig) -> None:
    rig.start_app("com.android.settings")
    rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:显示"}})       # Settings left on 显示
    rig.post("/api/template", {"module": "studiotest", "new": True, "success_check": {"target": "text:深色主题"}})
    rig.post("/api/template/steps", {"step": {"action": "tap", "target_ref": "text:显示"}})   # the page's title now
    out = rig.post("/api/template/run", {"from": 1})
    assert out["status"] == "failed" and out["steps"][0]["failure"] == "no_change"
    assert "already in the state step 1 leads to: it shows text:深色主题, which the final check looks for" \
        in out["error"], out["error"]
