"""Targets named the way a person sees them: "the text field", "the button called 发送" (pure).

Two ``target_ref`` forms find their node here, in a parsed UI dump:

* ``editable:`` — the focused editable field, else the only one on screen; several and
  none focused is ambiguous (all are returned, equally good). ``editable:LABEL`` — an
  editable field whose hint, text or content-desc is LABEL (exact, then loosely equal,
  then containing it).
* ``role:CLASS:LABEL`` — a node whose class name ends with CLASS (case-insensitive:
  ``Button`` matches ``android.widget.Button``) and whose name is LABEL. A node is named
  by its own text or content-desc; a node without one (a tab, an icon row), and a
  checkable control (a switch reads 开启/关闭, which is a state, not a name), is named by
  the texts of the row it belongs to: its nearest clickable ancestor, or itself, as
  TalkBack reads it. CLASS ``toggle`` means any checkable node (Switch, CheckBox,
  ToggleButton, MIUI's sliding button), CLASS ``editable`` any text field.

    find_role(tree, "Button", "发送")   find_role(tree, "toggle", "WLAN")   find_editable(tree, "")

Each hit says how it matched; ``HybridLocator`` turns that into a score.
"""

from __future__ import annotations

from dataclasses import dataclass

from remote.core.locate.ui_tree import UINode, UITree, loosely_equal, normalize_text

EDITABLE_CLASSES = ("edittext", "autocompletetextview", "multiautocompletetextview", "extractedittext")
TOGGLE = "toggle"


@dataclass(frozen=True)
class Hit:
    """A node a semantic target names, and how: exact | loose | contains | focused | only | any."""

    node: UINode
    match: str
    label: str = ""

    def describe(self) -> str:
        return self.label or self.node.label or self.node.class_name.rsplit(".", 1)[-1]


def is_editable(node: UINode) -> bool:
    """A text field by its class (dumps do not carry ``editable``): ``android.widget.EditText`` and kin."""
    name = _short(node.class_name)
    return name.endswith("edittext") or name in EDITABLE_CLASSES


def _short(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1].rsplit("$", 1)[-1].casefold()


def _class_matches(node: UINode, cls: str) -> bool:
    want = cls.strip().casefold()
    if want == TOGGLE:
        return node.checkable
    if want == "editable":
        return is_editable(node)
    return node.class_name.casefold() == want or _short(node.class_name) == want.rsplit(".", 1)[-1]


def _grade(labels: list[str], label: str) -> tuple[str, str] | None:
    """How well the best of ``labels`` names ``label``: ("exact"|"loose"|"contains", that label)."""
    q = normalize_text(label)
    best: tuple[str, str] | None = None
    for value in labels:
        v = normalize_text(value)
        if not v:
            continue
        if v == q:
            return "exact", value
        if loosely_equal(value, label):
            best = ("loose", value)
        elif q in v and (best is None or best[0] == "contains" and len(v) < len(normalize_text(best[1]))):
            best = ("contains", value)
    return best


def _rank(hits: list[Hit]) -> list[Hit]:
    order = {"exact": 0, "focused": 0, "only": 0, "loose": 1, "any": 2, "contains": 3}
    return sorted(hits, key=lambda h: order.get(h.match, 9))


def find_editable(tree: UITree, label: str = "") -> list[Hit]:
    """The editable field(s) ``editable:`` / ``editable:LABEL`` names, best first (empty: none on screen)."""
    fields = [n for n in tree.nodes if is_editable(n) and tree.on_screen(n)]
    if not label.strip():
        focused = [n for n in fields if n.focused]
        if focused:
            return [Hit(focused[0], "focused")]
        if len(fields) == 1:
            return [Hit(fields[0], "only")]
        return [Hit(n, "any") for n in fields]
    hits = []
    for n in fields:
        graded = _grade([n.hint, n.text, n.content_desc], label)
        if graded:
            hits.append(Hit(n, *graded))
    return _rank(hits)


def row_labels(tree: UITree, node: UINode) -> list[str]:
    """What a node is called: its own text/desc, or (no name of its own, or a checkable control) its row's texts."""
    own = [v for v in (node.text, node.content_desc) if v.strip()]
    if own and not node.checkable:
        return own
    row = _row_of(tree, node) if node.checkable else tree.clickable_target(node)
    if row.position == node.position and not node.children:
        return own
    inside = [tree.nodes[i] for i in _descendants(tree, row.position) if i != node.position]
    return own + [v for n in inside if tree.on_screen(n) for v in (n.text, n.content_desc) if v.strip()]


def _row_of(tree: UITree, node: UINode) -> UINode:
    """The row a control sits in: its nearest clickable ancestor, else its parent."""
    cur = node.parent
    while cur is not None:
        if (tree.nodes[cur].clickable or tree.nodes[cur].long_clickable) and tree.on_screen(tree.nodes[cur]):
            return tree.nodes[cur]
        cur = tree.nodes[cur].parent
    return tree.nodes[node.parent] if node.parent is not None else node


def _descendants(tree: UITree, position: int) -> list[int]:
    out, stack = [], list(tree.nodes[position].children)
    while stack:
        i = stack.pop(0)
        out.append(i)
        stack.extend(tree.nodes[i].children)
    return out


def find_role(tree: UITree, cls: str, label: str = "") -> list[Hit]:
    """Nodes of class ``cls`` named ``label`` (any name when ``label`` is empty), best first."""
    if not cls.strip():
        return []
    hits = []
    for n in tree.nodes:
        if not tree.on_screen(n) or not _class_matches(n, cls):
            continue
        if not label.strip():
            hits.append(Hit(n, "any"))
            continue
        graded = _grade(row_labels(tree, n), label)
        if graded:
            hits.append(Hit(n, *graded))
    if not label.strip() and len(hits) == 1:
        return [Hit(hits[0].node, "only")]
    return _rank(hits)


def score(hit: Hit, kind: str, value: str) -> float:
    """The tree tier's raw score for a hit (1.0 for a sure one; a containing label scores by how much of it
    the query covers, as ``text:`` does)."""
    label = value.partition(":")[2] if kind == "role" else value
    if hit.match in ("exact", "focused", "only"):
        return 1.0
    if hit.match == "loose":
        return 0.95
    if hit.match == "any":
        return 0.9
    q = normalize_text(label)
    return 0.5 + 0.3 * (len(q) / max(len(normalize_text(hit.label)), 1))


def find(tree: UITree, kind: str, value: str) -> list[Hit]:
    """The hits of an ``editable:`` or ``role:`` target's value, best first."""
    if kind == "editable":
        return find_editable(tree, value)
    cls, _, label = value.partition(":")
    return find_role(tree, cls.strip(), label.strip())
