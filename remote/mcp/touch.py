"""Which element a touch at a point reaches (pure): what the gate judges a coordinate act by.

Android hands a touch down the view tree from the top: a ViewGroup asks its
children from the last drawn (topmost) to the first, only those whose bounds hold
the point, and the first one that takes it wins; a view takes a touch when it is
clickable or long-clickable (``View.onTouchEvent``: even when disabled, "a
disabled view that is clickable still consumes the touch events"); a view that
takes none passes it back to its parent. In a uiautomator dump, document order
is drawing order, so the receiver is the first node in *reverse* document order
that is clickable, holds the point, and whose ancestors all hold it: a red-packet
ad drawn over a chat row gets the tap, not the row under it, whatever an earlier
screenshot listed. (A dump holds the active window only; ``drawing-order``,
which some dumpers add, is not read: the order of the document is used.)

What the gate reads is the receiver's own words (its text, its descendants'
texts, its id) and those of the group it sits in: the largest ancestor that is
neither a list (scrollable) nor half the screen or more. A "立即领取" button is
judged with the red-packet card around it, a dialog's "确认" with the transfer
it confirms; a chat row in a list is judged by itself, not by the whole list.

When nothing clickable holds the point (a WebView's page, a game's surface, an
app drawn on a canvas), no element vouches for what the tap does: the caller
treats it as unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

from remote.core.locate.ui_tree import UINode, UITree

LABELS = 12            # descendant texts kept to judge a receiver that has no text of its own
WORDS_CHARS = 600      # ... and at most this much of them


@dataclass(frozen=True)
class Touch:
    """The element a touch reaches: its node, the name an agent sees, and the words the gate reads."""

    node: UINode
    name: str              # own text/desc, else its descendants' texts joined with " · "
    words: str             # name, every descendant text, the id's last part and the group's texts: what is judged
    group: str = ""        # the texts of the group it sits in (see above), as a reply names it

    @property
    def known(self) -> bool:
        """Something vouches for what this element is: a text, a description or an id."""
        return bool(self.words.strip())


def _holds(node: UINode, x: int, y: int) -> bool:
    x1, y1, x2, y2 = node.bounds
    return x1 <= x < x2 and y1 <= y < y2


def _reachable(tree: UITree, node: UINode, x: int, y: int) -> bool:
    cur = node.parent
    while cur is not None:
        parent = tree.nodes[cur]
        if not _holds(parent, x, y):
            return False
        cur = parent.parent
    return True


def receiver(tree: UITree, point: tuple[int, int]) -> UINode | None:
    """The node a tap at ``point`` (device pixels) reaches, or None when nothing clickable holds it.

    >>> from remote.core.locate.ui_tree import parse_hierarchy
    >>> tree = parse_hierarchy('<hierarchy><node bounds="[0,0][100,100]">'
    ...     '<node text="row" clickable="true" bounds="[0,0][100,50]"/>'
    ...     '<node text="ad" clickable="true" bounds="[0,0][100,100]"/></node></hierarchy>')
    >>> receiver(tree, (10, 10)).text
    'ad'
    """
    x, y = point
    for node in reversed(tree.nodes):
        if (node.clickable or node.long_clickable) and _holds(node, x, y) and tree.on_screen(node) \
                and _reachable(tree, node, x, y):
            return node
    return None


def _group(tree: UITree, node: UINode) -> UINode | None:
    """The largest ancestor of ``node`` that is not a list and covers less than half the screen."""
    w, h = tree.screen_size
    found = None
    cur = node.parent
    while cur is not None:
        parent = tree.nodes[cur]
        if parent.scrollable or parent.width * parent.height * 2 >= w * h:
            break
        found, cur = parent, parent.parent
    return found


def _descendant_labels(tree: UITree, node: UINode) -> list[str]:
    out: list[str] = []
    stack = list(reversed(node.children))
    while stack and len(out) < LABELS:
        child = tree.nodes[stack.pop()]
        if child.label.strip() and tree.on_screen(child):
            out.append(" ".join(child.label.split()))
        stack.extend(reversed(child.children))
    return out


def touch_at(tree: UITree, point: tuple[int, int]) -> Touch | None:
    """The receiver at ``point`` with its name and words (None when nothing clickable holds the point)."""
    node = receiver(tree, point)
    if node is None:
        return None
    below = _descendant_labels(tree, node)
    own = " ".join(node.label.split())
    name = own or " · ".join(below[:3])
    rid = node.resource_id.split(":id/")[-1] if node.resource_id else ""
    group = _group(tree, node)
    around = [t for t in _descendant_labels(tree, group) if t not in below and t != own] if group else []
    words = " ".join(dict.fromkeys(w for w in (own, *below, rid, *around) if w))[:WORDS_CHARS]
    return Touch(node, name, words, " · ".join(around[:3]))
