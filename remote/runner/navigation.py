"""Getting somewhere before the real work: an app's home screen, an app found on the launcher's pages.

A ``Navigator`` is handed the step tools and the ``Aimer`` (for popups in the way).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from remote.core.locate.screen import Screen
from remote.core.locate.target_ref import default_tiers, parse_target
from remote.core.records import FailureReason, LocateResult, StepPlan, StepResult
from remote.runner.aiming import Aimer
from remote.runner.outcome import Ended, StepEnd
from remote.runner.tools import AppMissing, StepTools

LAUNCHER_PAGES = 8
HOME_PRESSES = 10


class Navigator:
    def __init__(self, tools: StepTools, aimer: Aimer) -> None:
        self.tools = tools
        self.aimer = aimer

    def capture(self) -> Screen:
        return self.tools.capture.screen(tree=True)

    def _drawn(self, wait_s: float, app: str | None = None, *, look: bool = True) -> None:
        """The wait after a swipe, a tap or a key here: ended once the screen shows its effect when trees are cheap
        (`Capture.await_drawn`: the last screen looked at is the one acted on); ``look``: the screen is looked at
        next (the wait's last read is made beside a frame for it)."""
        self.tools.capture.await_drawn(wait_s, self.tools.clock.sleep, app=app, keep=look)

    def launch_from_launcher(self, name: str, sr: StepResult) -> StepEnd:
        """An app the modules do not know by name: its label on the launcher's pages (UI tree only)."""
        device = self.tools.device
        device.go_home()
        seen: list[str] = []
        pages = 0
        for page in range(LAUNCHER_PAGES):
            screen = self.capture()
            tree = screen.tree()
            texts = tree.texts() if tree is not None else []
            if page and texts == seen:
                break   # the last page: swiping on shows the same labels
            seen, pages = texts, page + 1
            loc = self.tools.locator.locate_with_fallback(f"text:{name}", ["tree"], screen)
            if loc.success and loc.reliable and loc.element is not None:
                device.tap(*loc.element.center)
                self._drawn(0.8, look=False)   # the app in front is asked next, not the screen
                package = device.current_app().get("package", "")
                if package:
                    self.tools.apps.launched.append(package)
                sr.locate_result, sr.screenshot_before = loc, screen
                return Ended.ok(f"opened {name} from launcher page {page + 1}"), None
            device.swipe_direction("left")
            self._drawn(0.4)
        raise AppMissing(f"no app named {name} on this phone: not an app the modules know, and not on the "
                         f"launcher's {pages} page(s)", hint="check the name on the phone", final=False)

    def free_locate(self, target: str, screen: Screen) -> LocateResult:
        """A marker looked for by the free tiers only: asking the model on every BACK press would cost a call
        per press, and a marker is a thing the screen shows plainly."""
        tiers = [t for t in default_tiers(parse_target(target)[0]) if t != "vision"]
        return self.tools.locator.locate_with_fallback(target, tiers, screen)

    def back_to_home(self, step: StepPlan, sr: StepResult) -> StepEnd:
        """BACK until a home marker of the app in front is on screen (at most 10 presses)."""
        device = self.tools.device
        # The home of the app in front (a model plan may open another app than the routed module's), read beside
        # the first look at the screen (two reads: adbd runs each stream apart)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="front-app") as pool:
            front_read = pool.submit(device.current_app)
            first: Screen | None = self.capture()
            front = front_read.result().get("package", "")
        homes = step.targets or self.tools.apps.home_refs.get(front) or self.tools.home_refs
        # BACK that leaves the app comes back into it: the app in front, when the step names its own home
        # markers (a learned task's way back) or a module knows its home; else the routed module's app
        package = front if front and (step.targets or front in self.tools.apps.home_refs) \
            else self.tools.module_package
        if not homes:
            return Ended.failed(FailureReason.INVALID_PLAN, "the module declares no home_ref"), None
        home = " or ".join(homes)
        for presses in range(HOME_PRESSES + 1):
            screen = self.aimer.clear_blockers(first or self.capture(), sr)
            first = None
            found = next((loc for loc in (self.free_locate(h, screen) for h in homes) if loc.success), None)
            if found is not None:
                sr.screenshot_after = screen
                return Ended.ok(f"home after {presses} BACK presses"), screen
            if self.tools.dry_run or presses == HOME_PRESSES:
                break
            if package and device.current_app().get("package") not in ("", package):
                device.launch_app(package)   # BACK left the app: come back in
                self._drawn(0.5, app=package)
                continue
            device.press_back()
            self._drawn(0.3)
        return Ended.failed(FailureReason.NOT_FOUND, f"{home} not seen after 10 BACK presses"), None
