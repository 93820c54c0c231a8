"""Small facts read from a UI tree around a located element: switch state, selection (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from remote.core.records import LocateResult, StepPlan


def already_selected(screen: Any, loc: LocateResult) -> bool:
    """The tapped element (a tab) was already the selected one, per the UI tree taken before the tap."""
    tree = screen.tree()
    if tree is None or loc.element is None:
        return False
    return any(n.selected and n.bounds == tuple(loc.element.bbox) for n in tree.nodes)


def wanted_toggle(step: StepPlan) -> bool:
    return str(step.params.get("toggle", "on")).lower() in ("on", "true", "1", "开", "打开")


def switch_state(nodes: Sequence[Any], bbox: tuple[int, int, int, int]) -> bool | None:
    """The checked state of the switch on the same row as ``bbox`` (None when there is none)."""
    y_mid = (bbox[1] + bbox[3]) / 2
    best = None
    for node in nodes:
        if not node.checkable:
            continue
        x1, y1, x2, y2 = node.bounds
        if y1 <= y_mid <= y2 or bbox[1] <= (y1 + y2) / 2 <= bbox[3]:
            distance = abs((y1 + y2) / 2 - y_mid)
            if best is None or distance < best[0]:
                best = (distance, node.checked)
    return None if best is None else best[1]
