"""`remote report RUN_DIR`: (re)write report.html from run.json and the stored screens."""

from __future__ import annotations

from typing import Any

from remote.core.record.report import write_report


def run(args: Any) -> int:
    path = write_report(args.run_dir)
    print(f"wrote {path}")
    return 0
