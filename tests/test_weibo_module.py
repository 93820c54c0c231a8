"""The weibo module's templates on the trace phone (a recording of the real app): free, and checked at the end."""

from __future__ import annotations

import pytest

from remote.core.records import TaskStatus
from tests.support.trace_fixtures import TRACES

WEIBO = TRACES / "weibo_bfs_greedy"
LAUNCHER, TERMS, AFTER_TERMS = "5f6d51b4d0e4a8b9f79caa670d861f15", "3dfa7685904ce1c3a0c54831d93bfebf", "869da3f5656ea9268882ac20dfc6386f"
MAIN, LOGIN = "a7dec982549603c2c9a5fa7765e76ea2", "aa93932eb34505ff1b1516b3e94a0c2b"
HELP, PRIVACY = "356f343a30ec0e9b3a4aef6ae2cb4d43", "3ad294e7d25c9d8e5dd4cf3a2ed66b54"

if not WEIBO.is_dir():
    pytest.skip(f"the Weibo recording is not at {WEIBO} (set REMOTE_DATA_DIR to the data folder)", allow_module_level=True)


def weibo(start: str | None = None) -> dict:
    return {"trace": str(WEIBO), "uiautomator_delay_ms": 0, **({"trace_start": start} if start else {})}


@pytest.mark.parametrize("sim_scenario", [weibo()], indirect=True)
def test_accepting_the_terms_on_first_launch(make_runner, sim_phone):
    result = make_runner().run("同意微博用户协议")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert result.module == "weibo" and result.plan.source == "template" and result.model_usage.calls == 0
    assert sim_phone.snapshot()["visited"] == [LAUNCHER, TERMS, AFTER_TERMS]
    assert result.step_results[-1].verify_result.change_description == "text:HOME is on the new screen"


@pytest.mark.parametrize("sim_scenario", [weibo(MAIN)], indirect=True)
@pytest.mark.parametrize("task, end", [("登录微博", LOGIN), ("打开微博客服中心", HELP),
                                       ("查看微博隐私政策", PRIVACY)])
def test_tasks_from_the_main_screen_are_free_and_end_where_they_say(make_runner, sim_phone, task, end):
    result = make_runner().run(task)
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert result.module == "weibo" and result.model_usage.calls == 0
    snap = sim_phone.snapshot()
    assert snap["trace_state"].startswith(end[:6]) and snap["unrecorded_inputs"] == 0
    assert [sr.locate_result.method_used for sr in result.step_results if sr.locate_result] == ["tree"] * (len(snap["visited"]) - 1)

