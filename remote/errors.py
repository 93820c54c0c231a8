"""One exception tree for the whole product.

::

    RemoteError                      anything `remote` raises on purpose
    ├── ConfigError                  bad or missing configuration (no model, broken YAML, bad .env value)
    │   ├── ModelNotConfigured       a model is needed and no key/URL is set
    │   ├── BadInput                 a file or argument given on the command line is unusable
    │   └── PromptError              a prompt template is missing or its placeholders and values disagree (ai)
    ├── DeviceError                  the phone or the ADB link broke
    │   ├── DeviceNotFound           no such serial / no device at all
    │   │   └── DeviceNotReady       listed, but not usable: unauthorized, offline, no permissions (`state`)
    │   ├── DeviceBusy               another process is driving this phone (its lock is held)
    │   ├── DeviceDisconnected       the link dropped and a bounded reconnect did not bring it back
    │   ├── InputMethodMissing       ADBKeyboard is needed (non-ASCII text) and not installed or not usable
    │   ├── PhoneRefused             the phone refused a command: a switch of its ROM is off (`permission`, `rom`)
    │   │   ├── InputInjectionRefused    taps, swipes, keys and `input text` refused (INJECT_EVENTS)
    │   │   └── InputMethodPermission    switching the keyboard refused (WRITE_SECURE_SETTINGS)
    │   ├── SecureScreen             the screenshot is black/uniform (FLAG_SECURE window or capture failure)
    │   ├── ScreenLocked             the keyguard asks for a PIN, pattern or password (never typed for you)
    │   └── DeviceCommandError       a shell command answered with an error
    │       └── DumpFailed           `uiautomator dump` failed after its retries (steps degrade to the screenshot)
    ├── ActionError                  an action's arguments are impossible (off-screen tap, bad key name)
    ├── LocateError                  the world did not match: `failure` (absent, ambiguous, off screen), `candidates`
    ├── InvalidPlan                  a plan or a step's arguments cannot be used (also a ValueError)
    │   ├── PlanError                a plan or template step (core.plan.schema; `problems`)
    │   └── ArgsError                one step's arguments (core.plan.actions; `problems`)
    ├── ReplyError                   a model's reply holds nothing usable (ai.answers; also a ValueError)
    ├── ReadError                    a text read off the screen is not a value of the wanted type (core.plan.values)
    ├── ModelError                   a model call failed or its reply stayed unusable (carries `raw`)
    │   └── ModelUnreachable         no connection to the model's server (the environment: exit status 2)
    └── TaskError                    the task could not be planned or run (caps, aborted, ...)
        ├── BudgetExceeded           the task spent its budget of model calls or tokens
        └── StepCapReached, TimeCapReached, Interrupted, AppMissing (runner)

Exit codes, the same for every command (README's table): 0 success, 1 the task or check
failed (target not found, ambiguous, decisions changed on replay), 2 the environment,
configuration or usage failed (no device, no model configured, bad config or arguments, a phone
another process drives), 130 aborted (Ctrl-C or SIGTERM). Each error class carries its own (``exit_code``)
and the `FailureReason` a run that it ends is recorded with (``reason``), so a caller reads both from the
error, never from a table of classes or the words of its message.

Rule of thumb: "the device broke" is a `DeviceError`, "the UI didn't match" is a
`LocateError`. Errors carry fields (`serial`, `raw`, `path`, `line`) so callers and
the run record can show them without parsing messages.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Sequence

BBox = tuple[int, int, int, int]


class ExitCode(enum.IntEnum):
    OK = 0
    FAILED = 1
    ENVIRONMENT = 2
    ABORTED = 130


class LocateFailure(enum.StrEnum):
    """Why a locate found nothing usable."""

    NOT_FOUND = "not_found"
    AMBIGUOUS = "ambiguous"               # several places match nearly as well: never a coin toss
    NOT_INTERACTABLE = "not_interactable"  # found, but off screen or too little of it visible
    BAD_INPUT = "bad_input"               # an unusable target_ref or reference image
    UNAVAILABLE = "unavailable"           # a tier the target needs cannot run here (a broken OCR install)

    @property
    def reason(self) -> FailureReason:
        """What a step or run that this locate failure ends failed of (a broken tier: the configuration)."""
        return _LOCATE_REASONS.get(self, FailureReason.NOT_FOUND)


class FailureReason(enum.StrEnum):
    """Why a step or a task failed: the runner decides on these, never on message text."""

    NOT_FOUND = "not_found"
    AMBIGUOUS = "ambiguous"
    NOT_INTERACTABLE = "not_interactable"
    NO_CHANGE = "no_change"
    WRONG_PAGE = "wrong_page"
    TEXT_NOT_TYPED = "text_not_typed"
    NOT_CONFIRMED = "not_confirmed"       # a sensitive step nobody allowed
    NO_PERSON = "no_person"               # take_over with nobody to take over
    FAILURE_SCREEN = "failure_screen"     # the module's declared failure screen (e.g. no such contact)
    APP_MISSING = "app_missing"
    GAVE_UP = "gave_up"                   # the plan's finish says the task cannot be done
    FINAL_CHECK = "final_check"           # every step ran, the finished screen is not what the plan promised
    INVALID_PLAN = "invalid_plan"
    STEP_CAP = "step_cap"
    TIME_CAP = "time_cap"
    BUDGET = "budget"
    INTERRUPTED = "interrupted"
    DEVICE = "device"                     # the phone or the ADB link broke
    CONFIG = "config"                     # no model configured, bad configuration
    MODEL = "model"                       # a model call failed
    MODEL_UNREACHABLE = "model_unreachable"   # no connection to the model's server (the environment's failure)
    INTERNAL = "internal"                 # a bug of ours
    ASSERTION = "assertion"               # an assert_visible / assert_not_visible (or a sub-task's check) did not hold
    TIMEOUT = "timeout"                   # a wait_until's condition never came true within its timeout_ms
    NOT_READ = "not_read"                 # an extract found nothing it could read as its type

    @property
    def environment(self) -> bool:
        """The environment failed, not the task (exit status 2)."""
        return self in (FailureReason.DEVICE, FailureReason.CONFIG, FailureReason.MODEL_UNREACHABLE)


_LOCATE_REASONS = {LocateFailure.AMBIGUOUS: FailureReason.AMBIGUOUS,
                   LocateFailure.NOT_INTERACTABLE: FailureReason.NOT_INTERACTABLE,
                   LocateFailure.UNAVAILABLE: FailureReason.CONFIG}


class RemoteError(Exception):
    """Base of every error `remote` raises on purpose. `hint` says what to do."""

    exit_code = ExitCode.FAILED
    reason = FailureReason.INVALID_PLAN   # what a run it ends failed of; the plan asked for the impossible

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(RemoteError):
    """Configuration is missing or invalid. `path`/`line` point at the file when there is one."""

    exit_code = ExitCode.ENVIRONMENT
    reason = FailureReason.CONFIG

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, hint: str = "") -> None:
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(where + message, hint=hint)
        self.path = path
        self.line = line
        self.problem = message   # without the file and line (for a caller that shows those itself)

    @classmethod
    def several(cls, problems: Sequence[ConfigError], what: str) -> ConfigError:
        """One error for every problem of one file, each on its own line with its file, line and hint."""
        if len(problems) == 1:
            return problems[0]
        listed = "\n".join(f"  {p}" for p in sorted(problems, key=lambda p: (p.path or "", p.line or 0)))
        return cls(f"{len(problems)} problems in the {what}:\n{listed}")


class ModelNotConfigured(ConfigError):
    """A model is needed but none is configured; the message names the variable to set."""


class BadInput(ConfigError):
    """A file or argument named on the command line is missing, unreadable or too large (exit status 2)."""


class DeviceError(RemoteError):
    """The phone or the ADB connection failed."""

    exit_code = ExitCode.ENVIRONMENT
    reason = FailureReason.DEVICE

    def __init__(self, message: str, *, serial: str | None = None, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.serial = serial


class DeviceNotFound(DeviceError):
    pass


class DeviceNotReady(DeviceNotFound):
    """The adb server lists the phone in a state other than ``device`` (unauthorized, offline, no permissions)."""

    def __init__(self, message: str, *, state: str, serial: str | None = None, hint: str = "") -> None:
        super().__init__(message, serial=serial, hint=hint)
        self.state = state


class DeviceDisconnected(DeviceError):
    pass


class DeviceBusy(DeviceError):
    """Another process holds the phone's lock (``remote.core.device.phone_lock``); the message names it."""


class InputMethodMissing(DeviceError):
    pass


class PhoneRefused(DeviceError):
    """The phone answered a command with a SecurityException: a switch of its ROM is off.

    `permission` is what it lacks (``INJECT_EVENTS``, ``WRITE_SECURE_SETTINGS``), `command` what was refused,
    `rom` the ROM family it runs (``miui``, ``coloros`` ...); the hint names the switch on that ROM.
    """

    def __init__(self, message: str, *, permission: str = "", command: str = "", rom: str = "",
                 output: str = "", serial: str | None = None, hint: str = "") -> None:
        super().__init__(message, serial=serial, hint=hint)
        self.permission = permission
        self.command = command
        self.rom = rom
        self.output = output


class InputInjectionRefused(PhoneRefused):
    """Taps, swipes, keys and ``input text`` are refused (INJECT_EVENTS): nothing can be touched."""


class InputMethodPermission(PhoneRefused):
    """Switching the keyboard is refused (WRITE_SECURE_SETTINGS)."""


class SecureScreen(DeviceError):
    """The captured frame is black or uniform: a secure window (FLAG_SECURE) or a failed capture."""


class FrameGone(DeviceError):
    """A screen read as a tree alone was asked for its pixels after something changed the screen: its frame
    can no longer be taken (a step that may need them takes them before it acts, docs/devices.md "Frames")."""


class DeviceCommandError(DeviceError):
    def __init__(self, message: str, *, command: str = "", output: str = "", serial: str | None = None,
                 hint: str = "") -> None:
        super().__init__(message, serial=serial, hint=hint)
        self.command = command
        self.output = output


class ScreenLocked(DeviceError):
    """The phone's lock screen needs a PIN, pattern or password: `remote` never types one."""


class DumpFailed(DeviceCommandError):
    """`uiautomator dump` failed after its retries: ``kind`` (idle, null_root, killed, registered, no_xml) and
    ``holder`` (the automation tool found holding UiAutomation, if any)."""

    def __init__(self, message: str, *, kind: str, holder: str = "", output: str = "", serial: str | None = None,
                 hint: str = "") -> None:
        super().__init__(message, command="uiautomator dump", output=output, serial=serial, hint=hint)
        self.kind = kind
        self.holder = holder


class ActionError(RemoteError):
    """An action was asked with impossible arguments: off-screen point, unknown key, empty package."""


class LocateError(RemoteError):
    """The target could not be found (or not safely): ``failure`` says which (absent, ambiguous, not
    interactable ...), ``candidates`` the boxes (device pixels) of the places that matched, best first."""

    def __init__(self, message: str, *, target_ref: str = "", failure: LocateFailure = LocateFailure.NOT_FOUND,
                 candidates: Sequence[BBox] = (), hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.target_ref = target_ref
        self.failure = failure
        self.candidates = tuple(candidates)
        self.reason = failure.reason


class ModelError(RemoteError):
    """A model call failed or its reply stayed unusable. `raw` keeps the reply for the record."""

    reason = FailureReason.MODEL

    def __init__(self, message: str, *, raw: str = "", purpose: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.raw = raw
        self.purpose = purpose


class ModelUnreachable(ModelError):
    """The model's server could not be reached at all: the environment failed, not the task."""

    exit_code = ExitCode.ENVIRONMENT
    reason = FailureReason.MODEL_UNREACHABLE


class TaskError(RemoteError):
    """A task could not be planned or completed (budget spent, aborted, no plan)."""


class BudgetExceeded(TaskError):
    """The task spent its model budget (``--max-model-calls`` / ``--max-tokens``)."""

    reason = FailureReason.BUDGET


class InvalidPlan(RemoteError, ValueError):
    """A plan, a step's arguments or a prompt's values that cannot be used (`PlanError`, `ArgsError` ...).

    Still a ValueError: the parsers that raise it are value checks, and their callers catch it as one."""


def did_you_mean(word: str, known: Iterable[str], what: str = "keys") -> str:
    """A hint for a misspelled key or name: ``did you mean 'wait_after'?``, else the known ones."""
    known = tuple(known)
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"known {what}: {', '.join(known)}"
