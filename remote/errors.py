"""One exception tree for the whole product.

::

    RemoteError                      anything `remote` raises on purpose
    ├── ConfigError                  bad or missing configuration (no model, broken YAML, bad .env value)
    │   ├── ModelNotConfigured       a model is needed and no key/URL is set
    │   └── BadInput                 a file or argument given on the command line is unusable
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
    │   └── DeviceCommandError       a shell command answered with an error
    ├── ActionError                  an action's arguments are impossible (off-screen tap, bad key name)
    ├── LocateError                  the world did not match: target absent, ambiguous or off screen
    ├── ModelError                   a model call failed or its reply stayed unusable (carries `raw`)
    │   └── ModelUnreachable         no connection to the model's server (the environment: exit status 2)
    └── TaskError                    the task could not be planned or run (caps, aborted, ...)
        └── BudgetExceeded           the task spent its budget of model calls or tokens

Exit codes, the same for every command (README's table): 0 success, 1 the task or check
failed (target not found, ambiguous, decisions changed on replay), 2 the environment,
configuration or usage failed (no device, no model configured, bad config or arguments, a phone
another process drives), 130 aborted (Ctrl-C or SIGTERM). Each error class carries its own (``exit_code``).

Rule of thumb: "the device broke" is a `DeviceError`, "the UI didn't match" is a
`LocateError`. Errors carry fields (`serial`, `raw`, `path`, `line`) so callers and
the run record can show them without parsing messages.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Sequence


class ExitCode(enum.IntEnum):
    OK = 0
    FAILED = 1
    ENVIRONMENT = 2
    ABORTED = 130


class RemoteError(Exception):
    """Base of every error `remote` raises on purpose. `hint` says what to do."""

    exit_code = ExitCode.FAILED

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(RemoteError):
    """Configuration is missing or invalid. `path`/`line` point at the file when there is one."""

    exit_code = ExitCode.ENVIRONMENT

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, hint: str = "") -> None:
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(where + message, hint=hint)
        self.path = path
        self.line = line
        self.reason = message   # without the file and line (for a caller that shows those itself)

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


class DeviceCommandError(DeviceError):
    def __init__(self, message: str, *, command: str = "", output: str = "", serial: str | None = None,
                 hint: str = "") -> None:
        super().__init__(message, serial=serial, hint=hint)
        self.command = command
        self.output = output


class ActionError(RemoteError):
    """An action was asked with impossible arguments: off-screen point, unknown key, empty package."""


class LocateError(RemoteError):
    """The target could not be found (or not safely): absent, ambiguous, not interactable."""

    def __init__(self, message: str, *, target_ref: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.target_ref = target_ref


class ModelError(RemoteError):
    """A model call failed or its reply stayed unusable. `raw` keeps the reply for the record."""

    def __init__(self, message: str, *, raw: str = "", purpose: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.raw = raw
        self.purpose = purpose


class ModelUnreachable(ModelError):
    """The model's server could not be reached at all: the environment failed, not the task."""

    exit_code = ExitCode.ENVIRONMENT


class TaskError(RemoteError):
    """A task could not be planned or completed (budget spent, aborted, no plan)."""


class BudgetExceeded(TaskError):
    """The task spent its model budget (``--max-model-calls`` / ``--max-tokens``)."""


def did_you_mean(word: str, known: Iterable[str], what: str = "keys") -> str:
    """A hint for a misspelled key or name: ``did you mean 'wait_after'?``, else the known ones."""
    known = tuple(known)
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"known {what}: {', '.join(known)}"
