"""Data records that cross layers: plans, locate results, verdicts, step and task results.

Field names are the run record's format (``run.json``, docs/architecture.md); fields are added,
never renamed. Enums are ``str`` enums so that ``json.dumps`` of ``to_dict()``
stays readable. Images (PIL) never go into ``to_dict()``: the recorder stores them
as files.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from remote.core.plan.actions import ActionName, ArgsError
from remote.core.plan.checks import FailureScreen, SuccessCheck
from remote.core.plan.steps import StepPlan, TargetType, TaskPlan, to_jsonable
from remote.errors import ExitCode, FailureReason, LocateFailure

# Re-exported: plans and results are one vocabulary for the rest of the product.
__all__ = ["ActionName", "ArgsError", "FailureReason", "LocateFailure", "FailureScreen", "StepPlan", "SuccessCheck", "TargetType", "TaskPlan",
           "to_jsonable"]

BBox = tuple[int, int, int, int]


class LocateStrategy(enum.StrEnum):
    OPENCV_ONLY = "opencv_only"   # never calls a model
    AI_ONLY = "ai_only"           # vision model only (debugging)
    OPENCV_FIRST = "opencv_first"  # default: free tiers first, model last


class ExecutionLevel(int, enum.Enum):
    FIRE_AND_FORGET = 0     # launch_app, open_url, go_home, wait, press_key: no look needed
    QUICK_VERIFY = 1        # swipe: direction known, cheap check
    LOCATE_AND_EXECUTE = 2  # tap/input on a free target (text:, id:, reference name)
    FULL_AI = 3             # dynamic: targets, model locate + model verify


class SuggestionAction(enum.StrEnum):
    CONTINUE = "continue"
    RETRY = "retry"
    SKIP = "skip"
    WAIT = "wait"
    DISMISS = "dismiss"
    ABORT = "abort"
    REPLAN = "replan"


class BlockerType(enum.StrEnum):
    NONE = "none"
    POPUP = "popup"
    DIALOG = "dialog"
    PERMISSION = "permission"
    AD = "ad"
    ERROR = "error"
    LOADING = "loading"
    KEYBOARD = "keyboard"
    UNKNOWN = "unknown"


class StepOutcome(enum.StrEnum):
    """What a before/after comparison says happened (the verifier's classification)."""

    SUCCEEDED = "succeeded"
    WRONG_PAGE = "wrong_page"
    NO_CHANGE = "no_change"
    UNKNOWN = "unknown"


class TaskStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    ABORTED = "aborted"
    BUDGET_EXCEEDED = "budget_exceeded"
    PLANNED = "planned"          # --dry-run: the plan is valid and nothing was done on the phone
    UNCHECKED = "unchecked"      # every step ran and was verified, but the template declares no final check (exit 1)


class StepStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    SKIPPED = "skipped"
    NOT_CHECKED = "not_checked"   # --dry-run: the step needs a screen that only an earlier step would show


def _transient() -> Any:
    """A field kept in memory (screenshots) but not written by to_dict()."""
    return field(default=None, repr=False, compare=False, metadata={"transient": True})


@dataclass
class UIElement:
    """An element found on the screen. `bbox` is in device pixels, right/bottom exclusive."""

    element_type: str = ""
    description: str = ""
    bbox: BBox = (0, 0, 0, 0)
    confidence: float = 0.0
    center: tuple[int, int] = (0, 0)
    visible_region: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.center == (0, 0) and self.bbox != (0, 0, 0, 0):
            x1, y1, x2, y2 = self.bbox
            self.center = ((x1 + x2) // 2, (y1 + y2) // 2)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        return out


@dataclass
class LocateResult:
    success: bool
    element: UIElement | None = None
    method_used: str = ""
    candidates: list[UIElement] = field(default_factory=list)
    error: str = ""
    reliable: bool = True
    elapsed_ms: float = 0.0
    tiers_tried: list[str] = field(default_factory=list)
    failure: LocateFailure | None = None
    matched_ref: str = ""        # which of a step's target_refs was found

    @property
    def center(self) -> tuple[int, int] | None:
        return self.element.center if self.element else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        return out


@dataclass
class ScreenshotMetadata:
    timestamp: float
    width: int
    height: int
    source: str = "adb"          # "adb" | "file" | "sim"
    scale: float = 1.0           # image pixels / device pixels
    elapsed_ms: float = 0.0


@dataclass
class DismissSuggestion:
    action: str                  # tap / press_key / swipe
    target_ref: str | None = None
    description: str = ""
    keycode: int | None = None
    bbox: BBox | None = None     # when known offline (from the UI tree)


@dataclass
class Blocker:
    type: BlockerType
    description: str = ""
    dismiss_suggestion: DismissSuggestion | None = None


@dataclass
class VerifyResult:
    verified: bool
    confidence: float = 0.0
    current_state: str = ""
    matches_expected: bool = False
    screen_changed: bool = False
    change_description: str = ""
    blocker: Blocker | None = None
    suggestion: SuggestionAction = SuggestionAction.CONTINUE
    suggestion_detail: str = ""
    outcome: StepOutcome = StepOutcome.UNKNOWN
    method: str = ""             # "pixel", "tree", "reference", "model"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        return out


@dataclass
class ModelUsage:
    """Model calls of one run (or one step), by purpose: plan, locate, verify."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    by_purpose: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, purpose: str, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.seconds += seconds
        slot = self.by_purpose.setdefault(purpose, {"calls": 0, "prompt_tokens": 0,
                                                    "completion_tokens": 0, "seconds": 0.0})
        slot["calls"] += 1
        slot["prompt_tokens"] += prompt_tokens
        slot["completion_tokens"] += completion_tokens
        slot["seconds"] += seconds

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def snapshot(self) -> ModelUsage:
        return ModelUsage(self.calls, self.prompt_tokens, self.completion_tokens, self.seconds,
                          {k: dict(v) for k, v in self.by_purpose.items()})

    def since(self, earlier: ModelUsage) -> ModelUsage:
        """Usage added after `earlier` was taken (for per-step accounting)."""
        out = ModelUsage(self.calls - earlier.calls, self.prompt_tokens - earlier.prompt_tokens,
                         self.completion_tokens - earlier.completion_tokens, self.seconds - earlier.seconds)
        for purpose, slot in self.by_purpose.items():
            before = earlier.by_purpose.get(purpose, {})
            diff = {k: v - before.get(k, 0) for k, v in slot.items()}
            if diff["calls"]:
                out.by_purpose[purpose] = diff
        return out


@dataclass
class CheckItem:
    """One clause of a final check and what the final screen showed for it."""

    what: str                    # "text 你好 on the screen"
    passed: bool | None          # None: nothing could tell (secure screen, no tree, no OCR, no model)
    evidence: str = ""           # "node TextView '你好' at (120, 800, 300, 860)"
    method: str = ""             # tree | ocr | locate:<tier> | device | model


@dataclass
class FinalCheckResult:
    passed: bool | None
    items: list[CheckItem] = field(default_factory=list)
    summary: str = ""
    method: str = ""             # how the verdict was reached, for the summary line

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        return out


@dataclass
class Look:
    """One look of a flow step at the screen, kept so that ``remote replay`` can decide it again offline.

    ``kind``: visible | not_visible | checked | not_checked | app | version | extract; ``seen`` what it
    found (None: nothing could tell); ``value`` what an extract read; ``image``/``xml`` the screen's files
    in the run record (set by the recorder)."""

    kind: str
    target: str
    seen: bool | None
    evidence: str = ""
    method: str = ""
    value: Any = None
    image: str = ""
    xml: str = ""


@dataclass
class StepResult:
    step: StepPlan
    status: StepStatus = StepStatus.PENDING
    start_time: float = 0.0
    end_time: float = 0.0
    retry_count: int = 0
    error_message: str = ""
    screenshot_before: Any = _transient()
    screenshot_after: Any = _transient()
    verify_result: VerifyResult | None = None
    locate_result: LocateResult | None = None
    tap_point: tuple[int, int] | None = None
    model_usage: ModelUsage = field(default_factory=ModelUsage)
    timings: dict[str, float] = field(default_factory=dict)   # ms by phase: locate, act, wait, verify
    notes: list[str] = field(default_factory=list)
    level: int = 0                                            # ExecutionLevel of the step
    artifacts: dict[str, str] = field(default_factory=dict)   # files in the run record: before/after png, xml
    failure: FailureReason | None = None
    abort: bool = False           # the task must stop here (not confirmed, nobody to take over, gave up)
    popups: list[dict[str, Any]] = field(default_factory=list)  # what was dismissed: {"type", "description", "image"}
    popup_screens: list[Any] = field(default_factory=list, repr=False, compare=False,
                                     metadata={"transient": True})  # the screens the popups were seen on
    looks: list[Look] = field(default_factory=list)     # what a flow step saw (its when, waits, reads)
    look_screens: list[Any] = field(default_factory=list, repr=False, compare=False,
                                    metadata={"transient": True})   # the screen of each look (None: not kept)

    @property
    def elapsed(self) -> float:
        return max(0.0, self.end_time - self.start_time)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        return out


@dataclass
class TaskResult:
    status: TaskStatus = TaskStatus.PENDING
    plan: TaskPlan | None = None
    step_results: list[StepResult] = field(default_factory=list)
    total_time: float = 0.0
    error_message: str = ""
    task: str = ""
    module: str = ""
    model_usage: ModelUsage = field(default_factory=ModelUsage)
    record_dir: str = ""
    error_type: str = ""         # the exception class that ended the task, e.g. DeviceDisconnected
    failure: FailureReason | None = None
    final_check: FinalCheckResult | None = None
    answer: Any = None           # what a question task answers (its plan's answer:), typed: str, number, bool, list
    steps_planned: int = 0       # steps run and steps still queued (the plan as it stands after replans)
    record_error: str = ""       # the run record could not be written (a full disk): the outcome still stands
    learning: dict[str, Any] = field(default_factory=dict)   # a learned task replayed, or one learned from this run

    @property
    def plan_source(self) -> str | None:
        """Where the plan came from: ``template``, ``learned`` or ``model`` (a replan is the model's too)."""
        if self.plan is None:
            return None
        return "model" if self.plan.source == "replan" else self.plan.source

    @property
    def exit_code(self) -> int:
        """0 success (or a valid dry-run plan), 1 the task failed, 2 the environment failed, 130 aborted."""
        if self.status in (TaskStatus.SUCCESS, TaskStatus.PLANNED):
            return ExitCode.OK
        if self.status is TaskStatus.ABORTED:
            return ExitCode.ABORTED
        return ExitCode.ENVIRONMENT if self.failure is not None and self.failure.environment else ExitCode.FAILED

    @property
    def success(self) -> bool:
        return self.status is TaskStatus.SUCCESS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_jsonable(self)
        return out
