"""Schedules: fire tasks on cron expressions, and say which runs were missed instead of replaying them.

Fire times come from APScheduler's ``CronTrigger`` (time zones, daylight saving);
this module only waits for the earliest one and hands the due entries to
``fire`` (the command submits them through the same path as a batch). The clock
is injected (``now``, ``wait``), so a test fires "0 8 * * *" without waiting
until 08:00.

Missed runs: a state file remembers, per entry, until when the scheduler was
watching. On start, the fire times between then and now are reported through
``on_missed`` and not run; the same for fire times that passed while a batch was
still running.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from remote.core.safe_files import write_atomic
from remote.fleet.files import ScheduleEntry

logger = logging.getLogger(__name__)

MAX_NAP_S = 60.0        # wake at least this often, so a changed wall clock is noticed
MAX_LISTED = 100        # missed fire times listed per entry
MAX_COUNTED = 1000      # and counted: each costs APScheduler ~12-40 µs, so 100,000 cost 1-3 s per entry at start
TICK = timedelta(microseconds=1)
MAX_STATE_BYTES = 10_000_000


@dataclass(frozen=True)
class Missed:
    entry: ScheduleEntry
    times: list[datetime]
    count: int        # exact up to MAX_COUNTED; ``more`` says there were more than that
    why: str          # "while stopped" or "while busy"
    more: bool = False


Fire = Callable[[list[tuple[ScheduleEntry, datetime]]], None]


def local_now() -> datetime:
    return datetime.now().astimezone()


def fire_times(entry: ScheduleEntry, after: datetime, until: datetime) -> tuple[list[datetime], int, bool]:
    """Fire times in ``(after, until]``: the first ``MAX_LISTED`` of them, how many (up to ``MAX_COUNTED``),
    and whether there were more than that."""
    listed: list[datetime] = []
    count = 0
    if after >= until:       # nothing between (and no ``after + TICK`` past year 9999)
        return listed, count, False
    t = entry.trigger.get_next_fire_time(None, after + TICK)
    while t is not None and t <= until:
        if count == MAX_COUNTED:
            return listed, count, True
        count += 1
        if len(listed) < MAX_LISTED:
            listed.append(t)
        t = entry.trigger.get_next_fire_time(None, t + TICK) if t < until else None
    return listed, count, False


class StateFile:
    """``{"watched_until": {entry key: ISO time}}``, written whole (write then rename)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def load(self) -> dict[str, datetime]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            if self.path.stat().st_size > MAX_STATE_BYTES:
                raise ValueError(f"larger than {MAX_STATE_BYTES // 1000} kB")
            data = json.loads(self.path.read_text(encoding="utf-8"))
            watched = {str(k): datetime.fromisoformat(v) for k, v in data.get("watched_until", {}).items()}
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            logger.warning("schedule state %s unreadable (%s): missed runs cannot be told this time", self.path, exc)
            return {}
        naive = [k for k, t in watched.items() if t.tzinfo is None]
        if naive:   # remote writes times with their offset; one without cannot be compared: not ours
            logger.warning("schedule state %s: %d time(s) without a UTC offset ignored", self.path, len(naive))
        return {k: t for k, t in watched.items() if t.tzinfo is not None}

    def save(self, watched: dict[str, datetime]) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps({"watched_until": {k: v.isoformat() for k, v in watched.items()}},
                                           indent=1))


class Scheduler:
    """``Scheduler(entries, fire, state_path=...).run()`` until :meth:`stop` (or ``max_fires``)."""

    def __init__(self, entries: list[ScheduleEntry], fire: Fire, *, state_path: Path | None = None,
                 on_missed: Callable[[Missed], None] | None = None,
                 now: Callable[[], datetime] = local_now, wait: Callable[[float], bool] | None = None) -> None:
        self.entries = entries
        self.fire = fire
        self.state = StateFile(state_path)
        self.on_missed = on_missed or (lambda missed: None)
        self.now = now
        self._stop = threading.Event()
        self.wait = wait or self._stop.wait
        self.fired = 0

    def stop(self) -> None:
        self._stop.set()

    def report_missed(self, now: datetime) -> list[Missed]:
        """Fire times passed while no scheduler watched (from the state file); reported, never run."""
        watched = self.state.load()
        out = []
        for entry in self.entries:
            since = watched.get(entry.key)
            if since is None:
                continue
            if since > now:
                logger.warning("schedule state: %r was watched until %s, later than now (the clock went back, or "
                               "the file was edited): its missed runs cannot be told", entry.key, since.isoformat())
                continue
            listed, count, more = fire_times(entry, since, now)
            if count:
                out.append(Missed(entry, listed, count, "while stopped", more))
        for missed in out:
            self.on_missed(missed)
        return out

    def _save(self, now: datetime) -> None:
        watched = self.state.load()
        watched.update({e.key: now for e in self.entries})
        self.state.save(watched)

    def run(self, max_fires: int | None = None) -> int:
        """Wait and fire until stopped; returns how many times ``fire`` was called."""
        now = self.now()
        self.report_missed(now)
        self._save(now)
        upcoming = {i: e.trigger.get_next_fire_time(None, now) for i, e in enumerate(self.entries)}
        try:
            while not self._stop.is_set() and (max_fires is None or self.fired < max_fires):
                times = [t for t in upcoming.values() if t is not None]
                if not times:
                    logger.info("no entry of the schedule fires again")
                    return self.fired
                delay = (min(times) - self.now()).total_seconds()
                if delay > 0:
                    if self.wait(min(delay, MAX_NAP_S)):
                        break
                    continue
                upcoming = self._fire_due(upcoming)
        finally:
            self._save(self.now())
        return self.fired

    def _fire_due(self, upcoming: dict[int, datetime | None]) -> dict[int, datetime | None]:
        now = self.now()
        due = [(i, t) for i, t in upcoming.items() if t is not None and t <= now]
        self.fired += 1
        self.fire([(self.entries[i], t) for i, t in due])
        after = self.now()
        for i, t in due:   # fire times that passed while the batch ran are reported, not queued up
            listed, count, more = fire_times(self.entries[i], t, after)
            if count:
                self.on_missed(Missed(self.entries[i], listed, count, "while busy", more))
        self._save(after)
        return {i: (self.entries[i].trigger.get_next_fire_time(None, after + TICK) if i in dict(due) else t)
                for i, t in upcoming.items()}
