"""Where an agent means: x,y in the last screenshot, an element number from it, or a ``target_ref``.

The three forms end in one `Aim`: a device-pixel point, the box it came from,
and a sentence saying how it was found (``desc:搜索 found via tree, confidence
1.00``) — the tier and confidence come from `HybridLocator`. An element number
is re-checked against the live UI tree when the phone was touched since the
screenshot, so a stale number is refused rather than tapped.

Every aim also says what a touch at its point reaches *now* (`remote.mcp.touch`,
on a tree dumped for this act, never the last screenshot's list): that element,
not the one the agent meant or an older list showed, is what the gate judges.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from remote.core.coords import bbox_center, visible_region
from remote.core.locate.screen import Screen
from remote.core.locate.ui_tree import UITree
from remote.core.records import LocateResult
from remote.errors import ActionError, LocateError, LocateFailure
from remote.mcp.session import Session
from remote.mcp.shot import Element, Shot, role
from remote.mcp.touch import Touch, touch_at


@dataclass(frozen=True)
class Aim:
    point: tuple[int, int]                       # device pixels
    bbox: tuple[int, int, int, int] | None       # device pixels
    how: str
    label: str = ""
    tier: str = ""
    confidence: float | None = None
    looked: bool = False                         # the UI tree was dumped for this act
    touch: Touch | None = None                   # what a touch at ``point`` reaches (None: nothing known)

    @property
    def reaches(self) -> str:
        """``[Item] "广告 · 限时福利"``: the element a touch at the point reaches, as a reply names it."""
        if self.touch is None:
            return "no element the UI tree shows" if self.looked else "an element not known (no UI tree)"
        inside = f" in {self.touch.group!r}" if self.touch.group else ""
        return f"[{role(self.touch.node)}] {self.touch.name!r}{inside}"

    def describe(self, shot: Shot | None) -> str:
        x, y = self.point
        where = f"device ({x},{y})"
        if shot is not None:
            ix, iy = shot.to_image(x, y)
            where += f" = image ({ix},{iy})"
        covered = ""
        if self.looked and self.bbox is not None and (self.touch is None or self.touch.node.bounds != self.bbox):
            covered = f" (a touch there reaches {self.reaches})"
        return f"{self.how}{covered} -> {where}"


def count_forms(x: float | None, y: float | None, element: int | None, target_ref: str | None) -> int:
    if (x is None) != (y is None):
        raise ActionError("give both x and y (pixels of the last screenshot), or neither")
    return (x is not None) + (element is not None) + bool(target_ref)


def aim(session: Session, *, x: float | None = None, y: float | None = None, element: int | None = None,
        target_ref: str | None = None, what: str = "the target") -> Aim:
    """Resolve exactly one of: ``x``+``y``, ``element``, ``target_ref``."""
    forms = count_forms(x, y, element, target_ref)
    if forms != 1:
        raise ActionError(f"name {what} one way: x and y, or element, or target_ref "
                          f"({'none' if forms == 0 else 'several'} given)")
    if x is not None and y is not None:
        point = session.require_shot().to_device(x, y)
        found = reach(Aim(point, None, ""), session.tree())
        return replace(found, how=f"image point ({x:g},{y:g}) on {found.reaches}")
    if element is not None:
        return _aim_element(session, session.require_shot().element(element))
    return aim_target(session, str(target_ref))


def reach(target: Aim, tree: UITree | None) -> Aim:
    """``target`` with what a touch at its point reaches on ``tree`` (a tree dumped for this act)."""
    if tree is None:
        return replace(target, looked=False, touch=None)
    return replace(target, looked=True, touch=touch_at(tree, target.point))


def _aim_element(session: Session, el: Element) -> Aim:
    shot = session.require_shot()
    how = f"element {el.number} [{el.role}] {el.name!r}"
    tree = session.tree()
    if session.generation > shot.generation:
        if tree is not None and not _still_there(tree, el):
            raise LocateError(f"element {el.number} ({el.role} {el.name!r}) is not on the screen any more: "
                              "the phone was touched since the screenshot",
                              hint="take a new screenshot and use its numbers, or name the target by target_ref")
        how += " (re-checked on the current screen)"
    vis = visible_region(el.bbox, shot.device_size)
    box = vis["safe_region"] or el.bbox
    return reach(Aim(bbox_center(box), el.bbox, how, el.name), tree)


def _still_there(tree: UITree, el: Element) -> bool:
    for node in tree.visible_nodes():
        if node.bounds != el.bbox:
            continue
        if not el.rid or node.resource_id == el.rid:
            return True
    return False


def aim_target(session: Session, target_ref: str) -> Aim:
    """Locate a ``target_ref`` on a fresh screen with the hybrid locator (tree, OpenCV, OCR, vision)."""
    require_locatable(session, target_ref)
    screen = session.live_screen()
    return aim_located(session, target_ref, session.locator.locate(target_ref, screen), screen)


def require_locatable(session: Session, target_ref: str) -> None:
    """A ``dynamic:`` target needs the vision model: a LocateError (with what to do) when none is configured."""
    if target_ref.startswith("dynamic:") and session.locator.vision is None:
        raise LocateError(f"{target_ref}: dynamic: targets need a vision model, and none is configured",
                          target_ref=target_ref, failure=LocateFailure.UNAVAILABLE,
                          hint="set LLM_PROVIDER and its key (docs/models.md), or use text:/desc:/id:, an element "
                               "number or x,y")


def aim_located(session: Session, target_ref: str, result: LocateResult, screen: Screen) -> Aim:
    """The aim of a locate's ``result`` on ``screen``; a LocateError (ambiguous, not found) when it has none."""
    if result.success and result.element is not None and result.reliable:
        el = result.element
        point = el.center or bbox_center(el.bbox)
        how = f"{target_ref} found via {result.method_used} (confidence {el.confidence:.2f})"
        found = Aim(point, el.bbox, how, el.description or target_ref, result.method_used, el.confidence)
        return reach(found, screen.tree() if screen.tree_taken else session.tree())
    raise missed(session, target_ref, result)


def missed(session: Session, target_ref: str, result: LocateResult) -> LocateError:
    """Why a locate's ``result`` gives no aim: several places nearly equally well, or none."""
    if result.success:
        shot = session.shot
        places = "; ".join(_place(c.bbox, shot) for c in result.candidates[:5])
        return LocateError(f"{target_ref} matches {len(result.candidates)} places nearly equally well ({places})",
                           target_ref=target_ref, failure=LocateFailure.AMBIGUOUS,
                           candidates=[c.bbox for c in result.candidates],
                           hint="pick one: take a screenshot and pass element=N, or pass x,y")
    tried = ", ".join(result.tiers_tried) or "no tier"
    return LocateError(f"{target_ref} not found (tried {tried}): {result.error or 'no match'}",
                       target_ref=target_ref, failure=result.failure or LocateFailure.NOT_FOUND,
                       hint="take a screenshot and use an element number, or a text:/desc:/id: from its list")


def _place(bbox: tuple[int, int, int, int], shot: Shot | None) -> str:
    x, y = bbox_center(bbox)
    if shot is None:
        return f"device ({x},{y})"
    ix, iy = shot.to_image(x, y)
    return f"image ({ix},{iy})"
