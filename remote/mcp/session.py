"""The state an MCP session keeps: its allow list, its last screenshot's space, its image size.

One `Hub` per server process (one phone): the controller, the locator, the lock
and the count of actions, shared by every session. One `Session` per MCP
session (per client connection; `remote.mcp.calls` picks it): a grant made in
one never reaches another. Tool calls run in worker threads; `busy()`
serialises them on the phone, with a bounded wait. The last `Shot` is the one
coordinate space the agent works in (its numbering and its scale);
``generation`` counts the actions done on the phone since, so a stale element
number is checked before it is used.
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
from remote.apps.learned import LearnedStore
from remote.config import LLMConfig
from remote.core.coords import downscale_size
from remote.core.device.adb_controller import ADBController
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.core.locate.ui_tree import UITree, UITreeError, parse_hierarchy
from remote.core.records import LocateStrategy
from remote.core.safe_files import private_dir
from remote.errors import ActionError, DeviceCommandError, SecureScreen
from remote.mcp.access import AccessGate
from remote.mcp.gated import GatedDevice
from remote.mcp.journal import Journal, screen_for
from remote.mcp.shot import (
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_MAX_SIDE,
    REPLY_BUDGET,
    REPLY_OVERHEAD,
    Shot,
    build_elements,
    encode_jpeg,
)
from remote.runner.tools import Capture

logger = logging.getLogger(__name__)


@dataclass
class SessionOptions:
    runs_dir: str | Path | None = "runs"
    work_dir: Path | None = None     # teach pictures; None: this user's private folder (safe_files.private_dir)
    busy_wait: float = 60.0          # how long a call waits for the previous one to leave the phone
    launch_settle_s: float = 0.6     # how long an app opened from the home screen may take to come to the front
    learned: LearnedStore | None = None   # learned tasks (docs/learning.md): run_task replays them, save_task adds
    learn: bool = True               # False (--no-learn): replays are not counted and nothing new is saved


class Hub:
    """The one phone every session shares: its controller, locator, verifier, lock and count of actions."""

    def __init__(self, adb: ADBController, registry: ModuleRegistry, llm: LLMConfig | None, phone: Any,
                 options: SessionOptions) -> None:
        self.adb = adb
        self.registry = registry
        self.llm = llm if llm is not None and llm.configured else None
        self.phone = phone                  # the simulated phone, when there is one (for run records)
        self.options = options
        self.locator = build_locator(adb, registry, self.llm)
        self.verifier = Verifier(None)      # only its model-free checks: screen changed or not
        self.generation = 0                 # actions done on the phone, by any session
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def busy(self, wait: float | None = None) -> Iterator[Hub]:
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


class Session:
    """One agent's view of the shared phone: its allow list, its last screenshot and its image size.

    ``Session(adb, gate=...)`` makes a phone hub of its own; ``session.fork(scope)`` makes another agent's
    session on the same hub, starting from this one's allow list (the operator's ``--allow``). ``device``
    is the gated controller every acting tool goes through.
    """

    def __init__(self, adb: ADBController, *, registry: ModuleRegistry | None = None,
                 llm: LLMConfig | None = None, gate: AccessGate | None = None, phone: Any = None,
                 options: SessionOptions | None = None, hub: Hub | None = None,
                 scope: str = "this server's sessions") -> None:
        self.hub = hub or Hub(adb, registry or ModuleRegistry(), llm, phone, options or SessionOptions())
        self.gate = gate or AccessGate()
        self.scope = scope                  # who a grant made here applies to, as the replies say it
        self.device = GatedDevice(self.hub.adb, self.gate, on_act=self._acted,
                                  settle_s=self.hub.options.launch_settle_s)
        self.shot: Shot | None = None
        self.max_side = DEFAULT_MAX_SIDE    # the image size this agent asked for last
        self.teach_pending: dict[str, Any] = {}
        self.journal = Journal()            # the acts that worked, for save_task (remote.mcp.learn)
        self._tree: tuple[int, UITree | None] = (-1, None)   # the last tree dumped, and the generation it saw
        self._seen: tuple[int, Screen | None] = (-1, None)   # the last live screen, and the generation it saw

    def fork(self, scope: str) -> Session:
        return Session(self.adb, gate=AccessGate(self.gate.allowed, self.gate.system), hub=self.hub, scope=scope)

    # ------------------------------------------------------------------ the shared phone
    @property
    def adb(self) -> ADBController:
        return self.hub.adb

    @property
    def registry(self) -> ModuleRegistry:
        return self.hub.registry

    @property
    def llm(self) -> LLMConfig | None:
        return self.hub.llm

    @property
    def phone(self) -> Any:
        return self.hub.phone

    @property
    def options(self) -> SessionOptions:
        return self.hub.options

    @property
    def locator(self) -> HybridLocator:
        return self.hub.locator

    @property
    def verifier(self) -> Verifier:
        return self.hub.verifier

    @property
    def generation(self) -> int:
        return self.hub.generation

    def busy(self, wait: float | None = None) -> contextlib.AbstractContextManager[Hub]:
        return self.hub.busy(wait)

    def _acted(self) -> None:
        self.hub.generation += 1

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
        screen = Capture(self.adb).screen(tree=True)
        self._seen = (self.generation, screen)
        return screen

    def tree(self) -> UITree | None:
        try:
            tree: UITree | None = parse_hierarchy(self.adb.dump_hierarchy(), self.adb.window_size())
        except (DeviceCommandError, UITreeError) as exc:
            logger.warning("UI dump failed: %s", exc)
            tree = None
        self._tree = (self.generation, tree)
        return tree

    def screen_at(self, point: tuple[int, int]) -> Screen | None:
        """The screen an act at ``point`` decides on, for the journal: the tree dumped for this act (none when
        the phone was touched since), with the image only where the element there shows no text."""
        generation, screen = self._seen
        if generation == self.generation and screen is not None and screen.tree() is not None:
            return screen
        generation, tree = self._tree
        if generation != self.generation:
            return None
        return screen_for(tree, point, self.adb.window_size(), self.capture)

    def image_side(self, max_side: int | None) -> int:
        """The image size to use: the one asked for now (remembered for later calls), else the last one."""
        if max_side is not None:
            self.max_side = int(max_side)
        return self.max_side

    def screenshot(self, max_side: int | None = None, with_elements: bool = True,
                   max_elements: int = DEFAULT_MAX_ELEMENTS) -> Shot:
        """Take a new screenshot; it becomes the session's coordinate space and element numbering.

        The screen of an app this session may not act in is described, not shown: no image, no texts."""
        side = self.image_side(max_side)
        image, secure = self.capture()
        front = self.front()
        package = front.get("package", "")
        withheld = not self.gate.allows(package)
        shot = Shot(device_size=image.size, image_size=downscale_size(image.size, side), jpeg=b"",
                    package=package, activity=front.get("activity", ""), secure=secure,
                    generation=self.generation, withheld=withheld)
        if with_elements:
            try:
                tree = parse_hierarchy(self.adb.dump_hierarchy(), image.size)
                shot.elements, shot.total_elements = build_elements(tree, image.size, shot.image_size,
                                                                    max_elements, names=not withheld)
            except (DeviceCommandError, UITreeError) as exc:
                shot.tree_error = str(exc)
        else:
            shot.tree_error = "not asked for (with_elements=false)"
        if not withheld:
            # A default screenshot fits its reply budget; a size the agent chose is given as asked.
            budget = None if max_side is not None else REPLY_BUDGET - REPLY_OVERHEAD - len(shot.text())
            shot.jpeg = encode_jpeg(image, side, budget)[0]
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
