"""The suite runs the shipped modules only, whatever a user added under remote/apps/ or exported as
REMOTE_MODULES (issue 34 item 8; tests/conftest.py sets REMOTE_SHIPPED_ONLY=1 and empties REMOTE_MODULES)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from remote.apps import APPS_DIR, SHIPPED, ModuleRegistry
from tests.support.cli_fixtures import ROOT, remote_cli


def test_the_suite_sees_the_shipped_modules_only():
    assert os.environ["REMOTE_SHIPPED_ONLY"] == "1" and os.environ["REMOTE_MODULES"] == ""
    assert set(ModuleRegistry().modules) == set(SHIPPED)


def test_shipped_names_every_module_the_repository_tracks():
    try:
        tracked = subprocess.run(["git", "ls-files", "remote/apps/*/config.yaml"], cwd=ROOT, capture_output=True,
                                 text=True, timeout=30, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc}): the tracked modules cannot be listed")
    assert sorted(p.split("/")[2] for p in tracked) == sorted(SHIPPED)


def test_a_module_added_under_remote_apps_is_left_out_of_the_suite(tmp_path, cli_env):
    folder = APPS_DIR / f"zz_user_{os.getpid()}"
    folder.mkdir()
    try:
        (folder / "config.yaml").write_text("name: zzweather\npackage: com.example.zzweather\nkeywords: [天气]\n",
                                            encoding="utf-8")
        suite = remote_cli("modules", env=cli_env, cwd=tmp_path)
        user = remote_cli("modules", env={**cli_env, "REMOTE_SHIPPED_ONLY": ""}, cwd=tmp_path)
    finally:
        shutil.rmtree(folder)
    assert suite.returncode == 0 and "zzweather" not in suite.stdout and "wechat" in suite.stdout
    assert "zzweather" in user.stdout      # the user's own `remote modules` lists it, as docs/modules.md §0 says
