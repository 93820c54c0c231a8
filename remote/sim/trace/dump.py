"""DroidBot view trees as a phone shows them: the `uiautomator dump` XML, and which views a point hits.

DroidBot saves a flat list (``views[i]["temp_id"] == i``, ``parent``/``children``
link it into a tree, ``views[0]`` is the root) with unclipped boxes
``[[x1, y1], [x2, y2]]``. A real dump lists only views visible to the user: a
view with ``visible: false`` is left out with its subtree, and so is one whose
box, clipped to the display (``getVisibleBoundsInScreen``), is empty. Attributes
map one to one (``content_description`` -> ``content-desc``, ``is_password``
-> ``password``, ...); ``index`` is the position in the parent's children;
``NAF="true"`` marks clickable, enabled views with no text or description in
themselves or below (lists and grids excepted, as uiautomator does)::

    <node index="0" text="Hot" resource-id="com.sina.weibo:id/tv_groupName" class="android.widget.TextView"
          package="com.sina.weibo" content-desc="" checkable="false" ... bounds="[635,100][723,173]" />
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

Box = tuple[int, int, int, int]
View = dict[str, Any]

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NAF_EXCLUDED = ("android.widget.GridView", "android.widget.GridLayout", "android.widget.ListView",
                 "android.widget.TableLayout")
_FLAGS = (("checkable", "checkable"), ("checked", "checked"), ("clickable", "clickable"), ("enabled", "enabled"),
          ("focusable", "focusable"), ("focused", "focused"), ("scrollable", "scrollable"),
          ("long-clickable", "long_clickable"), ("password", "is_password"), ("selected", "selected"))


def box_of(view: View) -> Box | None:
    """``[[x1, y1], [x2, y2]]`` -> (x1, y1, x2, y2); None when missing or malformed."""
    try:
        (x1, y1), (x2, y2) = view["bounds"]
        return int(x1), int(y1), int(x2), int(y2)
    except (KeyError, TypeError, ValueError):
        return None


def clip(box: Box, display: tuple[int, int]) -> Box:
    x1, y1, x2, y2 = box
    return max(0, x1), max(0, y1), min(display[0], x2), min(display[1], y2)


def _shown_box(view: View, display: tuple[int, int]) -> Box | None:
    box = box_of(view)
    if box is None or view.get("visible") is False:
        return None
    x1, y1, x2, y2 = clip(box, display)
    return (x1, y1, x2, y2) if x2 > x1 and y2 > y1 else None


def _children(views: list[View], view: View) -> Iterator[tuple[int, View]]:
    for index, child_id in enumerate(view.get("children") or ()):
        if isinstance(child_id, int) and 0 <= child_id < len(views):
            yield index, views[child_id]


def shown(views: list[View], display: tuple[int, int]) -> Iterator[tuple[View, Box, int]]:
    """Every view a dump would list, in document order, with its clipped box and depth."""
    if not views:
        return
    stack, seen = [(views[0], 0)], set()
    while stack:
        view, depth = stack.pop()
        box = _shown_box(view, display)
        if box is None or id(view) in seen:   # a cyclic `children` list in a damaged file
            continue
        seen.add(id(view))
        yield view, box, depth
        kids = [child for _, child in _children(views, view)]
        stack.extend((child, depth + 1) for child in reversed(kids))


def hits(views: list[View], x: int, y: int, display: tuple[int, int]) -> list[View]:
    """Views under (x, y), the one a finger reaches first first: deepest, then the last drawn."""
    found = [(depth, order, view) for order, (view, (x1, y1, x2, y2), depth) in enumerate(shown(views, display))
             if x1 <= x < x2 and y1 <= y < y2]
    return [view for _, _, view in sorted(found, key=lambda t: (t[0], t[1]), reverse=True)]


def rotation(views: list[View], display: tuple[int, int]) -> int:
    """1 when the root window is landscape on a portrait display (DroidBot saved 2 such weibo screens)."""
    box = box_of(views[0]) if views else None
    return 1 if box and box[2] - box[0] > display[0] and box[2] - box[0] > box[3] - box[1] else 0


def to_xml(views: list[View], display: tuple[int, int], *, compressed: bool = False,
           texts: Mapping[int, str] | None = None, focused: int | None = None) -> str:
    """The dump of a saved tree. `texts` overrides ``text`` by temp_id (what was typed since); `focused`
    is the temp_id holding input focus (every other view then reports ``focused="false"``)."""
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", f'<hierarchy rotation="{rotation(views, display)}">']
    if views and _shown_box(views[0], display) is not None:
        _node(views, views[0], 0, display, (compressed, texts or {}, focused), out, set())
    out.append("</hierarchy>")
    return "".join(out)


def _node(views: list[View], view: View, index: int, display: tuple[int, int],
          how: tuple[bool, Mapping[int, str], int | None], out: list[str], seen: set[int]) -> None:
    compressed, texts, focused = how
    seen.add(id(view))
    x1, y1, x2, y2 = _shown_box(view, display) or (0, 0, 0, 0)
    vid = view.get("temp_id")
    flags = {attr: bool(view.get(key)) for attr, key in _FLAGS}
    if focused is not None:
        flags["focused"] = vid == focused
    naf = ' NAF="true"' if _naf(views, view) else ""
    text = texts.get(vid, view.get("text") or "") if isinstance(vid, int) else view.get("text") or ""
    out.append(f'<node{naf} index="{index}" text="{_attr(text)}" resource-id="{_attr(view.get("resource_id"))}" '
               f'class="{_attr(view.get("class"))}" package="{_attr(view.get("package"))}" '
               f'content-desc="{_attr(view.get("content_description"))}" '
               + " ".join(f'{attr}="{"true" if on else "false"}"' for attr, on in flags.items())
               + f' bounds="[{x1},{y1}][{x2},{y2}]"')
    kids = [(i, c) for i, c in _children(views, view) if _shown_box(c, display) is not None and id(c) not in seen]
    if compressed:
        kids = _important(views, kids, display, seen)
    if not kids:
        out.append(" />")
        return
    out.append(">")
    for i, child in kids:
        _node(views, child, i, display, how, out, seen)
    out.append("</node>")


def _important(views: list[View], kids: list[tuple[int, View]], display: tuple[int, int],
               seen: set[int]) -> list[tuple[int, View]]:
    """``--compressed`` drops layout-only containers and keeps their children in their place."""
    kept: list[tuple[int, View]] = []
    for i, child in kids:
        plain = not any(child.get(k) for k in ("text", "content_description", "resource_id", "clickable",
                                                "checkable", "scrollable", "focusable"))
        grandkids = [(j, g) for j, g in _children(views, child)
                     if _shown_box(g, display) is not None and id(g) not in seen]
        if plain and grandkids:
            seen.add(id(child))
            kept.extend(_important(views, grandkids, display, seen))
        else:
            kept.append((i, child))
    return kept


def _naf(views: list[View], view: View) -> bool:
    if not (view.get("clickable") and view.get("enabled")) or view.get("class") in _NAF_EXCLUDED:
        return False
    stack, seen = [view], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if (v.get("text") or "").strip() or (v.get("content_description") or "").strip():
            return False
        stack.extend(child for _, child in _children(views, v))
    return True


def _attr(value: object) -> str:
    text = _INVALID_XML.sub("?", "" if value is None else str(value))
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&apos;").replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;"))
