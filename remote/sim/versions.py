"""Releases of the simulated apps: which resource ids and layout each version has.

Real WeChat obfuscates its resource ids and renames them in every release: the chat
input is ``auj`` in 8.0.1, ``b4a`` in 8.0.32 and ``bkk`` in 8.0.47. A scenario picks a
release per app (``versions: {wechat: "8.0.32"}``; the newest when not given), or
``random``: fresh ids and layout switches drawn on every start of the phone.

Ids that public scripts document for a release are in ``DOCUMENTED`` (sources in
``remote/sim/apps/README.md``); the other roles get ids drawn once from a fixed seed
per version, shaped like real ones (one letter, then letters, digits or ``_``), and
no id is shared between two versions.
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping
from dataclasses import dataclass, field

RANDOM = "random"

# What each WeChat screen element is (the sim's own names; never shown to the agent).
WECHAT_ROLES = (
    "action_bar", "title", "search", "search_bar_text", "more", "list", "chat_item", "avatar", "chat_name",
    "chat_preview", "chat_time", "tab_bar", "tab", "tab_icon", "tab_label", "contact_item", "contact_name",
    "profile", "nickname", "search_back", "search_input", "search_cancel", "search_empty", "search_header",
    "search_results", "search_result_item", "search_result_name", "chat_back", "chat_title", "chat_info",
    "chat_list", "chat_bubble", "chat_avatar", "input_bar", "voice", "chat_input", "emoji", "send", "plus",
    "ad_card", "ad_label", "ad_title", "ad_button", "ad_close",
)

# Ids public scripts name for a release (role -> id after "com.tencent.mm:id/").
DOCUMENTED: dict[str, dict[str, str]] = {
    "8.0.1": {"chat_input": "auj", "chat_item": "bg1", "chat_preview": "e7t"},
    "8.0.32": {"chat_input": "b4a", "send": "b8k", "chat_item": "bth", "chat_preview": "fhs"},
    "8.0.47": {"chat_input": "bkk", "chat_bubble": "bkl", "chat_title": "obn", "send": "bql", "search": "meb",
               "search_result_name": "odf", "chat_list": "bp0"},
}
# Layout switches: where the search entry is (an icon in the action bar, or a bar over the chat list).
LAYOUTS: dict[str, dict[str, str]] = {
    "8.0.1": {"search_entry": "bar"},
    "8.0.32": {"search_entry": "icon"},
    "8.0.47": {"search_entry": "icon"},
}
WECHAT_VERSIONS = tuple(DOCUMENTED)          # oldest first
NEWEST = {"wechat": WECHAT_VERSIONS[-1]}
KNOWN = {"wechat": WECHAT_VERSIONS}
_FIRST = string.ascii_lowercase
_REST = string.ascii_lowercase + string.digits + "_"


@dataclass(frozen=True)
class Release:
    """One release of an app as the sim draws it: ``ids[role]`` is the resource-id suffix."""

    app: str
    version: str
    ids: Mapping[str, str]
    layout: Mapping[str, str] = field(default_factory=dict)

    def rid(self, package: str, role: str) -> str:
        """``release.rid("com.tencent.mm", "chat_input")`` -> ``"com.tencent.mm:id/bkk"``."""
        return f"{package}:id/{self.ids[role]}"


def _draw_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        size = rng.choice((2, 3, 3, 3))
        rid = rng.choice(_FIRST) + "".join(rng.choice(_REST) for _ in range(size - 1))
        if rid not in taken:
            taken.add(rid)
            return rid


def _all_documented() -> set[str]:
    return {rid for ids in DOCUMENTED.values() for rid in ids.values()}


def _fixed_releases() -> dict[str, Release]:
    taken = _all_documented()
    out = {}
    for version in WECHAT_VERSIONS:
        rng = random.Random(f"wechat-{version}")
        known = DOCUMENTED[version]
        ids = {role: known.get(role) or _draw_id(rng, taken) for role in WECHAT_ROLES}
        out[version] = Release("wechat", version, ids, dict(LAYOUTS[version]))
    return out


WECHAT_RELEASES = _fixed_releases()


def release(app: str, version: str, rng: random.Random | None = None) -> Release:
    """The release a scenario asks for; ``random`` draws fresh ids and layout (``rng`` or the OS's entropy)."""
    if version != RANDOM:
        return WECHAT_RELEASES[version]
    rng = rng or random.Random()
    taken: set[str] = set()
    ids = {role: _draw_id(rng, taken) for role in WECHAT_ROLES}
    return Release(app, RANDOM, ids, {"search_entry": rng.choice(("icon", "bar"))})


def check_versions(versions: Mapping[str, object]) -> dict[str, str]:
    """Validate a scenario's ``versions:`` and fill in the newest for apps not named.

    >>> check_versions({"wechat": "8.0.32"})
    {'wechat': '8.0.32'}

    Raises ValueError naming the known apps or versions.
    """
    out = dict(NEWEST)
    for app, version in versions.items():
        if app not in KNOWN:
            raise ValueError(f"versions: unknown app {app!r}; known apps: {', '.join(sorted(KNOWN))}")
        text = str(version).strip() if isinstance(version, str | int | float) else ""
        if text not in (*KNOWN[app], RANDOM):
            raise ValueError(f"versions: {app} {version!r} is not simulated; known: "
                             f"{', '.join(KNOWN[app])}, {RANDOM}")
        out[app] = text
    return out
