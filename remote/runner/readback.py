"""What a text field holds: from a UI tree at hand, else (the dump failed) read by OCR in the field's box.

Typing verifies by reading the field back (ADBKeyboard's broadcast says nothing of
delivery, docs/adb.md#adbkeyboard). The field's text before typing is often already known from
the tree the step located the field in; after typing the phone is dumped. When that
dump fails (R4), the field is read on the screenshot instead, inside its box: the typing step makes
that reader (`ocr_reader`) from the field it located and hands it to `Device.input_text`.
"""

from __future__ import annotations

import logging

from remote.core.device.protocol import Device, FieldRead, FrameSource
from remote.core.locate import ocr
from remote.core.locate.screen import Screen
from remote.core.locate.ui_tree import UINode

logger = logging.getLogger(__name__)
PAD_PX = 6


def field_node(screen: Screen | None, box: tuple[int, int, int, int] | None = None) -> UINode | None:
    """The text field at ``box`` in the screen's tree (else the focused one); None without a tree or a field."""
    tree = screen.tree() if screen is not None else None
    if tree is None:
        return None
    nodes = [n for n in tree.nodes if n.bounds == box] if box is not None else []
    focused = tree.focused_node()
    return next((n for n in [*nodes, *([focused] if focused else [])] if _editable(n)), None)


def _editable(node: UINode) -> bool:
    return any(kind in node.class_name for kind in ("EditText", "AutoCompleteTextView"))


def field_text(node: UINode | None) -> str | None:
    """What the field shows as text ("" for its hint); None when unknown (no field, a password)."""
    if node is None or node.password:
        return None
    return "" if node.hint and node.text == node.hint else node.text


def ocr_reader(device: Device, box: tuple[int, int, int, int] | None, last: Screen | None) -> FieldRead:
    """A reader, by OCR on a new frame, of the field in ``box`` (else of the focused field in ``last``'s tree,
    the last screen that came with one); it reads nothing until called, and changes nothing."""

    def read() -> str | None:
        where = box
        if where is None:
            node = field_node(last)
            where = node.bounds if node is not None else None
        if where is None or not ocr.available():
            logger.warning("no field to read back by OCR (%s)", "no OCR" if where else "its place is unknown")
            return None
        frame = device.frame(allow_uniform=True) if isinstance(device, FrameSource) else device.screenshot()
        shot = Screen(frame)
        x1, y1, x2, y2 = where
        w, h = shot.size
        crop = shot.bgr[max(0, y1 - PAD_PX):min(h, y2 + PAD_PX), max(0, x1 - PAD_PX):min(w, x2 + PAD_PX)]
        lines = sorted(ocr.read_text(crop), key=lambda b: (b.bbox[1] // 20, b.bbox[0]))
        text = "".join(b.text for b in lines)
        logger.info("field read back by OCR: %r", text)
        return text

    return read

