"""One closed set of steps, dispatched once (issue 36, item 1).

Adding an action is one type in ``core/plan/actions.py`` (with its ``describe``), one entry in ``PARSERS``,
one case in ``StepRunner._dispatch``, one test. The type checker is what makes that list complete: a type added
to the union without its case fails mypy at the ``assert_never`` of the dispatch. The test below proves it on
a copy of the package, with a type that has no case and, as the control, the package as it is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from remote.core.plan import actions, flow
from remote.core.plan.actions import PARSERS, ActionName, parse_args
from remote.core.plan.steps import StepPlan

ROOT = Path(__file__).resolve().parent.parent
NEW_TYPE = '''@dataclass(frozen=True)
class Vibrate:
    ms: int = 200

    def describe(self, targets: tuple[str, ...]) -> str:
        return f"{self.ms} ms"


'''

SKIP_OPENAI = '''
[[tool.mypy.overrides]]
module = ["openai", "openai.*"]
follow_imports = "skip"
'''


def test_every_action_has_one_parser_and_every_kind_a_label():
    kinds = {a for a in ActionName if not flow.is_flow(a.value)}
    assert set(PARSERS) == kinds
    for kind in kinds:
        params = {"tap": {}, "long_press": {}, "swipe": {"direction": "up"}, "input_text": {"text": "你好"},
                  "press_key": {"key": "BACK"}, "wait": {"ms": 10}, "go_home": {}, "launch_app": {"package": "a.b"},
                  "open_url": {"url": "https://example.com"}, "call": {"number": "10086"}, "back_to_home": {},
                  "take_over": {"message": "m"}, "finish": {"status": "success"}}[kind.value]
        step = StepPlan(step=1, action=kind, params=params, target_ref="text:发送" if kind.value == "tap" else None)
        assert step.label.startswith(kind.value)
        assert isinstance(step.args, actions.Args)
    assert StepPlan(step=1, action=ActionName.INPUT_TEXT, target_ref="editable:", params={"text": "你好"}).label == \
        "input_text editable: '你好'"
    with pytest.raises(actions.ArgsError, match="not an action with params"):
        parse_args(ActionName.REPEAT, {}, None)


@pytest.mark.slow
def test_an_action_type_without_a_dispatch_case_fails_the_type_check(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "remote", copy / "remote", ignore=shutil.ignore_patterns("__pycache__"))
    # The project's mypy settings, and one more: the dispatch's imports reach the openai SDK's 2,000 typed
    # modules (remote.ai.llm's annotations), three quarters of this check's time and nothing the dispatch's
    # completeness depends on. `mypy` of the whole package (the README's command) still checks them.
    (copy / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8") + SKIP_OPENAI,
                                         encoding="utf-8")

    def mypy() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir",
                               str(tmp_path / "cache"), "remote/runner/step_runner.py"],
                              cwd=copy, capture_output=True, text=True, timeout=600)

    control = mypy()
    assert control.returncode == 0, control.stdout + control.stderr
    path = copy / "remote" / "core" / "plan" / "actions.py"
    text = path.read_text(encoding="utf-8")
    assert "\nArgs = (" in text and "| Finish)" in text
    path.write_text(text.replace("\nArgs = (", "\n" + NEW_TYPE + "Args = (", 1).replace("| Finish)", "| Finish | Vibrate)", 1),
                    encoding="utf-8")
    broken = mypy()
    assert broken.returncode != 0
    assert "step_runner.py" in broken.stdout and "Vibrate" in broken.stdout, broken.stdout
