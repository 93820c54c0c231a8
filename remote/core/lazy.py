"""What is built once per process on first use, or why it could not be built."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """A value built once per process on first use (an OCR engine: ~1 s), thread-safe; ``build`` raising one
    of ``errors`` leaves the reason instead (``describe``, given once to ``log``) and :meth:`get` None."""

    def __init__(self, build: Callable[[], T], errors: tuple[type[Exception], ...],
                 describe: Callable[[Exception], str], log: Callable[[str], None]) -> None:
        self._build, self._errors, self._describe, self._log = build, errors, describe, log
        self._value: T | None = None
        self.error: str | None = None
        self._lock = threading.Lock()

    def get(self) -> T | None:
        if self._value is not None or self.error is not None:
            return self._value
        with self._lock:
            if self._value is None and self.error is None:
                try:
                    self._value = self._build()
                except self._errors as exc:
                    self.error = self._describe(exc)
                    self._log(self.error)
        return self._value

    def reset(self) -> None:
        """Forget the value (and a failure to build it): the next use builds it again."""
        with self._lock:
            self._value, self.error = None, None
