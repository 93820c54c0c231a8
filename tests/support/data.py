"""Where the project's data outside the repository is (real screenshots, UI dumps, DroidBot recordings).

The data is not in the repository: tests and benchmarks that read it find it here and skip, saying where they
looked, when it is absent. ``REMOTE_DATA_DIR`` names the folder; without it, the ``shared/data`` folder beside
this checkout's folder is used (the layout of the project's own machines). Its parts: ``real-dev`` (screenshots
and converted UI dumps with ``MANIFEST.tsv``), ``real-zh``, ``traces`` (DroidBot recordings, one folder per
app: Kqramazov/fdroid_utg's states and the project's own). Benchmarks use the same function (their
``sys.path`` holds the repository's root).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    """``$REMOTE_DATA_DIR``, else ``<the folder holding this checkout>/shared/data``."""
    named = os.environ.get("REMOTE_DATA_DIR", "").strip()
    return Path(named).expanduser() if named else ROOT.parent / "shared" / "data"


def data_path(*parts: str) -> Path:
    """A part of the data folder: ``data_path("traces", "weibo_bfs_greedy")``."""
    return data_dir().joinpath(*parts)


def looked(*parts: str) -> str:
    """For a skip message: where the data was looked for and how to point at it."""
    return f"{data_path(*parts)} (set REMOTE_DATA_DIR to the data folder)"
