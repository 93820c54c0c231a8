"""The runner: one task from sentence to verdict, orchestrating the model layer (``remote.ai``) and the
model-free core (``remote.core``). Imports ai, core and apps; nothing below imports it.

    from remote.runner import build_runner
    result = build_runner(adb, llm=LLMConfig.from_env()).run("给张三发微信消息说你好")

The names below are imported when first asked for (PEP 562), not with the package: a light module of it
(`clock`, asked by `remote run` before the phone is opened) does not bring in the whole runner (0.3 s).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remote.runner.factory import build_runner
    from remote.runner.task_runner import Limits, RunOptions, TaskRunner

__all__ = ["Limits", "RunOptions", "TaskRunner", "build_runner"]
_WHERE = {"build_runner": "remote.runner.factory", "Limits": "remote.runner.task_runner",
          "RunOptions": "remote.runner.task_runner", "TaskRunner": "remote.runner.task_runner"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'remote.runner' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
