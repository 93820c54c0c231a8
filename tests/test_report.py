"""report.html as a reader meets it: self-contained (its own CJK font, no URL it could load), the outcome and
the final check first, verdicts in words, every plan and replan, model calls per purpose, popups as pictures,
raw JSON folded last; hostile text stays text; older and damaged records still render.

Whole runs go through the real runner on the simulated phone (and the loopback model server); the page is
read back with the standard library's HTML parser and the embedded font with fontTools.
"""

from __future__ import annotations

import base64
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from fontTools.ttLib import TTFont
from PIL import Image

from remote.cli import main
from remote.core.record.report import render_report, write_report
from remote.core.record.report_font import FONT_FILE, font_face, subset_woff
from remote.core.records import TaskStatus

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "div", "span", "b", "p", "table",
                "tr", "th", "td", "a", "details", "summary", "figure", "figcaption", "img", "pre", "ol", "li"}


class Page(HTMLParser):
    """Every tag and attribute of a page, its visible text, and its CSS."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.css: list[str] = []
        self._in_style = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.css if self._in_style else self.text).append(data)

    @property
    def visible(self) -> str:
        return "".join(self.text)


def loads_nothing(html: str) -> Page:
    """Assert the page can fetch nothing: only data: images and fonts, links within the page, a CSP."""
    page = Page(html)
    assert {t for t, _ in page.tags} <= ALLOWED_TAGS
    for tag, attrs in page.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        if "src" in attrs:
            assert tag == "img" and (attrs["src"] or "").startswith("data:image/jpeg;base64,")
        if "href" in attrs:
            assert (attrs["href"] or "").startswith("#"), attrs
    assert all(u.startswith("data:") for u in re.findall(r"url\(\s*['\"]?([^'\")]*)", "".join(page.css)))
    assert "@import" not in "".join(page.css)
    csp = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]
    return page


def embedded_font(html: str) -> TTFont:
    found = re.search(r"@font-face\{font-family:remote-cjk;src:url\(data:font/woff;base64,([A-Za-z0-9+/=]+)\)", html)
    assert found, "no embedded font"
    return TTFont(io.BytesIO(base64.b64decode(found.group(1))))


def report_of(result) -> str:
    return (Path(result.record_dir) / "report.html").read_text(encoding="utf-8")


def test_the_headline_report_embeds_its_font_loads_nothing_and_reads_in_words(make_runner):
    result = make_runner().run("给张三发微信消息说你好")
    html = report_of(result)
    page = loads_nothing(html)
    assert not re.search(r"https?://", html)
    # the font: a subset holding every character the page shows, and not the 7,000 the shipped file has
    font, shipped = embedded_font(html), TTFont(FONT_FILE)
    cmap, full = set(font.getBestCmap()), set(shipped.getBestCmap())
    chars = {ord(c) for c in page.visible if ord(c) > 0x7F} & full
    assert chars and chars <= cmap and {ord(c) for c in "张三你好发送"} <= cmap
    assert len(cmap) < len(full) / 10
    text = page.visible
    # the outcome and the final check come first, raw JSON last and folded
    assert text.index("Succeeded") < text.index("Final check: passed") < text.index("Steps") < text.index("run.json")
    assert "'你好' on the screen" in text
    assert "found 发送 in the UI tree and tapped it; the screen changed: 你好" in text
    assert "found the text field in the UI tree and typed '你好' into it; the field shows '你好'" in text
    assert "unknown (pixel)" not in html and "% of pixels changed" not in text.split("Step details")[0]
    assert " {}" not in text.split("Raw record")[0]
    screens = list(Path(result.record_dir).glob("s*.png"))
    # step 3 (tap 搜索) is checked by the keyboard coming up, which costs no frame and no dump: 8 screens, not 9
    assert "found 搜索 in the UI tree and tapped it; the soft keyboard came up" in text
    assert html.count("<details id='step-") == 7 and html.count("<img ") == len(screens) == 8
    assert html.count("<figcaption>before: located box (green), tap point (red)") == 4    # every located step, x=0 boxes too
    raw = html[html.index("<h2>Raw record</h2>"):]
    assert raw.count("<details>") == 2 and "&quot;chats&quot;" in raw and "input tap" in raw
    assert "time per phase" in text and "capture" in text and "Model calls" in text and "None: every step" in text


def test_a_failed_model_run_shows_every_plan_its_reasons_and_calls_per_purpose(make_runner, model_server,
                                                                                llm_config):
    model_server.script("plan",
                        {"analysis": {"current_screen": "桌面", "plan": "先进设置"}, "steps": [
                            {"step": 1, "action": "launch_app", "params": {"package": "com.android.settings"}},
                            {"step": 2, "action": "tap", "target_ref": "text:蓝牙和设备"}],
                         "success_check": {"text": "深色模式已开启"}},
                        {"analysis": {"reason": "没有蓝牙和设备，改点显示"},
                         "steps": [{"step": 1, "action": "tap", "target_ref": "text:显示"}],
                         "success_check": {"text": "深色模式已开启"}})
    model_server.script("locate", {"found": False, "reason": "屏幕上没有这一项"})
    result = make_runner(llm_config).run("把手机调成深色模式")
    assert result.status is TaskStatus.FAILED
    page = loads_nothing(report_of(result))
    text = page.visible
    assert text.index("Failed") < text.index("Final check: failed") < text.index("Steps")
    assert "every step ran, but the final screen is not what the plan promised" in text
    assert "'深色模式已开启' on the screen" in text and "NO" in text
    assert "Plan 1, from the model" in text and "先进设置" in text
    assert "Plan 2, replanned by the model after step 2 failed" in text and "没有蓝牙和设备，改点显示" in text
    assert "looked for 蓝牙和设备 in the UI tree, by reading the screenshot (OCR) and with the vision model" in text
    # model calls: 2 plan calls outside any step, 1 locate call in step 2
    rows = re.findall(r"<tr><td>(plan|locate)</td><td class=num>(\d+)</td><td class=num>(\d+)</td>"
                      r"<td class=num>(\d+)</td>", report_of(result))
    assert rows == [("plan", "2", "0", "2"), ("locate", "1", "1", "0")]
    assert {ord(c) for c in "深色模式蓝牙设备"} <= set(embedded_font(report_of(result)).getBestCmap())


@pytest.mark.sim(ad_popup=True)
def test_a_closed_popup_is_shown_as_a_picture(make_runner, model_server, llm_config):
    model_server.script("plan", {"steps": [
        {"step": 1, "action": "launch_app", "params": {"package": "com.tencent.mm"}},
        {"step": 2, "action": "tap", "target_ref": "desc:搜索"}], "success_check": {"app": "com.tencent.mm"}})
    result = make_runner(llm_config).run("打开微信的搜索")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    html = report_of(result)
    popups = html[html.index("<h2>Popups closed</h2>"):html.index("<h2>Plans</h2>")]
    assert popups.count("<img ") == 1 and "ad — " in popups
    image = json.loads((Path(result.record_dir) / "run.json").read_text(encoding="utf-8"))["steps"]
    assert any(p.get("image") for s in image for p in s["popups"])


HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'</pre></details><a href="https://evil">x</a>'


def hostile_record(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    Image.new("RGB", (100, 200), "white").save(run / "s01-before.png")
    Image.new("RGB", (50, 50), "red").save(tmp_path / "outside.png")
    step = {"step": {"step": 1, "action": "tap", "target_ref": f"text:{HOSTILE}", "description": HOSTILE,
                     "params": {"text": HOSTILE}},
            "status": "failed", "error_message": HOSTILE, "notes": [HOSTILE], "timings": {HOSTILE: 5},
            "locate_result": {"success": False, "tiers_tried": [HOSTILE], "error": HOSTILE},
            "verify_result": {"method": HOSTILE, "outcome": HOSTILE, "change_description": HOSTILE},
            "popups": [{"type": HOSTILE, "description": HOSTILE, "image": "../outside.png"}],
            "artifacts": {"before": "s01-before.png", "after": str(tmp_path / "outside.png")},
            "bbox": [HOSTILE], "tap_point": [1, 2], "elapsed": 0.1}
    data = {"task": HOSTILE, "status": HOSTILE, "failure": HOSTILE, "error": HOSTILE, "module": HOSTILE,
            "final_check": {"passed": HOSTILE, "summary": HOSTILE, "items": [{"what": HOSTILE, "evidence": HOSTILE}]},
            "plan": {"source": HOSTILE, "analysis": {HOSTILE: HOSTILE, "replans": [{"reason": HOSTILE,
                                                                                   "steps": [{"action": HOSTILE}]}]},
                     "steps": [step["step"]], "success_check": {HOSTILE: 1}},
            "model_usage": {"calls": HOSTILE, "by_purpose": {HOSTILE: {"calls": 1}}},
            "llm": {"model": HOSTILE}, "device": {"serial": HOSTILE}, "device_state": {"x": HOSTILE},
            "steps": [step]}
    (run / "run.json").write_text(json.dumps(data), encoding="utf-8")
    return run


def test_hostile_text_stays_text_and_files_outside_the_record_are_not_embedded(tmp_path):
    run = hostile_record(tmp_path)
    html = write_report(run).read_text(encoding="utf-8")
    page = loads_nothing(html)
    assert HOSTILE in page.visible                    # shown to the reader, as text
    assert "<script" not in html and "<img src=x" not in html and 'href="https://evil"' not in html
    assert html.count("<img ") == 1                   # the one screen inside the folder; not ../outside.png


OLD_RECORD = {   # what the previous version wrote: no final check, failure, popups, timings, per-step usage
    "version": 1, "task": "给张三发微信消息说你好", "module": "wechat", "status": "success", "error": "",
    "started_at": "2026-11-20T10:00:00", "total_time": 5.1,
    "plan": {"source": "template", "steps": [{"step": 1, "action": "tap", "target_ref": "text:发送", "params": {}}]},
    "steps": [{"step": {"step": 1, "action": "tap", "target_ref": "text:发送", "params": {}}, "status": "success",
               "verify_result": {"verified": True, "outcome": "unknown", "method": "pixel",
                                 "change_description": "2.4% of pixels changed"},
               "tier": "tree", "bbox": [1, 2, 3, 4], "tap_point": [2, 3], "elapsed": 0.7}],
    "model_usage": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0},
    "device_state": {"chats": {"张三": ["你好"]}},
}
DAMAGED = [
    {"task": "x", "steps": "not a list", "plan": [], "model_usage": "lots", "final_check": 3},
    {"task": None, "steps": [None, 1, "x", {"step": "y", "status": 3, "timings": {"a": "b"}, "notes": "n",
                                           "locate_result": [], "bbox": "everywhere", "popups": [1, {"image": 2}]}]},
    {"steps": [{"step": {"params": [1]}, "verify_result": {"outcome": "no_change"}, "elapsed": "long"}],
     "total_time": "soon", "device": {"size": "big"}, "plan": {"analysis": {"replans": [None, {"steps": 5}]}}},
]


@pytest.mark.parametrize("data", [OLD_RECORD, *DAMAGED])
def test_older_and_damaged_records_still_render(tmp_path, data, capsys):
    (tmp_path / "run.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert main(["report", str(tmp_path)]) == 0
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    loads_nothing(html)
    if data is OLD_RECORD:
        assert "found 发送 in the UI tree and tapped it; the screen changed" in html
        assert "No final check was made: this record has none" in html


def test_an_unusable_plan_shows_the_models_reply(make_runner, model_server, llm_config):
    model_server.script("plan", "sorry, <b>no</b> plan today", "still no plan")
    result = make_runner(llm_config).run("帮我订一张机票")
    assert result.status is TaskStatus.FAILED
    text = loads_nothing(report_of(result)).visible
    assert "a model call failed: plan:" in text and "No plan was made." in text
    assert "The model's last reply, which could not be used:" in text and "still no plan" in text
    assert "No step ran." in text and "Final check" in text.split("Steps")[0]


def test_a_folder_without_a_readable_record_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "run.json not found" in capsys.readouterr().err
    (tmp_path / "run.json").write_text("{not json", encoding="utf-8")
    assert main(["report", str(tmp_path)]) == 2
    assert "is not readable JSON" in capsys.readouterr().err
    (tmp_path / "run.json").write_text("[1, 2]", encoding="utf-8")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not a run record" in err and "Traceback" not in err


def test_the_font_subset_holds_only_what_the_page_uses(tmp_path):
    woff = subset_woff("你好，世界")
    assert woff is not None and woff[:4] == b"wOFF"
    cmap = set(TTFont(io.BytesIO(woff)).getBestCmap())
    assert {ord(c) for c in "你好，世界"} <= cmap and ord("张") not in cmap
    assert cmap - {ord(c) for c in "你好，世界"} <= set(range(0x20, 0x7F))


def test_a_cut_font_is_kept_and_read_back_not_cut_again(tmp_path, monkeypatch):
    from remote.core.record import report_font

    monkeypatch.setenv("REMOTE_CACHE_DIR", str(tmp_path / "cache"))
    report_font._cut.cache_clear()
    first = subset_woff("缓存的字")
    kept = list((tmp_path / "cache" / "fonts").glob("*.woff"))
    assert first is not None and len(kept) == 1 and kept[0].read_bytes() == first

    def no_cutting(*args):
        raise AssertionError("cut again although kept")

    monkeypatch.setattr(report_font, "_subset", no_cutting)
    assert subset_woff("缓存的字") == first                    # this process: from memory
    report_font._cut.cache_clear()
    assert subset_woff("缓存的字") == first                    # another process: from the disk
    report_font._cut.cache_clear()
    with pytest.raises(AssertionError, match="cut again"):
        subset_woff("别的字")                                   # other characters are another cut


def test_without_the_font_file_the_page_still_renders(tmp_path, caplog):
    assert font_face("你好", tmp_path / "missing.ttf") == ""
    assert "not embedded" in caplog.text
    (tmp_path / "broken.ttf").write_bytes(b"not a font")
    assert font_face("你好", tmp_path / "broken.ttf") == ""
    html = render_report(tmp_path, {"task": "你好", "status": "success"})
    assert "<h1>你好</h1>" in html


VERDICTS = [
    ({"status": "not_checked", "notes": ["not checked (needs the screen after step 2)"]},
     "not checked: not checked (needs the screen after step 2)"),
    ({"status": "failed", "step": {"action": "launch_app", "params": {"package": "com.x"}},
      "error_message": "no app x on this phone"}, "failed: no app x on this phone"),
    ({"status": "failed", "step": {"action": "tap", "target_ref": "text:好"}, "error_message": "no visible change",
      "locate_result": {"success": True, "method_used": "ocr", "matched_ref": "text:好"}},
     "found 好 by reading the screenshot (OCR) and tapped it; failed: no visible change"),
    ({"status": "success", "step": {"action": "tap", "target_ref": "desc:更多"},
      "locate_result": {"success": True, "method_used": "tree+vision"},
      "verify_result": {"outcome": "wrong_page", "method": "tree", "current_state": "in com.other"}},
     "found 更多 in the UI tree (the model chose among look-alikes) and tapped it; it led to another screen; "
     "in com.other"),
    ({"status": "success", "step": {"action": "swipe", "params": {"direction": "up"}},
      "verify_result": {"outcome": "succeeded", "method": "model", "current_state": "列表翻到了下一页"}},
     "swiped up; the model says: 列表翻到了下一页"),
    ({"status": "success", "step": {"action": "tap", "target_ref": "send_button"},
      "locate_result": {"success": False, "tiers_tried": ["template"]}, "notes": ["fallback: tap text:发送"]},
     "looked for send_button by its reference image: not found; fallback: tap text:发送"),
]


@pytest.mark.parametrize(("step", "sentence"), VERDICTS)
def test_verdicts_are_sentences(step, sentence):
    from remote.core.record.report_words import verdict

    assert verdict(step) == sentence


def test_a_steps_screens_are_written_beside_the_run_before_the_run_json_that_names_them(tmp_path, monkeypatch):
    from remote.core import safe_files
    from remote.core.locate.screen import Screen
    from remote.core.plan.actions import ActionName
    from remote.core.record import recorder as recorder_module
    from remote.core.record.recorder import RunRecorder
    from remote.core.records import StepPlan, StepResult, StepStatus, TaskResult

    order: list[str] = []
    real_write = safe_files.write_atomic

    def write(path, data, durable=True):   # the order files reach the disk; s02's PNG is refused (a full disk)
        if Path(path).name == "s02-after.png":
            raise OSError(28, "No space left on device")
        order.append(Path(path).name)
        return real_write(path, data, durable=durable)

    monkeypatch.setattr(recorder_module, "write_atomic", write)
    rec = RunRecorder(tmp_path, "两步")
    result = TaskResult(task="两步")
    shot = Screen(Image.new("RGB", (60, 120), (20, 120, 200)))
    for n in (1, 2):
        sr = StepResult(step=StepPlan(step=n, action=ActionName.GO_HOME), status=StepStatus.SUCCESS)
        rec.record_step(sr, shot, shot)
        result.step_results.append(sr)
        rec.write(result, {}, final=False)
    rec.write(result, {}, final=True)
    # every snapshot of run.json came after the screens it names; the refused one is not named at the end
    assert order.index("s01-after.png") < order.index("run.json") < order.index("s02-before.png")
    data = json.loads((rec.dir / "run.json").read_text(encoding="utf-8"))
    assert data["steps"][0]["artifacts"] == {"before": "s01-before.png", "after": "s01-after.png"}
    assert data["steps"][1]["artifacts"] == {"before": "s02-before.png"}
    assert (rec.dir / "report.html").is_file() and not (rec.dir / "s02-after.png").exists()


def test_a_screen_stored_twice_is_encoded_once_and_written_the_same(tmp_path, monkeypatch):
    """A step's screen after is the next one's before (the same Screen): both files are written, one PNG made."""
    from remote.core.locate.screen import Screen
    from remote.core.record import recorder
    from remote.core.record.recorder import RunRecorder

    encodes: list[str] = []
    real_png = recorder.png_bytes

    def png_bytes(image):
        encodes.append("PNG")
        return real_png(image)

    monkeypatch.setattr(recorder, "png_bytes", png_bytes)
    rec = RunRecorder(tmp_path, "两次")
    shared, other = Screen(Image.new("RGB", (60, 120), (20, 120, 200))), Screen(Image.new("RGB", (60, 120), (0, 0, 0)))
    rec.save_screen("s01-after", shared)
    rec.save_screen("s02-before", shared)
    rec.save_screen("s02-after", other)
    rec.flush()
    assert encodes == ["PNG", "PNG"]                       # the shared screen once, the other once
    assert (rec.dir / "s01-after.png").read_bytes() == (rec.dir / "s02-before.png").read_bytes()
    assert (rec.dir / "s01-after.png").read_bytes() != (rec.dir / "s02-after.png").read_bytes()


def test_a_screen_is_stored_as_a_lossless_png_and_its_thumbnail_is_the_files(tmp_path, monkeypatch):
    """The recorder's PNG (OpenCV's libpng for RGB, Pillow otherwise) decodes to the very pixels; a thumbnail made
    from the image just written (`shown`) is the one made from the file."""
    from remote.core.record import report_html
    from remote.core.record.recorder import png_bytes

    rng = np.random.default_rng(7)
    rgb = Image.fromarray(rng.integers(0, 256, (90, 60, 3), dtype=np.uint8), "RGB")
    for image in (rgb, rgb.convert("RGBA"), rgb.convert("L")):
        back = Image.open(io.BytesIO(png_bytes(image)))
        assert back.mode == image.mode and np.array_equal(np.asarray(back), np.asarray(image))
    path = tmp_path / "s01-before.png"
    path.write_bytes(png_bytes(rgb))
    marks = {"bbox": [5, 5, 40, 30], "point": (20, 20)}
    from_file = report_html._thumbnail(path, marks)
    report_html._THUMBS.clear()
    report_html.shown(path, rgb)

    def no_decoding(*args):
        raise AssertionError("decoded the file again")

    monkeypatch.setattr(Image, "open", no_decoding)
    assert report_html._thumbnail(path, marks) == from_file
