"""One screenshot as an agent sees it: a downscaled JPEG and the numbered element list, in one space.

The list follows the computer-use seed's format, one element a line, in the
image's pixels (``x,y`` is the top-left corner)::

    3. [Button] "搜索" (452,41 70x70) enabled id=search_icon
    7. [Edit] "" (36,1207 500x50) enabled focused value="你好" id=chat_input

Every coordinate an agent sends back is read in this image's space and mapped
to device pixels by `remote.core.coords`; `Shot` keeps both sizes. The element
choice is a pure function of a parsed UI tree (no I/O), so it is tested on
recorded dumps.
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass, field

from PIL import Image

from remote.core.coords import downscale_size, image_to_screen, point_to_screen, screen_to_image
from remote.core.locate.ui_tree import UINode, UITree
from remote.errors import ActionError

DEFAULT_MAX_SIDE = 720           # 720x1600 of a 1080x2400 phone: about what a vision model reads at full detail
DEFAULT_MAX_ELEMENTS = 80
JPEG_QUALITY = 70
QUALITY_STEPS = (70, 55, 40, 30)  # tried in turn until a default screenshot fits its reply budget
REPLY_BUDGET = 25_000            # characters of a default screenshot reply: the base64 image and the text
REPLY_OVERHEAD = 200             # the reply's JSON around its image and text
LABEL_CHARS = 60

_ROLES = {"EditText": "Edit", "AutoCompleteTextView": "Edit", "Button": "Button", "ImageButton": "Button",
          "CheckBox": "CheckBox", "Switch": "Switch", "ToggleButton": "Switch", "RadioButton": "Radio",
          "ImageView": "Image", "TextView": "Text", "ListView": "List", "RecyclerView": "List",
          "ScrollView": "List", "HorizontalScrollView": "List", "ViewPager": "List", "WebView": "Web",
          "SeekBar": "Slider", "ProgressBar": "Progress", "Spinner": "ComboBox"}


@dataclass(frozen=True)
class Element:
    """One listed element: device-pixel box (for acting) and the image box (what the agent saw)."""

    number: int
    role: str
    name: str
    bbox: tuple[int, int, int, int]
    image_bbox: tuple[int, int, int, int]
    states: tuple[str, ...] = ()
    value: str | None = None
    rid: str = ""

    def line(self) -> str:
        x1, y1, x2, y2 = self.image_bbox
        parts = [f"{self.number}. [{self.role}] {_quote(self.name)} ({x1},{y1} {x2 - x1}x{y2 - y1})", *self.states]
        if self.value is not None:
            parts.append(f"value={_quote(self.value)}")
        if self.rid:
            parts.append(f"id={self.rid.split(':id/')[-1]}")
        return " ".join(parts)


@dataclass
class Shot:
    """The last screenshot an agent was given: its coordinate space and its element numbering."""

    device_size: tuple[int, int]
    image_size: tuple[int, int]
    jpeg: bytes
    elements: list[Element] = field(default_factory=list)
    total_elements: int = 0
    package: str = ""
    activity: str = ""
    secure: bool = False
    tree_error: str = ""
    generation: int = 0          # the phone's count of actions when this was taken
    withheld: bool = False       # an app this session may not act in: no image, no element texts
    taken_at: float = field(default_factory=time.time)

    @property
    def scale(self) -> float:
        """Device pixels per image pixel (>= 1 when downscaled)."""
        return self.device_size[0] / self.image_size[0]

    def to_device(self, x: float, y: float) -> tuple[int, int]:
        """A point in this image, in device pixels (clipped to the screen)."""
        w, h = self.image_size
        if not (0 <= x < w and 0 <= y < h):
            raise ActionError(f"({x:g}, {y:g}) is outside the last screenshot ({w}x{h})",
                              hint="coordinates are pixels of the last screenshot image")
        return point_to_screen((x, y), self.image_size, self.device_size)

    def to_image(self, x: int, y: int) -> tuple[int, int]:
        box = screen_to_image((x, y, x + 1, y + 1), self.device_size, self.image_size)
        return (box[0], box[1]) if box else (0, 0)

    def region_to_device(self, region: list[float]) -> tuple[int, int, int, int]:
        if len(region) != 4:
            raise ActionError("region must be [x1, y1, x2, y2] in the last screenshot's pixels")
        x1, y1, x2, y2 = region
        if x2 <= x1 or y2 <= y1:
            raise ActionError(f"region {region} is empty: x2 > x1 and y2 > y1 are needed")
        box = image_to_screen(region, self.image_size, self.device_size)
        if box is None:
            raise ActionError(f"region {region} is not a box of numbers")
        return box

    def element(self, number: int) -> Element:
        for e in self.elements:
            if e.number == number:
                return e
        raise ActionError(f"there is no element {number} in the last screenshot "
                          f"(it lists 1-{len(self.elements)})", hint="take a new screenshot")

    def header(self) -> str:
        (w, h), (dw, dh) = self.image_size, self.device_size
        front = f"{self.package}/{self.activity}" if self.activity else (self.package or "unknown")
        return (f"screenshot {w}x{h} of a {dw}x{dh} screen: 1 image px = {self.scale:.4g} device px; "
                f"every coordinate you send is read in this image's pixels. Foreground: {front}.")

    def element_text(self) -> str:
        if self.withheld:
            note = (f"{self.package} is not in this session's allowed apps: its screen is not shown and its "
                    "element names are withheld (call request_access for it, or press home)")
            if self.tree_error or not self.elements:
                return note
            return "\n".join([note + ":", *(e.line() for e in self.elements)])
        if self.tree_error:
            return f"GUI elements: unavailable ({self.tree_error})"
        lines = [f"GUI elements ({len(self.elements)} of {self.total_elements}; (x,y wxh) in image pixels, "
                 "x,y = top-left; act on one with element=N):"]
        lines += [e.line() for e in self.elements]
        hidden = self.total_elements - len(self.elements)
        if hidden > 0:
            lines.append(f"... {hidden} more not listed: call screenshot(max_elements={self.total_elements}) "
                         "to see them all")
        return "\n".join(lines)

    def text(self, lines: list[str] | None = None) -> str:
        """What a screenshot reply says besides its image: ``lines`` (a batch's), the header, the list."""
        return "\n".join([*(lines or []), self.header(), self.element_text()])


def encode_jpeg(image: Image.Image, max_side: int, budget: int | None = None) -> tuple[bytes, tuple[int, int]]:
    """A JPEG whose longer side is at most ``max_side``, and its size.

    With ``budget`` (characters of base64), lower qualities are tried until the image fits (the lowest is
    kept when none does)."""
    size = downscale_size(image.size, max_side)
    small = image.convert("RGB")
    if size != image.size:
        small = small.resize(size, Image.Resampling.BILINEAR)
    data = b""
    for quality in (QUALITY_STEPS if budget is not None else (JPEG_QUALITY,)):
        buf = io.BytesIO()
        small.save(buf, "JPEG", quality=quality)
        data = buf.getvalue()
        if budget is None or base64_chars(len(data)) <= budget:
            break
    return data, size


def base64_chars(n_bytes: int) -> int:
    return 4 * ((n_bytes + 2) // 3)


def role(node: UINode) -> str:
    short = node.class_name.rsplit(".", 1)[-1]
    name = _ROLES.get(short)
    if name is None:
        return "Item" if node.clickable or node.long_clickable else (short or "View")
    if name in ("Image", "Text") and (node.clickable or node.long_clickable):
        return "Button"
    return name


def _interactive(node: UINode) -> bool:
    return (node.clickable or node.long_clickable or node.checkable or node.scrollable
            or "EditText" in node.class_name)


def _descendant_labels(tree: UITree, node: UINode, limit: int = 3) -> list[str]:
    out: list[str] = []
    stack = list(reversed(node.children))
    while stack and len(out) < limit:
        child = tree.nodes[stack.pop()]
        if child.label.strip() and tree.on_screen(child):
            out.append(child.label.strip())
        stack.extend(reversed(child.children))
    return out


def _states(node: UINode, focused_ok: bool = True) -> tuple[str, ...]:
    states = ["enabled" if node.enabled else "disabled"]
    if node.checkable:
        states.append("checked" if node.checked else "unchecked")
    if node.focused and focused_ok:
        states.append("focused")
    if node.selected:
        states.append("selected")
    if node.scrollable:
        states.append("scrollable")
    return tuple(states)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def pick_nodes(tree: UITree) -> list[tuple[UINode, str]]:
    """The nodes worth listing, in document order, with the name to show.

    Interactive nodes (clickable, checkable, scrollable, editable) are listed,
    named by their own text or content-desc, else by their descendants' texts;
    a text inside a listed clickable row is part of the row's name, not a line
    of its own. Off-screen and empty nodes are skipped.
    """
    listed: set[int] = set()
    out: list[tuple[UINode, str]] = []
    for node in tree.nodes:
        if not tree.on_screen(node):
            continue
        if _interactive(node):
            if "EditText" in node.class_name:
                name = node.content_desc
            else:
                name = node.label.strip() or " · ".join(_descendant_labels(tree, node))
            listed.add(node.position)
            out.append((node, _short(name)))
        elif node.label.strip():
            target = tree.clickable_target(node)
            if target.position in listed:
                continue
            out.append((node, _short(node.label)))
    return out


def build_elements(tree: UITree, device_size: tuple[int, int], image_size: tuple[int, int],
                   max_elements: int = DEFAULT_MAX_ELEMENTS, *, names: bool = True) -> tuple[list[Element], int]:
    """Numbered elements in image coordinates (at most ``max_elements``) and how many there were.

    ``names=False`` (an app the agent may not see) keeps roles, boxes and states and drops every text."""
    picked = pick_nodes(tree)
    elements: list[Element] = []
    for node, name in picked[:max(0, max_elements)]:
        image_box = screen_to_image(node.bounds, device_size, image_size) or (0, 0, 1, 1)
        value = None
        if "EditText" in node.class_name:
            value = "•" * len(node.text) if node.password else _short(node.text)
        if not names:
            name, value = "", None
        elements.append(Element(number=len(elements) + 1, role=role(node), name=name, bbox=node.bounds,
                                image_bbox=image_box, states=_states(node), value=value,
                                rid=node.resource_id if names else ""))
    return elements, len(picked)
