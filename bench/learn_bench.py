"""Learn once, replay free: model calls, tokens and seconds of the first run (the model plans) against the
replays (a learned task), per task, on the simulated phone; and the same runs with learning off, where the
model plans every time (what an agent without a cache pays).

    python bench/learn_bench.py
    python bench/learn_bench.py --replays 5

The model is the loopback chat-completions server (``remote.sim.model_server``) answering each task with a
plan of the shape a model gives: real openai client, real HTTP, no provider. Its token counts are its own
(characters / 4 of the request, the screenshot's base64 included), so they overstate what a provider would
bill for the image; calls and seconds are as measured. It answers at once: a hosted model adds its own
latency to every call, which the learned replays do not pay.

What the first table leaves out, the two after it try (issue 40):

* near sentences: close to a learned one but another app, another verb, or a slot value that names a
  sensitive word (转账, 支付). Each is judged by one rule (:func:`judge_near`): replayed without asking
  is wrong; not replayed, or replayed only after asking the person (who answers no), is right. The
  learned sentences of the first table, judged by the same rule, must be replayed without asking.
* a changed screen: the send learned on WeChat 8.0.47 replayed on 8.0.1 and 8.0.32 (other resource ids,
  another search entry: ``remote.sim.versions``), with the model there to heal a step (its one call)
  and the heal calls, healed steps and hand-overs printed. The loopback server has no scripted answer
  for a heal (``locate``): a heal the replay needs shows as a failed call, not as a model's guess.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remote.apps.learned import LearnedStore  # noqa: E402
from remote.config import LLMConfig  # noqa: E402
from remote.core.device.adb_controller import ADBController  # noqa: E402
from remote.core.records import TaskResult  # noqa: E402
from remote.runner import RunOptions, build_runner  # noqa: E402
from remote.runner.learner import Learner  # noqa: E402
from remote.sim import serve  # noqa: E402
from remote.sim.model_server import ModelServer  # noqa: E402


def plan(*steps: dict[str, Any], check: dict[str, Any], slots: dict[str, str] | None = None) -> dict[str, Any]:
    return {"analysis": {"current_screen": "home", **({"slots": slots} if slots else {})},
            "steps": [{"step": i, **s} for i, s in enumerate(steps, 1)], "success_check": check,
            "success_criteria": "done"}


def send(contact: str, message: str) -> dict[str, Any]:
    return plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}}, {"action": "back_to_home"},
                {"action": "tap", "target_ref": "desc:搜索"}, {"action": "input_text", "params": {"text": contact}},
                {"action": "tap", "target_ref": f"text:{contact}"},
                {"action": "input_text", "target_ref": "editable:", "params": {"text": message}},
                {"action": "tap", "target_ref": "text:发送"},
                check={"text": message}, slots={"contact": contact, "message": message})


def open_chat(contact: str) -> dict[str, Any]:
    return plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}}, {"action": "back_to_home"},
                {"action": "tap", "target_ref": "desc:搜索"}, {"action": "input_text", "params": {"text": contact}},
                {"action": "tap", "target_ref": f"text:{contact}"},
                check={"app": "com.tencent.mm", "target": "desc:聊天信息"}, slots={"contact": contact})


BLUETOOTH = plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                 {"action": "tap", "target_ref": "text:已关联的设备"},
                 {"action": "tap", "target_ref": "text:蓝牙", "params": {"toggle": "on"}},
                 check={"toggle": {"target": "text:蓝牙", "state": "on"}})

def launch(package: str, *steps: dict[str, Any]) -> dict[str, Any]:
    return plan({"action": "launch_app", "params": {"package": package}}, *steps, check={"app": package})


# (kind, the learned task it is close to, sentence, the model's plan when it is not replayed)
NEAR: list[tuple[str, str, str, dict[str, Any]]] = [
    ("other app", "open a chat", "在QQ里看看和李四的聊天", launch("com.tencent.mobileqq")),
    ("other app", "send (paraphrased)", "跟李四用短信讲一声周末去爬山", launch("com.android.mms")),
    ("other verb", "open a chat", "在微信里删掉和李四的聊天",
     launch("com.tencent.mm", {"action": "tap", "target_ref": "text:删除该聊天"})),
    ("other verb", "bluetooth on", "我想关掉蓝牙耳机", launch("com.android.settings")),
    ("sensitive value", "open a chat", "在微信里看看和微信支付的聊天", open_chat("微信支付")),
    ("sensitive value", "send (paraphrased)", "跟李四讲一声转账500块给我", send("李四", "转账500块给我")),
]
NEAR_CONTACTS = ["张三", "李四", "王五", "文件传输助手", "微信支付"]
VERSIONS = ("8.0.1", "8.0.32")     # the send is learned on the sim's newest WeChat (8.0.47)


def pad(text: str, width: int) -> str:
    """``text`` padded to ``width`` columns, a wide (CJK) character counting two."""
    return text + " " * max(0, width - sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text))


class Near(Enum):
    REPLAYED = "replayed without asking"
    ASKED = "replayed, asked first"
    NOT_REPLAYED = "not replayed"


RIGHT = {"learned": {Near.REPLAYED}, "near": {Near.ASKED, Near.NOT_REPLAYED}}


def judge_near(plan_source: str | None, questions: Sequence[str]) -> Near:
    """One rule for every sentence tried against learned tasks: what happened, from where the plan came
    and whether the person was asked anything before a step acted."""
    if plan_source != "learned":
        return Near.NOT_REPLAYED
    return Near.ASKED if questions else Near.REPLAYED


class Asked:
    """The person at the phone: records each question and answers no (as with nobody there)."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    def confirm(self, question: str) -> bool:
        self.questions.append(question)
        return False

    def choose(self, question: str, options: Sequence[str]) -> int | None:
        self.questions.append(question)
        return None

    def take_over(self, message: str) -> bool:
        return False


# (sentence, the model's plan for it): the first teaches, the others replay (other values where there are)
TASKS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "send (paraphrased)": [("麻烦帮我跟王五讲一声明天见", send("王五", "明天见")),
                           ("跟李四讲一声周末去爬山", send("李四", "周末去爬山")),
                           ("麻烦帮我跟张三讲一声好的", send("张三", "好的")),
                           ("跟王五讲一声收到", send("王五", "收到"))],
    "open a chat": [("在微信里看看和李四的聊天", open_chat("李四")), ("在微信里看看和王五的聊天", open_chat("王五")),
                    ("在微信里看看和张三的聊天", open_chat("张三"))],
    "bluetooth on": [("我想用蓝牙耳机", BLUETOOTH)] * 3,
}


@dataclass
class Cost:
    runs: int = 0
    ok: int = 0
    calls: int = 0
    tokens: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, result: TaskResult, seconds: float) -> None:
        self.runs += 1
        self.ok += result.success
        self.calls += result.model_usage.calls
        self.tokens += result.model_usage.total_tokens
        self.seconds.append(seconds)

    def line(self) -> str:
        med = statistics.median(self.seconds) if self.seconds else 0.0
        return (f"{self.ok}/{self.runs} ok, {self.calls:3d} calls, {self.tokens:7d} tokens, "
                f"median {med:5.2f} s, total {sum(self.seconds):6.1f} s")


def run_task(sentence: str, reply: dict[str, Any], learner: Learner | None, work: Path, *,
             scenario: dict[str, Any] | None = None, person: Asked | None = None) -> tuple[TaskResult, float]:
    """One run on a fresh simulated phone, the model a fresh loopback server holding this task's plan."""
    with ModelServer() as server, serve({"uiautomator_delay_ms": 0, **(scenario or {})}) as sim:
        server.script("plan", reply)
        config = LLMConfig.custom(api_key="sk-bench", base_url=server.url, model="test-vl", timeout=10)
        adb = ADBController(sim.serial, port=sim.port, state_dir=str(work / "ime"))
        try:
            start = time.perf_counter()
            result = build_runner(adb.connect(), llm=config, options=RunOptions(runs_dir=None),
                                  learner=learner, person=person).run(sentence)
            seconds = time.perf_counter() - start
        finally:
            adb.close()
    return result, seconds


def teach_and_replay(work: Path, replays: int) -> tuple[dict[str, Cost], dict[str, LearnedStore], list[bool]]:
    """The first table: each task taught once and replayed, beside the same runs with learning off; every
    replay also judged by :func:`judge_near` (it must be replayed without asking)."""
    totals = {"first": Cost(), "replays": Cost(), "no learning": Cost()}
    stores: dict[str, LearnedStore] = {}
    judged: list[bool] = []
    print(f"{'task':22} {'':13} result")
    for name, runs in TASKS.items():
        runs = runs if not replays else [runs[0]] + [runs[1 if len(runs) > 1 else 0]] * replays
        store = stores[name] = LearnedStore(work / name.replace(" ", "_"))
        rows = {"first": Cost(), "replays": Cost(), "no learning": Cost()}
        for i, (sentence, reply) in enumerate(runs):
            person = Asked()
            result, seconds = run_task(sentence, reply, Learner(store), work, person=person)
            rows["first" if i == 0 else "replays"].add(result, seconds)
            if i:
                judged.append(judge_near(result.plan_source, person.questions) in RIGHT["learned"])
            result, seconds = run_task(sentence, reply, None, work)
            rows["no learning"].add(result, seconds)
        for kind, cost in rows.items():
            print(f"{name if kind == 'first' else '':22} {kind:13} {cost.line()}")
            totals[kind].runs += cost.runs
            totals[kind].ok += cost.ok
            totals[kind].calls += cost.calls
            totals[kind].tokens += cost.tokens
            totals[kind].seconds += cost.seconds
    return totals, stores, judged


def near_sentences(work: Path, stores: dict[str, LearnedStore]) -> int:
    """Each near sentence once, the learned tasks in place (nothing new is saved); how many were judged right."""
    print("\nnear sentences (must not replay a learned task silently; the person answers no to any question)")
    print(f"{'kind':16} {'close to':20} {'sentence':30} {'judged':26} {'right':6} result")
    right = 0
    for kind, task, sentence, reply in NEAR:
        person = Asked()
        result, _ = run_task(sentence, reply, Learner(stores[task], save=False), work,
                             scenario={"contacts": NEAR_CONTACTS}, person=person)
        outcome = judge_near(result.plan_source, person.questions)
        ok = outcome in RIGHT["near"]
        right += ok
        cause = result.error_message.splitlines()[0][:60] if result.error_message else ""
        replay = result.learning or {}
        how = (f", healed steps {replay.get('healed_steps', [])}, handed over {replay.get('handed_over', False)}"
               if "replayed" in replay else "")
        print(f"{kind:16} {task:20} {pad(sentence, 30)} {outcome.value:26} {'yes' if ok else 'NO':6} "
              f"{result.status.value}, {result.model_usage.calls} calls ({result.plan_source}{how})"
              f"{' ' + cause if cause else ''}")
    print(f"near sentences judged right: {right}/{len(NEAR)}")
    return right


def changed_screens(work: Path, store: LearnedStore) -> int:
    """The learned send replayed on other WeChat releases, the model there to heal; how many succeeded."""
    print("\nreplay on a changed screen (the send learned on WeChat 8.0.47; the loopback model scripted for a plan "
          "only: a heal asks it for 'locate', which has no scripted answer)")
    ok = 0
    for version in VERSIONS:
        sentence, reply = "跟李四讲一声周末见", send("李四", "周末见")
        result, seconds = run_task(sentence, reply, Learner(store, save=False), work,
                                   scenario={"versions": {"wechat": version}})
        learning = result.learning or {}
        ok += result.success and result.plan_source == "learned"
        cause = result.error_message.splitlines()[0][:70] if result.error_message else ""
        print(f"  WeChat {version}: {result.status.value} ({result.plan_source}), {result.model_usage.calls} model "
              f"calls (heal or replan), healed steps {learning.get('healed_steps', [])}, handed over "
              f"{learning.get('handed_over', False)}, {seconds:.2f} s{' ' + cause if cause else ''}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replays", type=int, default=0, help="replays per task (default: the listed sentences)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        totals, stores, judged = teach_and_replay(work, args.replays)
        print()
        for kind, cost in totals.items():
            print(f"{'all tasks':22} {kind:13} {cost.line()}")
        learned = totals["first"].calls + totals["replays"].calls
        every = totals["no learning"].calls
        learned_s = sum(totals["first"].seconds) + sum(totals["replays"].seconds)
        print(f"\nmodel calls with learning / without: {learned}/{every} = {learned / max(every, 1):.2f}; "
              f"seconds {learned_s:.1f}/{sum(totals['no learning'].seconds):.1f} = "
              f"{learned_s / max(sum(totals['no learning'].seconds), 1e-9):.2f}")
        print(f"learned sentences judged by the same rule: {sum(judged)}/{len(judged)} replayed without asking")
        near_right = near_sentences(work, stores)
        healed_ok = changed_screens(work, stores["send (paraphrased)"])
    checks = {"replays: every one succeeds, 0 model calls":
              totals["replays"].calls == 0 and totals["replays"].ok == totals["replays"].runs and all(judged),
              "near sentences: none replayed without asking": near_right == len(NEAR),
              "changed screens: every replay succeeds": healed_ok == len(VERSIONS)}
    for text, ok in checks.items():
        print(f"target ({text}):", "ok" if ok else "MISSED")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
