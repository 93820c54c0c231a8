"""The state one MCP session keeps: the phone, the allow list, and the last screenshot's space.

One `Session` per server process (one phone). Tool calls run in worker threads;
`busy()` serialises them on the phone, with a bounded wait, so a call that timed
out cannot make the next one hang. The last `Shot` is the one coordinate space
the agent works in (its numbering and its scale); ``generation`` counts the
actions done since, so a stale element number is checked before it is used.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from remote.ai.verifier import Verifier
from remote.apps import ModuleRegistry
from remote.config import LLMConfig
from remote.core.device.adb_controller import ADBController
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.core.locate.ui_tree import UITree, UITreeError, parse_hierarchy
from remote.core.records import LocateStrategy
from remote.core.safe_files import private_dir
from remote.errors import ActionError, DeviceCommandError, SecureScreen
from remote.mcp.access import AccessGate, GatedDevice
from remote.mcp.shot import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_SIDE, Shot, build_elements, encode_jpeg
from remote.runner.tools import Capture

logger = logging.getLogger(__name__)


@dataclass
class SessionOptions:
    runs_dir: str | Path | None = "runs"
    work_dir: Path | None = None     # teach pictures; None: this user's private folder (safe_files.private_dir)
    busy_wait: float = 60.0          # how long a call waits for the previous one to leave the phone


class Session:
    """Everything the tools share. ``device`` is the gated controller every acting tool goes through."""

    def __init__(self, adb: ADBController, *, registry: ModuleRegistry | None = None,
                 llm: LLMConfig | None = None, gate: AccessGate | None = None, phone: Any = None,
                 options: SessionOptions | None = None) -> None:
        self.adb = adb
        self.registry = registry or ModuleRegistry()
        self.llm = llm if llm is not None and llm.configured else None
        self.gate = gate or AccessGate()
        self.phone = phone                  # the simulated phone, when there is one (for run records)
        self.options = options or SessionOptions()
        self.device = GatedDevice(adb, self.gate, on_act=self._acted)
        self.locator = build_locator(adb, self.registry, self.llm)
        self.verifier = Verifier(None)      # only its model-free checks: screen changed or not
        self.shot: Shot | None = None
        self.generation = 0
        self.teach_pending: dict[str, Any] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ concurrency
    @contextlib.contextmanager
    def busy(self, wait: float | None = None) -> Iterator[Session]:
        """Hold the phone for one call; fail clearly when an earlier call still holds it."""
        limit = self.options.busy_wait if wait is None else wait
        if not self._lock.acquire(timeout=max(0.0, limit)):
            raise ActionError(f"the phone is still busy with an earlier call after {limit:.0f} s",
                              hint="an earlier call may have timed out while the phone hung; try again, or "
                                   "check the phone's connection")
        try:
            yield self
        finally:
            self._lock.release()

    def _acted(self) -> None:
        self.generation += 1

    def acted(self) -> None:
        """Note an action done outside `device` (a whole task): element numbers may be stale now."""
        self._acted()

    # ------------------------------------------------------------------ looking
    def front(self) -> dict[str, str]:
        return self.adb.current_app()

    def capture(self) -> tuple[Image.Image, bool]:
        """The native-resolution frame, and whether it is a secure (black) screen."""
        try:
            return self.adb.screenshot(), False
        except SecureScreen:
            return Image.new("RGB", self.adb.window_size(), (0, 0, 0)), True

    def live_screen(self) -> Screen:
        """A screen with the UI dump taken with it (for text:/desc:/id: targets)."""
        return Capture(self.adb).screen(tree=True)

    def tree(self) -> UITree | None:
        try:
            return parse_hierarchy(self.adb.dump_hierarchy(), self.adb.window_size())
        except (DeviceCommandError, UITreeError) as exc:
            logger.warning("UI dump failed: %s", exc)
            return None

    def screenshot(self, max_side: int = DEFAULT_MAX_SIDE, with_elements: bool = True,
                   max_elements: int = DEFAULT_MAX_ELEMENTS) -> Shot:
        """Take a new screenshot; it becomes the session's coordinate space and element numbering."""
        image, secure = self.capture()
        jpeg, size = encode_jpeg(image, max_side)
        front = self.front()
        shot = Shot(device_size=image.size, image_size=size, jpeg=jpeg, package=front.get("package", ""),
                    activity=front.get("activity", ""), secure=secure, generation=self.generation)
        if with_elements:
            try:
                tree = parse_hierarchy(self.adb.dump_hierarchy(), image.size)
                shot.elements, shot.total_elements = build_elements(tree, image.size, size, max_elements)
            except (DeviceCommandError, UITreeError) as exc:
                shot.tree_error = str(exc)
        else:
            shot.tree_error = "not asked for (with_elements=false)"
        self.shot = shot
        return shot

    def require_shot(self) -> Shot:
        if self.shot is None:
            raise ActionError("no screenshot yet: coordinates and element numbers refer to the last screenshot",
                              hint="call screenshot first, or name the target with target_ref (text:…, desc:…)")
        return self.shot

    def work_dir(self) -> Path:
        if self.options.work_dir is None:
            return private_dir("mcp")   # not a fixed name in the shared temp folder: symlinks planted there
        path = Path(self.options.work_dir)
        path.mkdir(parents=True, exist_ok=True)
        return path


def build_locator(adb: Any, registry: ModuleRegistry, llm: LLMConfig | None) -> HybridLocator:
    """Every module's reference images; the vision tier only when a vision model is configured."""
    assets = AssetsManager(module_dirs=[m.path for m in registry.modules.values()])
    vision, strategy = None, LocateStrategy.OPENCV_ONLY
    if llm is not None and llm.supports_vision:
        from remote.ai.vision_agent import VisionAgent

        vision, strategy = VisionAgent(llm, assets=assets), LocateStrategy.OPENCV_FIRST
    return HybridLocator(adb, assets=assets, vision=vision, strategy=strategy)
