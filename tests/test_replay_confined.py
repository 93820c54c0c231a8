"""`remote replay RUN_DIR` trusts nothing run.json says (issue 24, item 15).

A record made by a real run on the simulated phone is edited as an attacker (or a damaged disk) would: its
file names point outside the folder (an absolute path, ``../``, a symlink), run.json is 211 MB, or a field
has the wrong type. Replay opens only files inside the folder (an audit hook sees every open), refuses the
huge file before reading it, and names the field it cannot use.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from remote.cli import main
from remote.errors import ExitCode

SECRET = "OPENAI_API_KEY=sk-planted-0123456789abcdef"
_opened: list[str] | None = None     # while a test watches: every path Python opens


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], str | Path):
        _opened.append(os.path.realpath(args[0]))


sys.addaudithook(_audit)


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    assert main(["run", "--device", "sim", "--runs-dir", str(runs), "给张三发微信消息说你好"]) == 0
    (folder,) = [p for p in runs.iterdir() if (p / "run.json").is_file()]
    return folder


def edited(record: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    copy = tmp_path / "record"
    shutil.copytree(record, copy)
    data = json.loads((copy / "run.json").read_text(encoding="utf-8"))
    change(data)
    (copy / "run.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return copy


def located_step(data: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in data["steps"] if s.get("locate_result") and s["artifacts"].get("before_xml"))


def test_replay_opens_no_file_outside_its_record_folder(record, tmp_path, capsys, monkeypatch):
    global _opened
    outside = tmp_path / "outside.xml"
    outside.write_text(SECRET, encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET.split("=", 1)[1])

    def point_out(data: dict[str, Any]) -> None:
        steps = [s for s in data["steps"] if s["artifacts"].get("before_xml")]    # the four tap/type steps
        steps[0]["artifacts"]["before_xml"] = "/proc/self/environ"
        steps[1]["artifacts"]["before_xml"] = "../outside.xml"
        steps[2]["artifacts"].update(before_xml=str(outside), after="../../../../../../proc/self/environ")
        steps[3]["artifacts"]["before_xml"] = "linked.xml"

    copy = edited(record, tmp_path, point_out)
    (copy / "linked.xml").symlink_to(outside)
    _opened = []
    try:
        code = main(["replay", str(copy)])
        opened = _opened
    finally:
        _opened = None
    out, err = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.FAILED) and "error" not in err, err
    assert "sk-planted" not in out + err and "OPENAI_API_KEY" not in out + err
    assert "decisions" in out
    assert "'../outside.xml', which is not a file inside the record's folder: not read" in err   # said, not silent
    folder = str(copy.resolve())
    assert not [p for p in opened if p.startswith("/proc/") or p == str(outside.resolve())], opened
    assert any(p.startswith(folder) for p in opened)        # it did read the record's own files


def test_a_run_json_linked_out_of_its_folder_is_not_read(record, tmp_path, capsys):
    copy = edited(record, tmp_path, lambda data: None)
    (tmp_path / "elsewhere.json").write_text(json.dumps({"steps": [], "task": SECRET}), encoding="utf-8")
    (copy / "run.json").unlink()
    (copy / "run.json").symlink_to(tmp_path / "elsewhere.json")
    assert main(["replay", str(copy)]) == ExitCode.ENVIRONMENT
    out, err = capsys.readouterr()
    assert "links to a file outside its record folder" in err and "sk-planted" not in out + err


def test_a_211_mb_run_json_is_refused_before_it_is_read(record, tmp_path, capsys):
    copy = edited(record, tmp_path, lambda data: None)
    with open(copy / "run.json", "r+b") as f:       # sparse: 211 MB on paper, nothing on disk
        f.truncate(211_000_000)
    started = time.monotonic()
    assert main(["replay", str(copy)]) == ExitCode.ENVIRONMENT
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert "run.json is 211 MB: larger than a run record" in err and "internal error" not in err


WRONG_TYPES: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (lambda d: d.update(steps="all of them"), "steps must be a list, not str"),
    (lambda d: d.update(module=["wechat"]), "module must be text, not list"),
    (lambda d: d["steps"].__setitem__(1, "a step"), "steps[1] must be an object, not str"),
    (lambda d: d["steps"][1].update(step=5), "steps[1].step must be an object, not int"),
    (lambda d: d["steps"][1].update(artifacts=["s02-before.png"]), "steps[1].artifacts must be an object"),
    (lambda d: located_step(d)["locate_result"]["element"].update(bbox="here"),
     ".locate_result.element.bbox must be a box of four numbers, not str"),
    (lambda d: located_step(d)["locate_result"].update(success="yes"), ".locate_result.success must be true or"),
    (lambda d: located_step(d)["step"].update(target_ref={"text": "发送"}), ".step.target_ref must be text"),
    (lambda d: located_step(d)["artifacts"].update(before=7), ".artifacts.before must be text, not int"),
]


@pytest.mark.parametrize(("change", "words"), WRONG_TYPES)
def test_wrong_types_in_run_json_name_the_field(record, tmp_path, capsys, change, words):
    copy = edited(record, tmp_path, change)
    assert main(["replay", str(copy)]) == ExitCode.ENVIRONMENT
    err = capsys.readouterr().err
    assert f"{copy / 'run.json'}: " in err and words in err and "internal error" not in err
