"""Shared test set-up.

adbutils starts its bundled `adb` binary when no server answers; no test may leave
one running, so point it at /bin/true for the whole session. Learned tasks (docs/learning.md) go to a
folder of each test's own, never to the user's ~/.local/share/remote/learned.
"""

import os

import pytest

os.environ["ADBUTILS_ADB_PATH"] = "/bin/true"


@pytest.fixture(autouse=True)
def _own_learned_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMOTE_LEARNED_DIR", str(tmp_path_factory.mktemp("learned")))

# Fixture modules each area adds (tests/support/*.py) are listed here.
pytest_plugins: list[str] = ["tests.support.model_fixtures", "tests.support.sim_fixtures",
                             "tests.support.runner_fixtures", "tests.support.cli_fixtures"]
