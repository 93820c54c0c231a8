"""Batch and schedule files: YAML lists, checked entry by entry with the file and line of any problem.

A batch file (``remote batch FILE``)::

    - task: 打开设置
      device: any          # any free phone (the default); a serial pins it; `all` = once on every phone
      repeat: 3            # three jobs (default 1)
    - task: 给张三发微信消息说你好
      device: emulator-5556

A schedule file (``remote schedule FILE``)::

    - cron: "0 8 * * *"    # minute hour day-of-month month day-of-week (crontab order), local time
      task: 打开设置
      device: all

Either takes ``env:`` per entry, the slots a template needs and the sentence does not say (as ``-e``)::

    - task: 发早安消息
      env: {contact: 张三}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml
from apscheduler.triggers.cron import CronTrigger

from remote.apps import check_task
from remote.core.plan.values import env_entry
from remote.errors import ConfigError, did_you_mean
from remote.fleet.jobs import ALL, ANY, Job
from remote.yamlfile import line_of, line_of_key, load_yaml

MAX_REPEAT = 1000
MAX_JOBS = 10_000
BATCH_KEYS = {"task", "device", "repeat", "env"}
SCHEDULE_KEYS = {"cron", "task", "device", "timezone", "env"}
MAX_ENV = 50


@dataclass(frozen=True)
class BatchEntry:
    """One entry of a batch file; ``device`` may be ``all`` (expanded over the phones when the batch starts)."""

    task: str
    device: str
    repeat: int
    line: int | None
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ScheduleEntry:
    cron: str
    task: str
    device: str
    line: int | None
    trigger: CronTrigger
    env: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """Names the entry in the schedule's state file (what ran when)."""
        return f"{self.cron} | {self.device} | {self.task}"


def _entries(path: Path, keys: set[str], what: str,
             problems: list[ConfigError]) -> list[tuple[dict[str, Any], int | None]]:
    """The file's entries that are mappings; each unknown key and each entry that is not a mapping is added to
    ``problems`` (so that every problem of the file is said at once)."""
    data = load_yaml(path)
    if data is None:
        raise ConfigError(f"the {what} file is empty", path=str(path), hint="write a list: - task: 打开设置")
    if not isinstance(data, list):
        raise ConfigError(f"a {what} file is a list of entries (- task: ...), not a {type(data).__name__}",
                          path=str(path), line=line_of(data, 1))
    out = []
    for i, entry in enumerate(data, 1):
        line = line_of(entry)
        if not isinstance(entry, dict):
            problems.append(ConfigError(f"entry {i} is not a mapping (task: ..., device: ...)", path=str(path),
                                        line=_item_line(path, i - 1)))
            continue
        unknown = [key for key in entry if key not in keys]
        problems += [ConfigError(f"unknown key {str(key)[:40]!r} in entry {i}", path=str(path),
                                 line=line_of_key(entry, key), hint=did_you_mean(str(key), sorted(keys)))
                     for key in unknown]
        if not unknown:
            out.append((entry, line))
    return out


def _item_line(path: Path, index: int) -> int | None:
    """The line of a list item that is not a mapping (only mappings remember their line when loaded)."""
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return None
    if isinstance(node, yaml.SequenceNode) and index < len(node.value):
        return int(node.value[index].start_mark.line) + 1
    return None


def _text(entry: dict[str, Any], key: str, path: Path, line: int | None, default: str | None = None) -> str:
    value = entry.get(key, default)
    if value is None:
        raise ConfigError(f"entry without {key!r}", path=str(path), line=line)
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise ConfigError(f"{key} must be text, not {value!r}", path=str(path), line=line_of_key(entry, key))
    return str(value).strip()


def _task(entry: dict[str, Any], path: Path, line: int | None) -> str:
    task = _text(entry, "task", path, line)
    try:
        check_task(task)
    except ConfigError as exc:
        raise ConfigError(exc.message, path=str(path), line=line_of_key(entry, "task") or line,
                          hint=exc.hint) from exc
    return task


def _device(entry: dict[str, Any], path: Path, line: int | None) -> str:
    device = _text(entry, "device", path, line, default=ANY)
    if not device or any(c.isspace() for c in device):
        raise ConfigError(f"device must be a serial, 'any' or 'all', not {device!r}", path=str(path),
                          line=line_of_key(entry, "device"))
    return device


def _env(entry: dict[str, Any], path: Path) -> tuple[tuple[str, str], ...]:
    """``env: {contact: 张三}``: the entry's -e values."""
    value = entry.get("env")
    if value is None:
        return ()
    if not isinstance(value, dict) or len(value) > MAX_ENV:
        raise ConfigError(f"env must map slot names to values (env: {{contact: 张三}}; at most {MAX_ENV})",
                          path=str(path), line=line_of_key(entry, "env"))
    out = []
    for key, item in value.items():
        try:
            out.append(env_entry(key, item))
        except ValueError as exc:
            raise ConfigError(f"env: {exc}", path=str(path), line=line_of_key(value, key) or
                              line_of_key(entry, "env")) from exc
    return tuple(out)


def load_batch(path: Path) -> list[BatchEntry]:
    """The entries of a batch file, in order; a ConfigError listing every problem (file:line each)."""
    out: list[BatchEntry] = []
    problems: list[ConfigError] = []
    total = 0
    for entry, line in _entries(path, BATCH_KEYS, "batch", problems):
        try:
            repeat = entry.get("repeat", 1)
            if not isinstance(repeat, int) or isinstance(repeat, bool) or not 1 <= repeat <= MAX_REPEAT:
                raise ConfigError(f"repeat must be a whole number from 1 to {MAX_REPEAT}, not {repeat!r}",
                                  path=str(path), line=line_of_key(entry, "repeat"))
            total += repeat
            if total > MAX_JOBS:
                raise ConfigError(f"more than {MAX_JOBS} jobs in one batch", path=str(path), line=line,
                                  hint="split the file")
            out.append(BatchEntry(_task(entry, path, line), _device(entry, path, line), repeat, line,
                                  _env(entry, path)))
        except ConfigError as exc:
            problems.append(exc)
    if problems:
        raise ConfigError.several(problems, "batch file")
    return out


def expand(entries: list[BatchEntry], serials: list[str]) -> list[Job]:
    """Jobs in file order: ``repeat`` copies of each entry, ``all`` as one job pinned to each phone."""
    jobs: list[Job] = []
    for entry in entries:
        for _ in range(entry.repeat):
            targets = serials if entry.device == ALL else [entry.device]
            jobs += [Job(task=entry.task, device=d, index=len(jobs) + i, line=entry.line, env=entry.env)
                     for i, d in enumerate(targets)]
    return jobs


def _timezone(entry: dict[str, Any], path: Path) -> ZoneInfo | None:
    """The entry's ``timezone`` (an IANA name such as Asia/Shanghai), None for this host's local time."""
    if "timezone" not in entry:
        return None
    name, line = entry["timezone"], line_of_key(entry, "timezone")
    hint = "an IANA time zone name such as Asia/Shanghai or UTC; leave it out for this host's time"
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"timezone must be a time zone name, not {str(name)[:40]!r}", path=str(path), line=line,
                          hint=hint)
    try:
        return ZoneInfo(name.strip())
    except (ValueError, LookupError) as exc:   # unknown, or not a name at all ("../x", "+08:00")
        raise ConfigError(f"unknown time zone {name[:40]!r}", path=str(path), line=line, hint=hint) from exc


def load_schedule(path: Path) -> list[ScheduleEntry]:
    """The entries of a schedule file; a bad cron expression is a ConfigError naming its line."""
    out: list[ScheduleEntry] = []
    problems: list[ConfigError] = []
    entries = _entries(path, SCHEDULE_KEYS, "schedule", problems)
    if problems:
        raise ConfigError.several(problems, "schedule file")
    for entry, line in entries:
        cron = _text(entry, "cron", path, line)
        timezone = _timezone(entry, path)
        try:
            trigger = CronTrigger.from_crontab(cron, timezone=timezone)
        except ValueError as exc:   # a bad field
            raise ConfigError(f"bad cron expression {cron!r}: {exc}", path=str(path),
                              line=line_of_key(entry, "cron"),
                              hint='five fields: minute hour day month weekday, e.g. "0 8 * * *"') from exc
        device = _device(entry, path, line)
        out.append(ScheduleEntry(cron, _task(entry, path, line), device, line, trigger, _env(entry, path)))
    return out
