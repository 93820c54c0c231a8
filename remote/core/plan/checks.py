"""A plan's final check, in one grammar for templates and models (pure).

Every plan says what the finished task looks like; the runner checks it on the
final screen (UI tree, then OCR; the verifier model only when both are silent)
and the task is SUCCESS only when it holds::

    success_check:
      app: com.tencent.mm              # this package is in front
      text: 你好                        # text on the screen (a node's whole text, or an OCR line); a list for several
      target: "desc:发送"               # target_refs that must be found (free tiers)
      absent: [没有找到, "text:重试"]     # texts or target_refs that must NOT be on the screen
      toggle: {target: "text:WLAN", state: "on"}   # a switch's state; a list for several
      page: {url: "https://example.com", bar: "id:com.android.chrome:id/url_bar"}
                                       # a browser shows this URL's page: its address bar shows the host
      volume: up                       # the media volume is above the level the task began at (or at its
                                       # maximum); down: below it (or at 0). Read from the phone, not the screen
      changed: true                    # the screen in front is not the one the task began on (another
                                       # window, or other texts in the UI tree): what "back" can promise

``checked: "text:WLAN"`` is short for ``toggle: {target: "text:WLAN", state: on}``.
Unknown keys are errors (a misspelled ``txt:`` must not silently turn the check off).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from remote.core.plan.actions import ArgsError

KEYS = ("app", "text", "target", "absent", "toggle", "checked", "page", "volume", "changed")
VOLUME_WAYS = ("up", "down")
TARGET_PREFIXES = ("text:", "desc:", "id:", "editable:", "role:", "dynamic:", "xy:", "fixed:")


@dataclass(frozen=True)
class ToggleCheck:
    target: str
    on: bool


@dataclass(frozen=True)
class PageCheck:
    """The browser shows ``url``'s page: the address bar (``bar``, a target_ref) shows that host."""

    url: str
    bar: str


@dataclass(frozen=True)
class FailureScreen:
    """A screen that means the task cannot succeed, and what to say then (a module's ``failures:``).

    ``text`` is found as part of any text on the screen (``没有找到`` in "没有找到'李雷'相关结果");
    ``target`` is a target_ref located by the free tiers.
    """

    says: str
    text: str | None = None
    target: str | None = None


@dataclass(frozen=True)
class SuccessCheck:
    app: str | None = None
    text: tuple[str, ...] = ()
    target: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    toggle: tuple[ToggleCheck, ...] = ()
    page: PageCheck | None = None
    volume: str | None = None        # "up" | "down": compared with the level when the task began
    changed: bool = False            # the screen is not the one the task began on

    def __bool__(self) -> bool:
        return bool(self.app or self.text or self.target or self.absent or self.toggle or self.page or self.volume
                    or self.changed)

    @property
    def needs_start(self) -> bool:
        """Does a clause compare with the phone as the task began (`FinalChecker.begin` reads it then)?"""
        return bool(self.volume or self.changed)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.app:
            out["app"] = self.app
        for name in ("text", "target", "absent"):
            values = getattr(self, name)
            if values:
                out[name] = values[0] if len(values) == 1 else list(values)
        if self.toggle:
            items = [{"target": t.target, "state": "on" if t.on else "off"} for t in self.toggle]
            out["toggle"] = items[0] if len(items) == 1 else items
        if self.page:
            out["page"] = {"url": self.page.url, "bar": self.page.bar}
        if self.volume:
            out["volume"] = self.volume
        if self.changed:
            out["changed"] = True
        return out

    def describe(self) -> str:
        """One line for people: ``app com.tencent.mm in front; 你好 on the screen``."""
        parts = [f"{self.app} in front"] if self.app else []
        parts += [f"{t} on the screen" for t in self.text]
        parts += [f"{t} found" for t in self.target]
        parts += [f"{t} not on the screen" for t in self.absent]
        parts += [f"{t.target} switched {'on' if t.on else 'off'}" for t in self.toggle]
        parts += [f"the address bar shows {self.page.url}"] if self.page else []
        parts += [f"the media volume went {self.volume}"] if self.volume else []
        parts += ["the screen is not the one the task began on"] if self.changed else []
        return "; ".join(parts) or "(nothing to check)"


def is_target_ref(value: str) -> bool:
    return value.startswith(TARGET_PREFIXES)


def _strings(value: Any, key: str, problems: list[str]) -> tuple[str, ...]:
    items = value if isinstance(value, list | tuple) else [value]
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float) or not str(item).strip():
            problems.append(f"success_check.{key}: each entry must be non-empty text, not {item!r}"[:120])
            continue
        out.append(str(item).strip())
    return tuple(out)


def _toggles(value: Any, problems: list[str]) -> tuple[ToggleCheck, ...]:
    items = value if isinstance(value, list | tuple) else [value]
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("target"), str) and set(item) <= {"target", "state"}:
            state = str(item.get("state", "on")).strip().lower()
            if state not in ("on", "off", "true", "false"):
                problems.append(f"success_check.toggle: state must be on or off, not {state!r}"[:120])
                continue
            out.append(ToggleCheck(item["target"], state in ("on", "true")))
        else:
            problems.append("success_check.toggle: each entry needs {target: TARGET_REF, state: on|off}")
    return tuple(out)


def _page(value: Any, problems: list[str]) -> PageCheck | None:
    if isinstance(value, dict) and set(value) == {"url", "bar"} and all(isinstance(value[k], str) and value[k].strip()
                                                                       for k in ("url", "bar")) \
            and is_target_ref(value["bar"].strip()):
        return PageCheck(value["url"].strip(), value["bar"].strip())
    problems.append("success_check.page needs {url: URL, bar: TARGET_REF of the address bar}")
    return None


def _all_toggles(data: dict[str, Any], problems: list[str]) -> tuple[ToggleCheck, ...]:
    """``toggle:`` entries and the ``checked:`` shorthand (targets that must be on)."""
    toggles = _toggles(data["toggle"], problems) if "toggle" in data else ()
    if "checked" in data:
        toggles += tuple(ToggleCheck(t, True) for t in _strings(data["checked"], "checked", problems))
    return toggles


def _device_clauses(data: dict[str, Any], problems: list[str]) -> tuple[str | None, bool]:
    """``volume: up|down`` and ``changed: true``: clauses read off the phone rather than the screen's words."""
    volume = data.get("volume")
    if volume is not None and volume not in VOLUME_WAYS:
        problems.append(f"success_check.volume must be up or down, not {volume!r}"[:120])
    changed = data.get("changed", False)
    if not isinstance(changed, bool):
        problems.append(f"success_check.changed must be true or false, not {changed!r}"[:120])
    return (volume if volume in VOLUME_WAYS else None), changed is True


def parse_success_check(data: Any) -> SuccessCheck:
    """A ``success_check`` mapping -> :class:`SuccessCheck`; :class:`ArgsError` on unknown keys or bad values."""
    if data is None or data == {}:
        return SuccessCheck()
    if not isinstance(data, dict):
        raise ArgsError([f"success_check must be a mapping with keys {', '.join(KEYS)}"])
    problems: list[str] = []
    unknown = sorted(str(k) for k in data if k not in KEYS)
    if unknown:
        problems.append(f"success_check: unknown key {', '.join(unknown)} (known: {', '.join(KEYS)})")
    app = data.get("app")
    if app is not None and (not isinstance(app, str) or not app.strip()):
        problems.append("success_check.app must be a package name")
    volume, changed = _device_clauses(data, problems)
    check = SuccessCheck(app=app.strip() if isinstance(app, str) and app.strip() else None,
                         text=_strings(data["text"], "text", problems) if "text" in data else (),
                         target=_strings(data["target"], "target", problems) if "target" in data else (),
                         absent=_strings(data["absent"], "absent", problems) if "absent" in data else (),
                         toggle=_all_toggles(data, problems),
                         page=_page(data["page"], problems) if "page" in data else None,
                         volume=volume, changed=changed)
    if problems:
        raise ArgsError(problems)
    return check
