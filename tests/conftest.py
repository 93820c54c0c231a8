"""Shared test set-up.

adbutils starts its bundled `adb` binary when no server answers; no test may leave
one running, so point it at /bin/true for the whole session. Learned tasks (docs/learning.md) go to a
folder of each test's own, never to the user's ~/.local/share/remote/learned.

The suite runs on several pytest-xdist workers (pyproject's addopts; docs/testing.md). Each worker process
(and the one process of ``-n 0``) gets a runtime folder of its own (``XDG_RUNTIME_DIR``, a fresh 0700 folder),
so this user's private folders (``remote.core.safe_files``: the IME state per serial, the phone locks, the MCP
teach pictures) are never shared between workers, nor with a `remote` the user runs meanwhile: every simulated
phone is called ``remote-sim``, and one worker's run must not restore the IME another worker's run saved.
The `remote` processes tests start with this environment get the same folder.

The suite runs the shipped modules only, whatever the user added: ``REMOTE_SHIPPED_ONLY=1`` leaves out a module
someone created under ``remote/apps/`` (docs/modules.md §0), and ``REMOTE_MODULES`` is emptied (a real variable,
so a ``.env`` cannot name folders either); a test that needs extra modules sets REMOTE_MODULES itself.
"""

import atexit
import os
import shutil
import tempfile

import pytest

os.environ["ADBUTILS_ADB_PATH"] = "/bin/true"
_RUNTIME = tempfile.mkdtemp(prefix=f"remote-tests-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-")  # mode 0700
os.environ["XDG_RUNTIME_DIR"] = _RUNTIME
os.environ["REMOTE_SHIPPED_ONLY"] = "1"
os.environ["REMOTE_MODULES"] = ""
os.environ["REMOTE_CACHE_DIR"] = os.path.join(_RUNTIME, "cache")   # the report's cut fonts: not the user's cache
atexit.register(shutil.rmtree, _RUNTIME, ignore_errors=True)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): one worker more than the cores this process may use. Part of the suite
    waits (simulated phones' costs, subprocesses, Ray), and a worker beyond the cores fills those waits;
    measured on 2 cores, 4 were no faster than 3 (docs/testing.md). PYTEST_XDIST_AUTO_NUM_WORKERS overrides."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "").isdigit():
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return len(os.sched_getaffinity(0)) + 1


# The longest files, started first (2026-11-29: the Ray file ~185 s, the studio's browser tests ~75 s, the
# gates, the tree server and offline models about 35-90 s each, the type check of the dispatch ~12 s).
FIRST = ("tests/test_fleet_ray.py", "tests/test_studio_page.py", "tests/test_runner_sim.py", "tests/test_gates.py",
         "tests/test_tree_server.py", "tests/test_offline_models.py", "tests/test_action_model.py",
         "tests/test_phone_screens.py", "tests/test_flow_cli.py", "tests/test_sim_versions_e2e.py",
         "tests/test_flow_shipped.py", "tests/test_trace_replay.py", "tests/test_records_signals_locks.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With ``--dist loadfile --no-loadscope-reorder`` each file goes whole to the next free worker, in collection
    order: the longest go first, so that none of them is what the others wait for at the end (the Ray module
    alone is 1.5-3 min of waits). Files keep their order otherwise, and tests their order within a file."""
    rank = {path: i for i, path in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))


@pytest.fixture(autouse=True)
def _own_learned_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMOTE_LEARNED_DIR", str(tmp_path_factory.mktemp("learned")))
    # The suite's tests judge the `uiautomator dump` path (its failures, counts and timings); the resident tree
    # server's tests (tests/test_tree_server*.py) ask for `auto` / `server` themselves (`--tree`, `tree=`).
    monkeypatch.setenv("REMOTE_TREE", os.environ.get("REMOTE_SUITE_TREE", "dump"))

# Fixture modules each area adds (tests/support/*.py) are listed here.
pytest_plugins: list[str] = ["tests.support.model_fixtures", "tests.support.sim_fixtures",
                             "tests.support.runner_fixtures", "tests.support.cli_fixtures",
                             "tests.support.run_fixtures"]
