"""The runner: one task from sentence to verdict, orchestrating the model layer (``remote.ai``) and the
model-free core (``remote.core``). Imports ai, core and apps; nothing below imports it.

    from remote.runner import build_runner
    result = build_runner(adb, llm=LLMConfig.from_env()).run("给张三发微信消息说你好")
"""

from remote.runner.factory import build_runner
from remote.runner.task_runner import Limits, RunOptions, TaskRunner

__all__ = ["Limits", "RunOptions", "TaskRunner", "build_runner"]
