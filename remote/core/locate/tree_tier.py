"""The UI-tree tier: which nodes a ``text:``, ``desc:``, ``id:``, ``editable:`` or ``role:`` target names,
as elements scored for :class:`~remote.core.locate.hybrid_locator.HybridLocator`."""

from __future__ import annotations

from remote.core.locate import tree_roles
from remote.core.locate.confidence import make_element
from remote.core.locate.ui_tree import UINode, UITree, loosely_equal, normalize_text
from remote.core.records import UIElement


def elements(tree: UITree, kind: str, value: str, etype: str) -> list[UIElement]:
    """The tree tier's elements for a ``text:``, ``desc:``, ``id:``, ``editable:`` or ``role:`` target:
    one per tap target (a node's clickable ancestor), scored exact > loose > contains."""
    if kind in ("editable", "role"):
        return _semantic_elements(tree, kind, value, etype)
    if kind == "id":
        nodes = tree.find_by_id(value)
    elif kind == "desc":
        nodes = tree.find_by_desc(value, exact=True) or tree.find_by_desc(value, exact=False)
    else:
        nodes = text_nodes(tree, value)
    nodes = tree.without_containers(nodes)
    q = normalize_text(value)
    out: list[UIElement] = []
    for n in nodes:
        target = tree.clickable_target(n)
        if any(e.bbox == target.bounds for e in out):
            continue
        labels = [normalize_text(n.content_desc)] if kind == "desc" else \
            [normalize_text(n.text), normalize_text(n.content_desc)]
        exact = kind == "id" or q in labels
        loose = not exact and any(loosely_equal(lb, value) for lb in labels)   # equal but for punctuation
        label = max(labels, key=lambda lb: q in lb)
        raw = 1.0 if exact else 0.95 if loose else 0.5 + 0.3 * (len(q) / max(len(label), 1))
        if exact and kind == "text" and labels[0] != q:
            raw = 0.96   # named by its content-desc only: a node showing the text comes first (MIUI's icon+title)
        out.append(make_element("tree", target.bounds, raw, n.label or n.resource_id, etype, node=n.position,
                                 match="exact" if exact else "loose" if loose else "contains",
                                 resource_id=n.resource_id))
    return out

def _semantic_elements(tree: UITree, kind: str, value: str, etype: str) -> list[UIElement]:
    out: list[UIElement] = []   # editable: / role: (tree_roles), one element per tap target, best first
    for hit in tree_roles.find(tree, kind, value):
        target = tree.clickable_target(hit.node)
        if not any(e.bbox == target.bounds for e in out):
            out.append(make_element("tree", target.bounds, tree_roles.score(hit, kind, value), hit.describe(),
                                     etype, node=hit.node.position, match=hit.match))
    return out

def text_nodes(tree: UITree, value: str) -> list[UINode]:
    """Nodes showing ``value``: exactly, else containing it (those are candidates only: deciding.decide).

    A field showing the text just typed (a search box) echoes the query: when other nodes show
    it too, or contain it ("没有找到'李雷'相关结果"), they are what the step is about, not the echo.
    """
    exact = tree.find_by_text(value, exact=True)
    shown = [n for n in exact if "EditText" not in n.class_name]
    if shown:
        return shown
    contained = [n for n in tree.find_by_text(value, exact=False) if "EditText" not in n.class_name]
    return contained if exact and contained else exact or tree.find_by_text(value, exact=False)
