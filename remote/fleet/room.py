"""The phones of one host and which of them is busy or gone: what a task placed on the host leases from.

Ray places a task on a host by resources (``phone:SERIAL`` for a pinned task, one
unit of the host's pool for any task); Ray cannot say "any one of these
resources", so the host's room hands the task a free phone. Pinned tasks wait
for their phone; a task for any phone never gets a phone that went away.

    room = Room([Phone("A"), Phone("B")])
    phone = room.lease(None, timeout=30)      # a free phone (None if none frees up in time)
    room.release(phone.serial, gone=False)
"""

from __future__ import annotations

import threading
import time

from remote.fleet.jobs import Phone


class Room:
    """Thread-safe lease table of one host's phones."""

    def __init__(self, phones: list[Phone]) -> None:
        self.phones = {p.serial: p for p in phones}
        self.busy: set[str] = set()
        self.gone: set[str] = set()
        self._cond = threading.Condition()

    def _free(self, serial: str | None) -> str | None:
        if serial is not None:
            return serial if serial in self.phones and serial not in self.busy else None
        return next((s for s in self.phones if s not in self.busy and s not in self.gone), None)

    def lease(self, serial: str | None, timeout: float) -> Phone | None:
        """The phone ``serial`` (even when gone: the run then fails with its record), or any live free phone.

        None when it is not this host's, or nothing frees up within ``timeout`` seconds.
        """
        if serial is not None and serial not in self.phones:
            return None
        deadline = time.monotonic() + timeout
        with self._cond:
            while (found := self._free(serial)) is None:
                left = deadline - time.monotonic()
                if left <= 0 or (serial is None and len(self.gone) == len(self.phones)):
                    return None
                self._cond.wait(left)
            self.busy.add(found)
            return self.phones[found]

    def release(self, serial: str, gone: bool = False) -> bool:
        """Free the phone; True when it has just been found gone (taken out of the pool)."""
        with self._cond:
            self.busy.discard(serial)
            newly = gone and serial not in self.gone
            if gone:
                self.gone.add(serial)
            self._cond.notify_all()
            return newly

    def state(self) -> dict[str, list[str]]:
        with self._cond:
            return {"phones": sorted(self.phones), "busy": sorted(self.busy), "gone": sorted(self.gone)}
