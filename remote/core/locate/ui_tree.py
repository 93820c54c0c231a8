"""``uiautomator dump`` XML -> nodes, and finders over them (a pure module: no I/O).

A dump looks like (one line on a phone, see docs/adb.md#uiautomator-dump)::

    <?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
    <node index="0" text="张三" resource-id="com.tencent.mm:id/name" class="android.widget.TextView"
          package="com.tencent.mm" content-desc="" clickable="false" ... bounds="[48,300][400,360]"/>
    ...</hierarchy>UI hierchary dumped to: /dev/tty

Junk before ``<?xml`` and the "dumped to" line after ``</hierarchy>`` are tolerated;
a truncated or corrupt file raises :class:`UITreeError` naming the problem.

Finders return only nodes that are on screen with a non-zero area, so a hit can
always be tapped. Text matching ignores whitespace and case; exact matches (also
equal but for punctuation and symbols, :func:`loose_text`) come before ``contains`` matches.
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from remote.errors import LocateError

BBox = tuple[int, int, int, int]
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_WS = re.compile(r"\s+")


class UITreeError(LocateError):
    """The dump could not be parsed (truncated, corrupt, not a uiautomator dump)."""


@dataclass(frozen=True)
class UINode:
    index: int
    text: str
    resource_id: str
    class_name: str
    package: str
    content_desc: str
    checkable: bool
    checked: bool
    clickable: bool
    enabled: bool
    focusable: bool
    focused: bool
    scrollable: bool
    long_clickable: bool
    password: bool
    selected: bool
    bounds: BBox
    depth: int
    parent: int | None          # position of the parent in UITree.nodes
    children: tuple[int, ...] = field(default=())
    position: int = -1          # own position in UITree.nodes
    hint: str = ""              # only in dumps that carry it (androidx UiDevice); the framework's do not

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    @property
    def width(self) -> int:
        return self.bounds[2] - self.bounds[0]

    @property
    def height(self) -> int:
        return self.bounds[3] - self.bounds[1]

    @property
    def label(self) -> str:
        """The text a person sees or hears for this node (text, else content-desc)."""
        return self.text or self.content_desc


def normalize_text(s: str) -> str:
    """Whitespace-free, case-folded text for comparison: ``" Send  Now"`` -> ``"sendnow"``."""
    return _WS.sub("", s or "").casefold()


def loose_text(s: str) -> str:
    """Letters and digits only (:func:`normalize_text` without punctuation and symbols): a label an
    app decorates with placeholders or marks ("382.6K*&*Followers", "设置 >") compares equal to what
    a person types ("382.6K Followers", "设置")."""
    return "".join(c for c in normalize_text(s) if c.isalnum())


def loosely_equal(label: str, query: str) -> bool:
    """Equal by :func:`loose_text`, with at least two letters or digits to compare."""
    loose = loose_text(query)
    return len(loose) >= 2 and loose_text(label) == loose


def parse_bounds(value: str) -> BBox | None:
    """``"[0,84][1080,210]"`` -> ``(0, 84, 1080, 210)``; None when malformed."""
    m = _BOUNDS.search(value or "")
    if not m:
        return None
    x1, y1, x2, y2 = (int(v) for v in m.groups())
    return x1, y1, x2, y2


class UITree:
    """The parsed nodes of one dump, in document order, with finders."""

    def __init__(self, nodes: list[UINode], screen_size: tuple[int, int] | None = None) -> None:
        self.nodes = nodes
        if screen_size is None:
            # The root's bounds are the window; good enough when the caller did not say.
            w = max((n.bounds[2] for n in nodes), default=0)
            h = max((n.bounds[3] for n in nodes), default=0)
            screen_size = (w, h)
        self.screen_size = screen_size

    def __len__(self) -> int:
        return len(self.nodes)

    def on_screen(self, node: UINode) -> bool:
        x1, y1, x2, y2 = node.bounds
        w, h = self.screen_size
        if x2 <= x1 or y2 <= y1:
            return False
        return x2 > 0 and y2 > 0 and x1 < w and y1 < h

    def visible_nodes(self) -> list[UINode]:
        return [n for n in self.nodes if self.on_screen(n)]

    def _match(self, query: str, fields: tuple[str, ...], exact: bool | None) -> list[UINode]:
        q = normalize_text(query)
        if not q:
            return []
        exact_hits: list[UINode] = []
        contains_hits: list[UINode] = []
        for n in self.nodes:
            if not self.on_screen(n):
                continue
            values = [normalize_text(getattr(n, f)) for f in fields]
            if any(v == q or loosely_equal(v, query) for v in values):
                exact_hits.append(n)
            elif any(v and q in v for v in values):
                contains_hits.append(n)
        if exact is True:
            return exact_hits
        if exact is False:
            return contains_hits
        return exact_hits + contains_hits

    def find_by_text(self, text: str, *, exact: bool | None = None, include_desc: bool = True) -> list[UINode]:
        """Nodes whose text (then content-desc) equals, then contains, ``text``.

        ``exact=None`` gives exact hits first, then contains hits; True or False
        restricts to one kind. Text matches come before content-desc matches.
        """
        hits = self._match(text, ("text",), exact)
        if include_desc:
            seen = {n.position for n in hits}
            hits += [n for n in self._match(text, ("content_desc",), exact) if n.position not in seen]
        return hits

    def find_by_desc(self, desc: str, *, exact: bool | None = None) -> list[UINode]:
        return self._match(desc, ("content_desc",), exact)

    def find_by_id(self, resource_id: str) -> list[UINode]:
        """Nodes with this resource-id: the full ``pkg:id/name`` or just ``name``."""
        rid = resource_id.strip()
        if not rid:
            return []
        full = ":id/" in rid
        out = []
        for n in self.nodes:
            if not n.resource_id or not self.on_screen(n):
                continue
            if full:
                if n.resource_id == rid:
                    out.append(n)
            elif n.resource_id.split(":id/")[-1] == rid:
                out.append(n)
        return out

    def find_by_class(self, class_name: str) -> list[UINode]:
        """Nodes of this class: ``android.widget.EditText`` or just ``EditText``."""
        c = class_name.strip()
        return [n for n in self.nodes if self.on_screen(n)
                and (n.class_name == c or n.class_name.rsplit(".", 1)[-1] == c)]

    def is_ancestor(self, ancestor: UINode, node: UINode) -> bool:
        """True when ``ancestor`` contains ``node`` in the tree (not the node itself)."""
        cur = node.parent
        while cur is not None:
            if cur == ancestor.position:
                return True
            cur = self.nodes[cur].parent
        return False

    def without_containers(self, nodes: list[UINode]) -> list[UINode]:
        """Drop nodes that contain another of ``nodes``: a WebView whose text repeats the page title, a
        row whose content-desc repeats its label; the leaf that draws the text is what was meant."""
        return [n for n in nodes if not any(other is not n and self.is_ancestor(n, other) for other in nodes)]

    def clickable_target(self, node: UINode) -> UINode:
        """The node itself when clickable, else its nearest clickable on-screen ancestor (or itself)."""
        cur: UINode | None = node
        while cur is not None:
            if (cur.clickable or cur.long_clickable) and self.on_screen(cur):
                return cur
            cur = self.nodes[cur.parent] if cur.parent is not None else None
        return node

    def label_at(self, point: tuple[int, int]) -> str:
        """The text or content-desc of the smallest labelled node under ``point`` ("" when none)."""
        x, y = point
        hits = [n for n in self.nodes if n.label.strip() and self.on_screen(n)
                and n.bounds[0] <= x < n.bounds[2] and n.bounds[1] <= y < n.bounds[3]]
        return min(hits, key=lambda n: n.width * n.height).label if hits else ""

    def focused_node(self) -> UINode | None:
        for n in self.nodes:
            if n.focused and self.on_screen(n):
                return n
        return None

    def texts(self) -> list[str]:
        """Visible texts (and content-descs of nodes without text), in document order."""
        return [n.label for n in self.nodes if n.label.strip() and self.on_screen(n)]

    def packages(self) -> list[str]:
        seen: dict[str, None] = {}
        for n in self.nodes:
            if n.package:
                seen.setdefault(n.package, None)
        return list(seen)


def _bool(attrs: dict[str, str], name: str) -> bool:
    return attrs.get(name, "false") == "true"


def _clean(xml: str) -> str:
    start = xml.find("<?xml")
    if start < 0:
        start = xml.find("<hierarchy")
    if start < 0:
        raise UITreeError("not a uiautomator dump: no <?xml or <hierarchy> found",
                          hint=f"starts with {xml[:60]!r}")
    end = xml.rfind("</hierarchy>")
    if end < 0:
        raise UITreeError("truncated uiautomator dump: </hierarchy> missing",
                          hint="the dump was cut off; take it again")
    return xml[start:end + len("</hierarchy>")]


def parse_hierarchy(xml: str | bytes, screen_size: tuple[int, int] | None = None) -> UITree:
    """Parse a ``uiautomator dump`` into a :class:`UITree`.

    >>> tree = parse_hierarchy('<hierarchy><node text="OK" clickable="true" bounds="[0,0][100,50]"/></hierarchy>')
    >>> tree.find_by_text("ok")[0].center
    (50, 25)
    """
    if isinstance(xml, bytes):
        xml = xml.decode("utf-8", errors="replace")
    if not xml or not xml.strip():
        raise UITreeError("empty uiautomator dump")
    text = _clean(xml)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UITreeError(f"corrupt uiautomator dump: {exc}") from exc
    if root.tag != "hierarchy":
        raise UITreeError(f"not a uiautomator dump: root element is <{root.tag}>")
    nodes: list[UINode] = []
    children: dict[int, list[int]] = {}

    def walk(elem: ET.Element, depth: int, parent: int | None) -> None:
        for child in elem:
            if child.tag != "node":
                continue
            a = child.attrib
            bounds = parse_bounds(a.get("bounds", "")) or (0, 0, 0, 0)
            pos = len(nodes)
            try:
                index = int(a.get("index", "0"))
            except ValueError:
                index = 0
            nodes.append(UINode(
                index=index, text=a.get("text", ""), resource_id=a.get("resource-id", ""),
                class_name=a.get("class", ""), package=a.get("package", ""),
                content_desc=a.get("content-desc", ""), checkable=_bool(a, "checkable"),
                checked=_bool(a, "checked"), clickable=_bool(a, "clickable"), enabled=_bool(a, "enabled"),
                focusable=_bool(a, "focusable"), focused=_bool(a, "focused"),
                scrollable=_bool(a, "scrollable"), long_clickable=_bool(a, "long-clickable"),
                password=_bool(a, "password"), selected=_bool(a, "selected"), bounds=bounds,
                depth=depth, parent=parent, position=pos, hint=a.get("hint", "")))
            children[pos] = []
            if parent is not None:
                children[parent].append(pos)
            walk(child, depth + 1, pos)

    walk(root, 0, None)
    # Frozen nodes: attach the children tuples once the tree is complete.
    final = [dataclasses.replace(n, children=tuple(children[i])) for i, n in enumerate(nodes)]
    return UITree(final, screen_size)
