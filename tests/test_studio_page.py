"""The studio's page in Debian's chromium (Playwright's Python package drives it; no browser is downloaded).

docs/studio.md's worked example clicked as written, then "run all" (SUCCESS, final check passed) and `remote run`
of the saved task on a fresh simulated phone; a recording started inside Settings, saved and replayed; BACK and
HOME from the panel; a tree node outlining its box and a click on the screen selecting its node; a save into a new
module's ``tasks: []``; the phone turned from the panel, its picture still whole. The screenshots of
docs/studio.md are taken here, at 1280x800 and 1920x1080 (``STUDIO_DOC_SHOTS=docs/images`` writes them there),
each checked for nothing cut off.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from remote import cli
from remote.sim import serve
from remote.studio.runs import RunView
from tests.test_studio import CHROMIUM, Rig, rig  # noqa: F401 - the module's phone and studio

pytestmark = pytest.mark.slow
SIZES = ((1280, 800), (1920, 1080))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the dev dependency playwright is not installed")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                      args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                            "--disable-background-networking", "--disable-component-update"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, rig: Rig) -> Iterator[Any]:  # noqa: F811
    # the test's own waits are scripts the page's CSP would refuse (test_studio_safety.py keeps it on)
    tab = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]}, bypass_csp=True)
    try:
        yield tab
    finally:
        tab.close()


def open_studio(page: Any, rig: Rig) -> None:  # noqa: F811
    page.goto(rig.base + "/")
    page.wait_for_selector("#tree li")
    page.wait_for_function("document.getElementById('screen').naturalWidth > 0")


def shoot(page: Any, name: str) -> None:
    """The page at both sizes, each with the phone's picture whole and every section inside the window."""
    folder = Path(os.environ.get("STUDIO_DOC_SHOTS") or tempfile.gettempdir())
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        cut = page.evaluate("""() => {
            const out = [];
            const inside = (r) => r.left >= 0 && r.top >= 0 && r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1;
            for (const s of ['#screen', 'header', 'main > section:not([hidden])']) {
              document.querySelectorAll(s).forEach((e) => { const r = e.getBoundingClientRect();
                if (r.width && !inside(r)) out.push(s + ' ' + JSON.stringify([r.left, r.top, r.right, r.bottom])); });
            }
            const img = document.getElementById('screen');
            const ratio = img.clientWidth / img.clientHeight, phone = img.naturalWidth / img.naturalHeight;
            if (Math.abs(ratio - phone) > 0.02) out.push('aspect ' + ratio + ' vs ' + phone);
            if (document.documentElement.scrollWidth > innerWidth) out.push('page wider than the window');
            return out; }""")
        assert cut == [], (name, width, cut)
        page.screenshot(path=str(folder / f"{name}-{width}.png"))
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})


def click_element(page: Any, rig: Rig, text: str) -> None:  # noqa: F811
    """A click on the live picture where the element reading ``text`` is (the page maps it to device pixels)."""
    box = rig.element(text)["box"]
    # the picture has its size from its first frame on (each later one is decoded before it is shown)
    scale = page.wait_for_function("(() => { const img = document.getElementById('screen'); "
                                   "return img.naturalWidth > 0 && img.clientWidth / img.naturalWidth; })()").json_value()
    page.click("#screen", position={"x": (box[0] + box[2]) / 2 * scale, "y": (box[1] + box[3]) / 2 * scale})


def wait_text(page: Any, selector: str, text: str, timeout: int = 60000) -> None:
    page.wait_for_function(f"document.querySelector({selector!r}).textContent.includes({text!r})", timeout=timeout)


def test_the_worked_example_is_clicked_runs_all_successfully_and_runs_on_a_fresh_phone(page: Any, rig: Rig) -> None:  # noqa: F811
    """docs/studio.md "A worked example", click by click, with Settings left on its 显示 page (where real Settings
    resumes): "launch this app" goes back to Settings' home, so "run all" and `remote run` start from there."""
    rig.start_app("com.android.settings")
    rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:显示"}})     # left on the 显示 page
    rig.post("/api/template", {"module": "wechat", "new": True})
    open_studio(page, rig)
    assert page.is_disabled("#tap-this") and page.is_disabled("#save")            # nothing picked, nothing built
    clicks = 0
    page.select_option("#module", "studiotest")
    clicks += 1
    wait_text(page, "#export-yaml", "studiotest")
    page.click("#launch-this")
    clicks += 1
    wait_text(page, "#result", "SUCCESS")
    assert "back_to_home" in page.inner_text("#steps") or page.input_value("#steps li:nth-child(2) input")
    assert "home page" in page.inner_text("#notes")
    assert rig.phone.snapshot()["foreground"]["screen"] != "display"               # back on Settings' home
    page.wait_for_function("[...document.querySelectorAll('#tree li')].some(li => li.textContent.includes('显示'))")
    click_element(page, rig, "显示")
    clicks += 1
    page.wait_for_selector("#candidates li.unique")
    assert page.inner_text("#candidates li >> nth=0").startswith("text:显示")
    shoot(page, "studio-inspect")
    page.click("#tap-this")
    clicks += 1
    page.wait_for_function("document.querySelectorAll('#steps li').length === 3")
    wait_text(page, "#result", "SUCCESS")
    assert rig.phone.snapshot()["foreground"]["screen"] == "display"
    page.wait_for_function("[...document.querySelectorAll('#tree li')].some(li => li.textContent.includes('深色主题'))")
    click_element(page, rig, "深色主题")
    clicks += 1
    page.wait_for_selector("#candidates li.unique")
    page.click("#check-this")
    clicks += 1
    wait_text(page, "#ends", "SUCCESS when the screen shows text:深色主题")
    page.fill("#name", "display_page")
    page.fill("#sentence", "查看显示设置")
    page.click("#set-task")
    clicks += 1
    wait_text(page, "#export-yaml", "查看显示设置")
    assert page.inner_text("#problems") == ""
    shoot(page, "studio-build")
    page.click("#run-all")
    wait_text(page, "#result", "final check")
    result = page.inner_text("#result")
    assert result.startswith("SUCCESS") and "final check: passed" in result, result
    shoot(page, "studio-run-all")
    page.click("#save")
    clicks += 1
    wait_text(page, "#status", "saved into")
    assert clicks <= 8
    saved = (rig.modules / "studiotest" / "tasks.yaml").read_text(encoding="utf-8")
    assert "name: display_page" in saved and "success_check:" in saved and "back_to_home" in saved
    with serve({"uiautomator_delay_ms": 0}) as fresh:                    # a fresh simulated phone
        code = cli.main(["run", "查看显示设置", "--device", fresh.serial, "--adb-port", str(fresh.port),
                         "--runs-dir", str(rig.runs / "fresh"), "--json"])
        assert code == 0 and fresh.phone.snapshot()["foreground"] == {"package": "com.android.settings",
                                                                      "screen": "display"}


def test_a_recording_started_inside_settings_is_saved_and_replays(page: Any, rig: Rig) -> None:  # noqa: F811
    rig.start_app("com.android.settings")
    rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:显示"}})     # inside Settings, not its home
    rig.post("/api/template", {"module": "studiotest", "new": True})
    open_studio(page, rig)
    page.click("#record")
    page.wait_for_function("document.getElementById('record').textContent.includes('stop')", timeout=60000)
    steps = [page.input_value(f"#steps li:nth-child({n}) input") for n in (1, 2)]
    assert "launch_app" in steps[0] and "back_to_home" in steps[1]        # the launch that gets there, recorded
    page.wait_for_function("[...document.querySelectorAll('#tree li')].some(li => li.textContent.includes('网络和互联网'))")
    click_element(page, rig, "网络和互联网")
    page.wait_for_function("document.querySelectorAll('#steps li').length === 3", timeout=60000)
    page.click("#record")
    page.wait_for_selector("#stop-form[open]")
    assert page.locator("#choices input:checked").count() >= 1           # a proposed check, chosen
    shoot(page, "studio-record-stop")
    page.fill("#stop-sentence", "看看网络设置")
    page.fill("#stop-name", "network_page")
    page.click("#stop-use")
    wait_text(page, "#ends", "SUCCESS when")
    page.click("#save")
    wait_text(page, "#status", "saved into")
    rig.phone.force_stop("com.android.settings")
    assert cli.main(["run", "看看网络设置", "--device", rig.server.serial, "--adb-port", str(rig.server.port),
                     "--runs-dir", str(rig.runs / "recorded"), "--json"]) == 0


def test_back_and_home_from_the_panel_and_a_tree_node_outlines_its_box(page: Any, rig: Rig) -> None:  # noqa: F811
    rig.start_app("com.android.settings")
    rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:显示"}})
    open_studio(page, rig)
    page.click("#panel button[data-key=BACK]")
    wait_text(page, "#status", "pressed BACK")
    assert rig.phone.snapshot()["foreground"] == {"package": "com.android.settings", "screen": "home"} or \
        rig.phone.snapshot()["foreground"]["screen"] != "display"
    page.click("#panel button[data-key=HOME]")
    wait_text(page, "#status", "pressed HOME")
    assert rig.phone.snapshot()["foreground"]["screen"] == "launcher"
    # from here on the live picture is watched at every painted frame: it must never be without a size
    page.evaluate("window.sizeless = 0; (function watch() { if (!document.getElementById('screen').naturalWidth) "
                  "window.sizeless += 1; requestAnimationFrame(watch); })()")
    rig.start_app("com.android.settings")
    page.click("#refresh")                                                   # the phone moved without the page
    page.fill("#search", "显示")
    page.wait_for_function("[...document.querySelectorAll('#tree li')].some(li => li.textContent.includes('显示'))")
    page.click("#tree li:has-text('\"显示\"')")
    page.wait_for_selector("#overlay .box.selected")
    box = rig.element("显示")["box"]
    # the live picture's source is swapped for each new frame, to a frame already decoded: it always has its size
    # read in one evaluation: the boxes are drawn anew when the candidates come, and an element found by one call
    # of the driver can be gone (offsets all 0) by its next
    scale, drawn = page.evaluate("(() => { const img = document.getElementById('screen'); "
                                 "const d = document.querySelector('#overlay .box.selected'); "
                                 "return [img.clientWidth / img.naturalWidth, "
                                 "[d.offsetLeft, d.offsetTop, d.offsetWidth]]; })()")
    page.wait_for_timeout(1000)                                              # five more frames
    assert page.evaluate("window.sizeless") == 0
    assert abs(drawn[0] - box[0] * scale) < 2 and abs(drawn[1] - box[1] * scale) < 2
    assert abs(drawn[2] - (box[2] - box[0]) * scale) < 2
    assert "显示" in page.inner_text("#attrs") and "resource-id" in page.inner_text("#attrs")
    page.wait_for_selector("#candidates li.unique")
    shoot(page, "studio-tree")
    page.fill("#search", "")
    click_element(page, rig, "网络和互联网")                                  # and back: the screen selects the node
    wait_text(page, "#tree li.sel", "网络和互联网")
    assert page.locator("#tree li.sel").count() == 1


def test_rotate_from_the_panel_turns_the_phone_and_the_picture_still_fits(page: Any, rig: Rig) -> None:  # noqa: F811
    rig.start_app("com.android.settings")
    open_studio(page, rig)
    try:
        page.click("#panel button[data-rotate=left]")
        wait_text(page, "#status", "turned the phone to 90°")
        assert rig.phone.hw.rotation == 1
        page.wait_for_function("(() => { const i = document.getElementById('screen');"
                               " return i.naturalWidth > i.naturalHeight; })()")
        shoot(page, "studio-rotated")                     # whole, inside the window, at the turned ratio
        click_element(page, rig, "网络和互联网")           # a click on the turned picture finds its node
        page.wait_for_selector("#tree li.sel")
        wait_text(page, "#tree li.sel", "网络和互联网")
        page.click("#panel button[data-rotate=portrait]")
        wait_text(page, "#status", "turned the phone to 0°")
        page.wait_for_function("(() => { const i = document.getElementById('screen');"
                               " return i.naturalWidth < i.naturalHeight; })()")
        assert rig.phone.hw.rotation == 0
    finally:
        rig.post("/api/phone", {"rotate": "portrait"})


def test_a_new_module_from_the_page_saves_into_its_empty_tasks_list(page: Any, rig: Rig) -> None:  # noqa: F811
    rig.start_app("com.android.settings")
    open_studio(page, rig)
    page.click("#new-module")
    page.fill("#module-name", "my_settings")
    page.fill("#module-package", "com.android.settings")
    page.click("#module-create")
    wait_text(page, "#status", "created")
    tasks = rig.modules / "my_settings" / "tasks.yaml"
    assert "tasks: []" in tasks.read_text(encoding="utf-8")
    page.click("#launch-this")
    wait_text(page, "#result", "SUCCESS")
    page.click("#app-this")
    wait_text(page, "#ends", "com.android.settings in front")
    page.fill("#name", "open_my_settings")
    page.fill("#sentence", "打开我的设置")
    page.click("#set-task")
    wait_text(page, "#export-yaml", "打开我的设置")
    page.click("#export summary")
    wait_text(page, "#export-python", "build_runner")
    script = rig.modules / "open_my_settings.py"                  # the export runs the same steps from a script
    script.write_text(page.inner_text("#export-python"), encoding="utf-8")
    rig.phone.force_stop("com.android.settings")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert ran.returncode == 0 and ran.stdout.startswith("success"), ran.stdout + ran.stderr[-2000:]
    assert rig.phone.snapshot()["foreground"]["package"] == "com.android.settings"
    page.click("#save")
    wait_text(page, "#status", "saved into")
    assert "name: open_my_settings" in tasks.read_text(encoding="utf-8")
    assert cli.main(["modules", "check"]) == 0


def test_a_run_record_is_headed_as_one_with_its_screens_and_no_build_buttons(page: Any, rig: Rig) -> None:  # noqa: F811
    rig.start_app("com.tencent.mm")
    record = rig.post("/api/act", {"step": {"action": "tap", "target_ref": "text:王五"}})["record"]
    rig.studio.run = RunView(Path(record), rig.studio.registry)
    try:
        open_studio(page, rig)
        page.wait_for_selector("#run-steps li")
        title = page.text_content("#run-title") or ""
        # one act has no final check of its own: its record says so (unchecked), never SUCCESS
        assert title.startswith("Run record: ") and "王五" in title and title.endswith("UNCHECKED"), title
        assert not page.is_visible("#template") and not page.is_visible("#record") and not page.is_visible("#actions")
        page.click("#run-steps li >> nth=0")
        page.wait_for_selector("#run-shots img")
        page.click("#redecide")
        wait_text(page, "#decisions", "locate")
        shoot(page, "studio-run-record")
    finally:
        rig.studio.run = None
