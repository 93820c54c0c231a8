"""Shared test set-up.

adbutils starts its bundled `adb` binary when no server answers; no test may leave
one running, so point it at /bin/true for the whole session.
"""

import os

os.environ["ADBUTILS_ADB_PATH"] = "/bin/true"

# Fixture modules each area adds (tests/support/*.py) are listed here.
pytest_plugins: list[str] = ["tests.support.model_fixtures", "tests.support.sim_fixtures",
                             "tests.support.runner_fixtures", "tests.support.cli_fixtures"]
