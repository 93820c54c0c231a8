"""Fixtures for driving ``remote run`` in this process on a fast simulated phone, as the honest-outcomes and
the gates tests do: ``workdir`` (a clean current folder, no model, no user modules, ``fast.yaml``),
``with_model`` (the loopback model server configured), and ``run_sim(*args)``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from remote.cli import main
from tests.support.model_fixtures import SECRET_KEY

FAST_SIM = {"uiautomator_delay_ms": 0}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean folder as the user's current directory, no model configured, a fast simulated phone."""
    monkeypatch.chdir(tmp_path)
    for var in ("LLM_PROVIDER", "CUSTOM_LLM_BASE_URL", "CUSTOM_LLM_API_KEY", "LLM_TIMEOUT", "LLM_MAX_RETRIES",
                "REMOTE_MODULES"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "fast.yaml").write_text(yaml.safe_dump(FAST_SIM), encoding="utf-8")
    return tmp_path


@pytest.fixture
def with_model(workdir: Path, model_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("CUSTOM_LLM_BASE_URL", model_server.url)
    monkeypatch.setenv("CUSTOM_LLM_API_KEY", SECRET_KEY)
    monkeypatch.setenv("CUSTOM_LLM_MODEL", "test-vl")
    monkeypatch.setenv("LLM_TIMEOUT", "3")
    yield model_server


def run_sim(*args: str) -> int:
    return main(["run", "--device", "sim", "--scenario", "fast.yaml", "--runs-dir", "runs", *args])
