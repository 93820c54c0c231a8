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
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
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


def run_task(sentence: str, reply: dict[str, Any], learner: Learner | None, work: Path) -> tuple[TaskResult, float]:
    """One run on a fresh simulated phone, the model a fresh loopback server holding this task's plan."""
    with ModelServer() as server, serve({"uiautomator_delay_ms": 0}) as sim:
        server.script("plan", reply)
        config = LLMConfig.custom(api_key="sk-bench", base_url=server.url, model="test-vl", timeout=10)
        adb = ADBController(sim.serial, port=sim.port, state_dir=str(work / "ime"))
        try:
            start = time.perf_counter()
            result = build_runner(adb.connect(), llm=config, options=RunOptions(runs_dir=None),
                                  learner=learner).run(sentence)
            seconds = time.perf_counter() - start
        finally:
            adb.close()
    return result, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replays", type=int, default=0, help="replays per task (default: the listed sentences)")
    args = parser.parse_args()
    totals = {"first": Cost(), "replays": Cost(), "no learning": Cost()}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"{'task':22} {'':13} result")
        for name, runs in TASKS.items():
            runs = runs if not args.replays else [runs[0]] + [runs[1 if len(runs) > 1 else 0]] * args.replays
            store = LearnedStore(work / name.replace(" ", "_"))
            rows = {"first": Cost(), "replays": Cost(), "no learning": Cost()}
            for i, (sentence, reply) in enumerate(runs):
                result, seconds = run_task(sentence, reply, Learner(store), work)
                rows["first" if i == 0 else "replays"].add(result, seconds)
                result, seconds = run_task(sentence, reply, None, work)
                rows["no learning"].add(result, seconds)
            for kind, cost in rows.items():
                print(f"{name if kind == 'first' else '':22} {kind:13} {cost.line()}")
                totals[kind].runs += cost.runs
                totals[kind].ok += cost.ok
                totals[kind].calls += cost.calls
                totals[kind].tokens += cost.tokens
                totals[kind].seconds += cost.seconds
    print()
    for kind, cost in totals.items():
        print(f"{'all tasks':22} {kind:13} {cost.line()}")
    learned = totals["first"].calls + totals["replays"].calls
    every = totals["no learning"].calls
    learned_s = sum(totals["first"].seconds) + sum(totals["replays"].seconds)
    print(f"\nmodel calls with learning / without: {learned}/{every} = {learned / max(every, 1):.2f}; "
          f"seconds {learned_s:.1f}/{sum(totals['no learning'].seconds):.1f} = "
          f"{learned_s / max(sum(totals['no learning'].seconds), 1e-9):.2f}")
    ok = totals["replays"].calls == 0 and totals["replays"].ok == totals["replays"].runs
    print("target (replays: every one succeeds, 0 model calls):", "ok" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
