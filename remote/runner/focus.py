"""Which field a tap focused, on the tree of the screen after it (a tap the next step types after).

With trees at tens of milliseconds (a resident tree server) such a tap is judged on the screen after it,
not only on the soft keyboard coming up: any field that takes the focus brings up the keyboard, also
the wrong one. The focused field must be

* the tapped element itself (their boxes overlap: a compose box, a search field), or
* a field the tap brought (not on the screen before at that place: a search page that opened), or
* on a screen where the tapped element is gone (the tap led somewhere new).

A field that was on the screen before, elsewhere, while the tapped element is still there, is another
field the tap landed on: the step is judged wrong there and then, not one step later.
"""

from __future__ import annotations

from remote.core.locate.screen import Screen
from remote.core.locate.ui_tree import UINode, UITree
from remote.core.records import LocateResult, StepOutcome, SuggestionAction, VerifyResult

BBox = tuple[int, int, int, int]
METHOD = "focus-tree"   # the verdict's method in the record: `remote replay` re-makes it from the two trees


def focus_on_tree(before: Screen, after: Screen, loc: LocateResult, keyboard: bool) -> VerifyResult | None:
    """The tap's verdict from the focused field of ``after``'s tree; None when a tree cannot tell (no tree
    before or after, no target box, no focused field)."""
    tree_after = after.tree()
    tree_before = before.tree() if before.tree_taken else None
    focused = tree_after.focused_node() if tree_after is not None else None
    if tree_after is None or tree_before is None or loc.element is None or focused is None:
        return None
    tapped = loc.element.bbox
    sign = "; the keyboard is up" if keyboard else ""
    label = focused.label or focused.resource_id or focused.class_name
    if _overlap(focused.bounds, tapped) or not _there(tree_before, focused) or _gone(tree_before, tree_after, tapped):
        return VerifyResult(True, 0.9, matches_expected=True, screen_changed=True, method=METHOD,
                            outcome=StepOutcome.SUCCEEDED, suggestion=SuggestionAction.CONTINUE,
                            change_description=f"the tree shows the field {label!r} focused for the next step's "
                                               f"typing{sign}"[:200])
    return VerifyResult(False, 0.9, matches_expected=False, screen_changed=True, method=METHOD,
                        outcome=StepOutcome.WRONG_PAGE, suggestion=SuggestionAction.RETRY,
                        change_description=f"the tap focused another field ({label!r} at {list(focused.bounds)}), "
                                           f"while the tapped element at {list(tapped)} is still there{sign}"[:200])


def _overlap(a: BBox, b: BBox) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _key(node: UINode) -> tuple[str, str, str, str, BBox]:
    return node.class_name, node.resource_id, node.text, node.content_desc, node.bounds


def _there(tree: UITree, node: UINode) -> bool:
    """Was this field on the screen before (same class, id and place; its text may have changed)?"""
    return any(n.class_name == node.class_name and n.resource_id == node.resource_id and n.bounds == node.bounds
               for n in tree.nodes)


def _gone(before: UITree, after: UITree, tapped: BBox) -> bool:
    """Is the element the tap was aimed at (the smallest node of ``before`` around its box's centre) gone?"""
    x, y = (tapped[0] + tapped[2]) // 2, (tapped[1] + tapped[3]) // 2
    around = [n for n in before.nodes if n.bounds[0] <= x < n.bounds[2] and n.bounds[1] <= y < n.bounds[3]]
    if not around:
        return True
    aimed = _key(min(around, key=lambda n: (n.bounds[2] - n.bounds[0]) * (n.bounds[3] - n.bounds[1])))
    return all(_key(n) != aimed for n in after.nodes)
