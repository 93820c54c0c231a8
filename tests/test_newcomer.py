"""What a newcomer met (issue 34 items 9, 11, 12), through the CLI: Ray is an extra and a fleet command says
so; a command imports what it uses and a run on a phone in use is refused before the runner's imports; a
warning is said once; replay's "unknown", locate's AMBIGUOUS, a batch's answers and a stop explain themselves."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from remote.cli import main
from tests.support.cli_fixtures import ROOT, Tail, remote_cli, remote_proc

HOLD = """
import sys, time
from remote.core.device.phone_lock import PhoneLock
with PhoneLock.acquire("R58M123", server="127.0.0.1:5037", command="remote run 打开设置 --device R58M123"):
    print("held", flush=True)
    time.sleep(60)
"""
HEAVY = ("openai", "cv2", "numpy", "adbutils", "fontTools", "remote.runner", "rapidocr_onnxruntime", "ray")


def _imports_after(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, set[str], str]:
    """Run ``remote ARGS`` in a fresh interpreter; its exit status and which heavy modules it imported."""
    code = ("import sys, json\nfrom remote import cli\nrc = cli.main(sys.argv[1:])\n"
            f"print(json.dumps([rc, sorted(m for m in {HEAVY!r} if m in sys.modules)]))")
    proc = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=180)
    rc, heavy = json.loads(proc.stdout.strip().splitlines()[-1])
    return rc, set(heavy), proc.stderr


def test_a_run_on_a_phone_in_use_is_refused_before_the_runner_is_imported(tmp_path, cli_env):
    holder = subprocess.Popen([sys.executable, "-c", HOLD], env=cli_env, cwd=tmp_path, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        rc, heavy, err = _imports_after(["run", "--device", "R58M123", "打开设置"], cli_env, tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert rc == 2 and f"is in use by process {holder.pid}" in err
    assert heavy == set(), heavy


def test_a_dry_run_imports_no_model_client(tmp_path, cli_env):
    rc, heavy, err = _imports_after(["run", "--device", "sim", "--dry-run", "--runs-dir", str(tmp_path / "runs"),
                                     "打开设置"], cli_env, tmp_path)
    assert rc == 0, err
    assert "openai" not in heavy and "ray" not in heavy and "remote.runner" in heavy


def test_a_fleet_command_without_ray_says_which_extra_to_install(tmp_path, cli_env):
    hide = tmp_path / "hide" / "ray"
    hide.mkdir(parents=True)
    (hide / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n")
    env = {**cli_env, "PYTHONPATH": f"{hide.parent}:{ROOT}"}
    worker = remote_cli("worker", "--address", "127.0.0.1:1", env=env, cwd=tmp_path, timeout=120)
    assert worker.returncode == 2 and "pip install 'remote[fleet]'" in worker.stderr
    assert "Traceback" not in worker.stderr
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    base = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert "ray" not in base and 'fleet = ["ray' in text


def test_a_warning_is_said_once_and_alike_everywhere(tmp_path, cli_env):
    mods = tmp_path / "mods" / "wechat_lite"
    mods.mkdir(parents=True)
    (mods / "config.yaml").write_text("name: wechat_lite\npackage: com.tencent.mm\nkeywords: [微信小号]\n")
    env = {**cli_env, "REMOTE_MODULES": str(mods.parent)}
    run = remote_cli("run", "--device", "sim", "--runs-dir", str(tmp_path / "runs"), "打开设置", env=env, cwd=tmp_path)
    claimed = [line for line in run.stderr.splitlines() if "is claimed by module" in line]
    assert claimed and all(line.count("warning:") == 1 for line in claimed), claimed
    listed = remote_cli("modules", env=env, cwd=tmp_path).stdout
    checked = remote_cli("modules", "check", env=env, cwd=tmp_path).stdout
    line = next(x for x in checked.splitlines() if "is claimed by module" in x)
    assert line in listed.splitlines() and ": warning: " in line and "problem:" not in listed


def test_locate_says_ambiguous_before_any_box(tmp_path, capsys):
    xml = '<hierarchy><node text="昨天" bounds="[0,0][200,100]"/><node text="昨天" bounds="[0,500][200,600]"/></hierarchy>'
    Image.new("RGB", (1080, 1920), "white").save(tmp_path / "s.png")
    (tmp_path / "s.xml").write_text(xml, encoding="utf-8")
    assert main(["locate", str(tmp_path / "s.png"), "text:昨天", "--xml", str(tmp_path / "s.xml")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("AMBIGUOUS") and "would not tap" in out[0] and "found by" not in "\n".join(out)


@pytest.mark.slow
def test_replay_explains_unknown_and_batch_shows_answers(tmp_path, cli_env):
    runs = tmp_path / "runs"
    sent = remote_cli("run", "--device", "sim", "--runs-dir", str(runs), "给张三发微信消息说你好", env=cli_env,
                      cwd=tmp_path)
    assert sent.returncode == 0, sent.stderr[-2000:]
    replay = remote_cli("replay", str(next(runs.iterdir())), env=cli_env, cwd=tmp_path)
    assert "recorded: unknown" in replay.stdout and "verify unknown: the screen changed" in replay.stdout
    (tmp_path / "q.yaml").write_text("- task: WLAN开着吗\n- task: 打开设置\n", encoding="utf-8")
    batch = remote_cli("batch", str(tmp_path / "q.yaml"), "--device", "sim", "--runs-dir", str(tmp_path / "b"),
                       env=cli_env, cwd=tmp_path)
    head, first, second = batch.stdout.strip().splitlines()[:3]
    assert head.split()[-2:] == ["answer", "record"]
    assert first.split()[-2] == "true" and "WLAN开着吗" in first and second.split()[-2] == "-"


@pytest.mark.slow
def test_a_stop_says_it_is_writing_the_record(tmp_path, cli_env):
    proc = remote_proc("run", "--device", "sim", "--runs-dir", str(tmp_path / "runs"), "给张三发微信消息说你好",
                       env=cli_env, cwd=tmp_path)
    err = Tail(proc.stderr)
    err.wait("[3/", timeout=120)
    proc.send_signal(signal.SIGINT)
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.wait(timeout=120)
    err.thread.join(timeout=10)
    assert proc.returncode == 130 and "ABORTED" in out
    assert "Ctrl-C: stopping the step in progress" in err.text
    assert "writing the run's record" in err.text and err.text.index("stopping") < err.text.index("writing the run")
