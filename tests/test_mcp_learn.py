"""Learning from the MCP side (issue 27, item 4), through the SDK's own client on the simulated phone.

An agent does a task with the acting tools, sees it done with ``wait_for`` and
calls ``save_task``: the sentence's shape then runs through ``run_task`` with
other values and no model (there is none configured here), and the reply says a
learned task ran. What cannot be saved says why: nothing done, a check the
screen does not show, learning switched off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from remote.apps.learned import LearnedStore
from remote.mcp.access import AccessGate
from remote.mcp.journal import MAX_ACTS, Journal
from remote.mcp.session import Session, SessionOptions
from tests.test_mcp_gates import REGISTRY, in_process
from tests.test_mcp_stdio import call, ok, text_of


def make_session(adb: Any, sim_phone: Any, tmp_path: Path, *, learn: bool = True) -> Session:
    return Session(adb, registry=REGISTRY, gate=AccessGate(["*"]), phone=sim_phone,
                   options=SessionOptions(runs_dir=tmp_path / "runs", work_dir=tmp_path / "work",
                                          launch_settle_s=0.2, learned=LearnedStore(tmp_path / "learned"),
                                          learn=learn))


async def send_by_hand(client: Any, contact: str, message: str) -> None:
    """What an agent does for "tell <contact> <message>" on WeChat, one tool call at a time."""
    await ok(client, "open_app", name="微信")
    await ok(client, "tap", target_ref="desc:搜索")
    await ok(client, "type", text=contact)
    await ok(client, "tap", target_ref=f"text:{contact}")
    await ok(client, "type", text=message, target_ref="editable:")
    await ok(client, "tap", target_ref="text:发送")


@pytest.mark.slow
def test_an_agents_calls_saved_as_a_task_replay_through_run_task_with_other_values_and_no_model(
        adb, sim_phone, tmp_path):
    session = make_session(adb, sim_phone, tmp_path)

    async def scenario() -> None:
        async with in_process(session) as client:
            none_yet = await call(client, "save_task", task="跟王五讲一声明天见")
            assert none_yet.is_error and "nothing to save" in text_of(none_yet)
            await send_by_hand(client, "王五", "明天见")
            assert sim_phone.snapshot()["chats"]["王五"][-1] == "明天见"
            unseen = await call(client, "save_task", task="跟王五讲一声明天见", check=["text:后天见"])
            assert unseen.is_error and "text:后天见 not found" in text_of(unseen)
            await ok(client, "wait_for", target_ref="text:明天见", timeout=5)
            saved = await ok(client, "save_task", task="跟王五讲一声明天见",
                             slots={"contact": "王五", "message": "明天见"})
            assert "learned task learned_" in saved and "跟{contact}讲一声{message}" in saved, saved
            assert (await call(client, "save_task", task="跟王五讲一声明天见")).is_error   # saved once: begun again

            replay = await ok(client, "run_task", task="跟李四讲一声周末去爬山")
            assert replay.startswith("SUCCESS") and "plan from learned" in replay and "0 model calls" in replay
            assert "learned task learned_" in replay, replay
            assert sim_phone.snapshot()["chats"]["李四"][-1] == "周末去爬山"
    anyio.run(scenario)

    (path,) = (tmp_path / "learned").glob("learned_*.yaml")
    task = yaml.safe_load(path.read_text(encoding="utf-8"))["tasks"][0]
    text = path.read_text(encoding="utf-8")
    assert "王五" not in text.split("steps:")[1] and "明天见" not in text.split("steps:")[1]   # values are slots
    assert "xy:" not in text                              # every touched element had a text or label
    assert task["success_check"]["app"] == "com.tencent.mm"
    assert task["success_check"]["target"] == "text:{message}"
    assert LearnedStore(tmp_path / "learned").get(task["name"]).state.replays == 1


def test_save_task_with_learning_off_says_so_and_keeps_nothing(adb, sim_phone, tmp_path):
    session = make_session(adb, sim_phone, tmp_path, learn=False)

    async def scenario() -> None:
        async with in_process(session) as client:
            await ok(client, "open_app", name="设置")
            refused = await call(client, "save_task", task="打开设置看看", check=["text:设置"])
            assert refused.is_error and "learning is off" in text_of(refused)
    anyio.run(scenario)
    assert not (tmp_path / "learned").exists() or not list((tmp_path / "learned").glob("*.yaml"))


def test_typing_not_read_back_is_not_saved_and_a_double_tap_starts_the_sequence_again(adb, sim_phone, tmp_path):
    session = make_session(adb, sim_phone, tmp_path)

    async def scenario() -> None:
        async with in_process(session) as client:
            await ok(client, "open_app", name="微信")
            await ok(client, "tap", target_ref="desc:搜索")
            await ok(client, "type", text="王五", verify=False)      # the field could be a password field
            await ok(client, "wait_for", target_ref="text:王五", timeout=5)
            unread = await call(client, "save_task", task="找一下王五")
            assert unread.is_error and "verify=false" in text_of(unread)
            await ok(client, "double_tap", target_ref="text:王五")       # no template step double-taps
            await ok(client, "wait_for", target_ref="text:王五", timeout=5)
            again = await call(client, "save_task", task="找一下王五")
            assert again.is_error and "nothing to save" in text_of(again)
    anyio.run(scenario)
    assert not list((tmp_path / "learned").glob("*.yaml"))


def test_the_journal_keeps_the_last_acts_only():
    journal = Journal()
    for _ in range(MAX_ACTS + 5):
        journal.key(4, 1)
    journal.found("text:好")
    assert len(journal.acts) == MAX_ACTS and journal.dropped == 5 and journal.seen == "text:好"
    journal.launched("com.android.settings")          # an act after the check: the check no longer ends it
    assert journal.seen == ""
