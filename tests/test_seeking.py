"""One exception tree that names its reasons, and one looking loop for the flow steps and the MCP tools.

The errors part imports every module of the product and checks each error class it defines; the looking
part drives the MCP door against the simulated phone (the real adbutils client), beside the flow door's
own judge (`remote.runner.looking.see`) on the same screen.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field

import pytest

import remote
from remote.apps import ModuleRegistry
from remote.errors import ExitCode, FailureReason, LocateError, LocateFailure, RemoteError
from remote.mcp import gestures
from remote.mcp.access import AccessGate
from remote.mcp.session import Session, SessionOptions
from remote.runner.looking import Seen, see
from remote.runner.seeking import Eyes, holds, wait_until

REGISTRY = ModuleRegistry()
# Raised inside a library's own loop and turned into one of ours there, never out of the product:
INSIDE = {"DeadlinePassed"}      # remote.ai.llm: an openai timeout that stops the client's retries; a ModelError
OPTIONAL = ("ray", "playwright", "fastapi", "uvicorn", "starlette")   # extras a module may need


def product_error_classes() -> list[type[BaseException]]:
    """Every exception class a module of ``remote`` (but the simulated phone's own) defines."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(remote.__path__, "remote."):
        if info.name.startswith(("remote.sim", "remote.__main__")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:
            if exc.name and exc.name.split(".")[0] in OPTIONAL:
                continue
            raise
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, Exception) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    return list(found.values())


def test_every_error_the_product_defines_is_a_remote_error_naming_its_reason_and_exit_code():
    classes = product_error_classes()
    names = {c.__name__ for c in classes}
    assert {"PlanError", "ArgsError", "ReplyError", "PromptError", "ReadError", "LocateError"} <= names, names
    strays = [c.__qualname__ for c in classes if not issubclass(c, RemoteError) and c.__name__ not in INSIDE]
    assert strays == [], f"errors outside the tree: {strays}"
    for cls in (c for c in classes if c.__name__ not in INSIDE):
        assert isinstance(cls.reason, FailureReason), cls
        assert isinstance(cls.exit_code, ExitCode), cls


def test_each_error_carries_its_own_reason_where_the_runner_had_an_ordered_table():
    from remote.ai.answers import ReplyError
    from remote.ai.prompting import PromptError
    from remote.core.plan.schema import PlanError
    from remote.core.plan.values import ReadError
    from remote.errors import BudgetExceeded, ConfigError, DeviceDisconnected, ModelError, ModelUnreachable
    from remote.runner.clock import TimeCapReached
    from remote.runner.tools import AppMissing

    expected = {PlanError(["x"]): FailureReason.INVALID_PLAN, ReplyError("x"): FailureReason.MODEL,
                PromptError("x"): FailureReason.CONFIG, ReadError("x"): FailureReason.NOT_READ,
                ModelUnreachable("x"): FailureReason.MODEL_UNREACHABLE, ModelError("x"): FailureReason.MODEL,
                BudgetExceeded("x"): FailureReason.BUDGET, TimeCapReached("x"): FailureReason.TIME_CAP,
                AppMissing("x"): FailureReason.APP_MISSING, DeviceDisconnected("x"): FailureReason.DEVICE,
                ConfigError("bad", path="f.yaml", line=3): FailureReason.CONFIG}
    for error, reason in expected.items():
        assert error.reason is reason, type(error).__name__
    assert PromptError("x").exit_code is ExitCode.ENVIRONMENT and PlanError(["x"]).exit_code is ExitCode.FAILED
    assert ConfigError("bad", path="f.yaml", line=3).problem == "bad"
    with pytest.raises(ValueError):          # still a ValueError for the parsers' callers
        raise PlanError(["x"])


def test_a_locate_error_carries_its_failure_and_candidates_and_its_reason_follows():
    ambiguous = LocateError("two", failure=LocateFailure.AMBIGUOUS, candidates=[(0, 0, 1, 1), (2, 2, 3, 3)])
    assert ambiguous.reason is FailureReason.AMBIGUOUS and ambiguous.candidates == ((0, 0, 1, 1), (2, 2, 3, 3))
    assert LocateError("none").failure is LocateFailure.NOT_FOUND
    assert LocateError("none").reason is FailureReason.NOT_FOUND
    assert LocateFailure.UNAVAILABLE.reason is FailureReason.CONFIG


# ---------------------------------------------------------------- the looking loops


@dataclass
class FakeClock:
    now: float = 0.0
    slept: list[float] = field(default_factory=list)

    def elapsed(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.parametrize("present", [True, False])
def test_a_look_that_cannot_tell_is_neither_present_nor_gone_so_the_wait_runs_to_its_timeout(present):
    clock = FakeClock()
    eyes = Eyes(lambda n: object(), lambda screen: Seen(None, "a secure screen with no UI tree"))  # type: ignore[arg-type,return-value]
    got = wait_until(eyes, present, 1000, clock, 0.3)
    assert not holds(got.seen, present) and got.waited_ms >= 1000 and got.looks == 5


def test_a_wait_ends_at_the_first_look_that_holds():
    clock = FakeClock()
    verdicts = iter([Seen(False), Seen(False), Seen(True, "found")])
    got = wait_until(Eyes(lambda n: object(), lambda screen: next(verdicts)), True, 5000, clock, 0.3)  # type: ignore[arg-type,return-value]
    assert got.looks == 3 and holds(got.seen, True) and clock.slept == [0.3, 0.3]


@pytest.fixture
def session(adb, sim_phone, tmp_path) -> Session:
    gate = AccessGate(["com.tencent.mm", "com.android.settings"])
    return Session(adb, registry=REGISTRY, gate=gate, phone=sim_phone,
                   options=SessionOptions(runs_dir=None, work_dir=tmp_path, busy_wait=5))


def test_a_place_matched_twice_is_present_at_both_doors_and_a_tap_still_refuses_it(session, sim_phone):
    sim_phone.launch("com.tencent.mm")
    flow_seen = see(session.locator, session.live_screen(), ["text:微信"])    # the flow steps' judge
    assert flow_seen.found is True
    said = gestures.wait_for(session, "text:微信", timeout=2)                  # the MCP tool
    assert said.startswith("text:微信 present: ") and "nearly equally well" in said
    with pytest.raises(LocateError) as raised:
        gestures.wait_for(session, "text:微信", gone=True, timeout=0.5)
    assert raised.value.failure is LocateFailure.NOT_FOUND and "still there" in raised.value.message
    with pytest.raises(LocateError) as refused:
        gestures.tap(session, gestures.Asker(None), target_ref="text:微信")
    assert refused.value.failure is LocateFailure.AMBIGUOUS and len(refused.value.candidates) >= 2


def test_the_mcp_scroll_ends_where_the_list_stops_moving_as_the_flow_step_does(session, sim_phone):
    sim_phone.launch("com.android.settings")
    before = len(sim_phone.commands)
    with pytest.raises(LocateError, match="the list ended after 2 scrolls down") as raised:
        gestures.scroll_to(session, gestures.Asker(None), "text:永远不会出现", max_swipes=6)
    swipes = [c for c in sim_phone.commands[before:] if c.removeprefix("cmd ").startswith("input swipe")]
    assert len(swipes) == 2          # test_flow_cli's scroll_until_visible swipes as often on this list
    assert raised.value.failure is LocateFailure.NOT_FOUND
