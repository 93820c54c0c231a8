"""What the simulated apps may use of the phone they run on.

`remote.sim.phone.SimPhone` satisfies this protocol; the apps are written against
it (not against `SimPhone`), so that the phone can import the apps without the
apps importing the phone.
"""

from __future__ import annotations

from typing import Any, Protocol

from remote.sim.scenario import Scenario


class Phone(Protocol):
    scenario: Scenario
    launcher: str                       # the launcher package of the scenario's ROM
    app_state: dict[str, Any]           # per-app data an app keeps for the phone's lifetime ("wechat.release")
    foreground: str
    launcher_page: int
    fields: dict[str, str]              # text fields by key ("mm.search", "mm.chat:张三", "chrome.url")
    focus: str | None                   # key of the focused field
    permission_pending: bool
    ad_pending: bool
    chats: dict[str, list[str]]
    settings: dict[str, bool]
    browser_url: str | None
    browser_loaded_at: float
    volume: int

    @property
    def screen(self) -> str: ...

    @property
    def loading(self) -> bool: ...

    def changed(self) -> None: ...

    def push(self, screen: str, focus: str | None = None) -> None: ...

    def back(self) -> None: ...

    def launch(self, package: str) -> bool: ...

    def focus_field(self, key: str) -> None: ...

    def type_text(self, text: str) -> bool: ...
