"""Which text nodes of a UI dump the screen draws as that text (the OCR bench's node set).

A dump lists text the screen does not show as such; OCR cannot be asked to read it.
A node with text is left out of the OCR measurement (and counted per reason) when:

  password   ``password="true"``: drawn as dots
  state      a Switch / ToggleButton whose text is its state word (ON/OFF, 开启/关闭, in
             Traditional Chinese too: 開啟/關閉, compared in OCR's form ``ocr_text.canon``):
             the widget draws a graphic (thumb and track), not the word
  glyph      only private-use characters (U+E000-U+F8FF): an icon font draws them as an icon
  alt        a web view's ``android.widget.Image``: its text is the image's alt text or file name
  web        a web view's own text (the page's document title), or a text node with the web
             view's box: a web container's caption (Weibo's "Provided by m.weibo.cn", shown only
             when the page is pulled down; drawn on none of these screenshots, checked by eye)
  markup     nothing left after the app's span placeholders are removed (below)
  hotseat    an app icon (clickable, its title as text and content-desc) in a launcher's dock (below a
             ``…:id/hotseat`` container; a toast drawn there is kept): Launcher3 hides the
             label of every icon it adds to the hotseat (AOSP platform/packages/apps/Launcher3,
             ``CellLayout.addViewToCellLayout``: ``setTextVisibility(mContainerType != HOTSEAT)``), the
             dump still lists it (real-zh's launcher screen: 電話, 訊息, Gmail, Chrome, 相機 under their icons)
  relative   a notification's time (``android:id/time``, a ``DateTimeView``): it draws the short form
             ("17小時") and gives accessibility, so the dump, the long one ("17 小時前"; AOSP
             frameworks/base, ``DateTimeView.onInitializeAccessibilityNodeInfoInternal``: "for
             accessibility we rather have a longer version")
  small      narrower than 16 px or lower than 12 px, or not wholly inside the screenshot
  cut        lower than 2.5 % of the screen's width: less than a line of the smallest text a phone
             draws (10 sp on a 393-dp-wide screen). The dump gives a node's visible box, so a line
             its list cuts at the edge of a bar drawn over it keeps a sliver of a box. Looked at,
             every such node in both parts: Weibo's counters (470/198/972, boxes 19 px) and two
             captions cut at the action bar show the top third to half of their glyphs (tuning, 27
             nodes, one of them also covered); "RPC token" and "aria2" (26 and 23 px) lie wholly under a bottom app bar
             (checking, 2 nodes)
  clipped    less than 80 % of its box inside every ancestor's box (scrolled out of its list)
  covered    half of its box or more under a node drawn later (document order is drawing
             order) that is neither its ancestor nor its descendant and either carries text
             or a content-desc in a box at most 4x its own (a web view's page-wide caption
             is a background, not a cover), or is clickable, larger than it and not a bare
             ``android.view.View`` (a transparent touch area): a drawer, popup, button bar or
             floating button drawn on top (the dump still lists what is behind it)

Span placeholders: Weibo writes ``*&*`` where it draws an inline icon or a gap and
``tag_margin_left`` where it leaves a margin ("*&**&*Follow" is drawn "+ Follow"). The node is
measured by its :func:`drawn_text`, the text with those removed.

The UI-tree tier is measured on the same node set, so both figures refer to one population.
"""

from __future__ import annotations

from remote.core.locate.ocr_text import canon
from remote.core.locate.ui_tree import UINode, UITree

STATE_WORDS = {"on", "off", "开启", "关闭", "开", "关", "已开启", "已关闭"}
REASONS = ("password", "state", "glyph", "alt", "web", "markup", "hotseat", "relative", "small", "cut", "clipped", "covered")
CUT_SHARE = 0.025   # a text box lower than this share of the screen's width holds no whole line
PLACEHOLDERS = ("*&*", "tag_margin_left")
WEB_VIEW = "android.webkit.WebView"


def drawn_text(n: UINode) -> str:
    """The node's text as the screen draws it: without the app's span placeholders."""
    text = n.text
    for token in PLACEHOLDERS:
        text = text.replace(token, " ")
    return text.strip()


def _area(b) -> int:
    return max(0, b[2] - b[0]) * max(0, b[3] - b[1])


def _inter(a, b) -> tuple[int, int, int, int]:
    return max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])


def _ancestors(tree: UITree, n: UINode) -> list[UINode]:
    out = []
    p = n.parent
    while p is not None:
        out.append(tree.nodes[p])
        p = tree.nodes[p].parent
    return out


def _reason(tree: UITree, n: UINode, size: tuple[int, int]) -> str:
    if n.password:
        return "password"
    cls = n.class_name.rsplit(".", 1)[-1]
    if ("Switch" in cls or "ToggleButton" in cls) and canon(n.text) in {canon(w) for w in STATE_WORDS}:
        return "state"
    if all("\ue000" <= c <= "\uf8ff" or c.isspace() for c in n.text):
        return "glyph"
    if n.class_name == "android.widget.Image":
        return "alt"
    if n.class_name == WEB_VIEW or any(all(abs(a - b) <= 2 for a, b in zip(n.bounds, w.bounds, strict=True))
                                       for w in tree.nodes if w.class_name == WEB_VIEW):
        return "web"
    if not drawn_text(n):
        return "markup"
    ancestors = _ancestors(tree, n)
    icon = n.clickable and n.content_desc.strip() == n.text.strip()   # Launcher3's icon: its title twice
    if icon and any(a.resource_id.endswith(":id/hotseat") for a in ancestors):
        return "hotseat"
    if n.resource_id == "android:id/time":
        return "relative"
    x1, y1, x2, y2 = n.bounds
    if n.width < 16 or n.height < 12 or x1 < 0 or y1 < 0 or x2 > size[0] or y2 > size[1]:
        return "small"
    if n.height < CUT_SHARE * size[0]:
        return "cut"
    box = n.bounds
    for a in ancestors:
        box = _inter(box, a.bounds)
    if _area(box) < 0.8 * _area(n.bounds):
        return "clipped"
    return "covered" if _covered(tree, n, ancestors) else ""


def _covered(tree: UITree, n: UINode, ancestors: list[UINode]) -> bool:
    """Half of ``n``'s box or more under a node drawn later that covers it (the module's docstring)."""
    skip = {a.position for a in ancestors}
    area = _area(n.bounds)
    for m in tree.nodes[n.position + 1:]:
        if m.position in skip or n.position in {a.position for a in _ancestors(tree, m)}:
            continue
        labelled = (m.text.strip() or m.content_desc.strip()) and _area(m.bounds) <= 4 * area
        # A bare clickable android.view.View is a transparent touch area, not something drawn.
        opaque = m.clickable and _area(m.bounds) > area and m.class_name != "android.view.View"
        if (labelled or opaque) and _area(_inter(n.bounds, m.bounds)) >= 0.5 * area:
            return True
    return False


def drawn_text_nodes(tree: UITree, size: tuple[int, int]) -> tuple[list[UINode], dict[str, int]]:
    """The visible text nodes the screen draws as text, and how many were left out per reason."""
    kept: list[UINode] = []
    left_out = dict.fromkeys(REASONS, 0)
    for n in tree.visible_nodes():
        if not n.text.strip():
            continue
        why = _reason(tree, n, size)
        if why:
            left_out[why] += 1
        else:
            kept.append(n)
    return kept, left_out
