"""`remote locate` and `remote match` on files: exit codes, output, annotation."""

import json

import numpy as np
from PIL import Image

from remote.cli import main


def _files(tmp_path):
    rng = np.random.default_rng(3)
    arr = np.full((60, 60, 3), 240, np.uint8)
    for _ in range(6):
        x, y = rng.integers(0, 48, 2)
        arr[y:y + rng.integers(6, 20), x:x + rng.integers(6, 20)] = rng.integers(0, 255, 3)
    icon = Image.fromarray(arr)
    scr = Image.new("RGB", (400, 800), "white")
    scr.paste(icon, (100, 300))
    scr.save(tmp_path / "s.png")
    icon.save(tmp_path / "ref.png")
    (tmp_path / "d.xml").write_text('<hierarchy><node text="OK" clickable="true" bounds="[0,0][100,50]"/></hierarchy>',
                                    encoding="utf-8")
    return tmp_path


def test_match_found_json_and_annotate(tmp_path, capsys):
    d = _files(tmp_path)
    rc = main(["match", str(d / "ref.png"), str(d / "s.png"), "--json", "--annotate", str(d / "a.png")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["method_used"] == "template" and out["element"]["bbox"] == [100, 300, 160, 360]
    assert Image.open(d / "a.png").getpixel((100, 330)) != (255, 255, 255)


def test_locate_text_via_xml_and_not_found(tmp_path, capsys):
    d = _files(tmp_path)
    assert main(["locate", str(d / "s.png"), "text:OK", "--xml", str(d / "d.xml")]) == 0
    assert "found by tree" in capsys.readouterr().out
    assert main(["locate", str(d / "s.png"), "id:nothing", "--xml", str(d / "d.xml")]) == 1
    assert main(["locate", str(d / "s.png"), "anything", "--ref", str(d / "ref.png")]) == 0


def test_missing_files_exit_2(tmp_path, capsys):
    d = _files(tmp_path)
    assert main(["locate", str(d / "none.png"), "text:OK"]) == 2
    assert "error: screenshot not found" in capsys.readouterr().err
    assert main(["match", str(d / "none.png"), str(d / "s.png")]) == 2
    assert main(["locate", str(d / "s.png"), "x", "--module", "no_such_module"]) == 2
