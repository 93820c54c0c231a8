"""The steps that need no look (launch, link, call, keys, waits, home, swipes): one typed action each.

The executor reads the step's parsed ``args`` only (never ``params``); every
repeat and wait goes through the run's clock, so a plan cannot outlast its budget.
"""

from __future__ import annotations

from typing import assert_never

from remote.core.plan.actions import Call, GoHome, LaunchApp, OpenUrl, PressKey, Swipe, Wait
from remote.core.records import StepPlan
from remote.runner.tools import StepTools

# What a step that needs no look may be: the actions ``Actor.act`` carries out (a fallback step too).
NoLook = LaunchApp | OpenUrl | Call | GoHome | Wait | PressKey | Swipe


class Actor:
    def __init__(self, tools: StepTools) -> None:
        self.tools = tools

    def act(self, step: StepPlan) -> None:
        """Carry out a step that needs no target on the screen; TypeError for one that does (a tap, typing)."""
        device, clock, args = self.tools.device, self.tools.clock, step.args
        if not isinstance(args, NoLook):
            raise TypeError(f"{step.action.value} needs a look at the screen, not a blind action")
        match args:
            case LaunchApp():
                self.launch(args)
            case OpenUrl():
                device.open_url(args.url)
            case Call():
                device.call(args.number)
            case GoHome():
                device.go_home()
            case PressKey():
                for _ in range(args.times):
                    clock.check()
                    device.input_keyevent(args.key)
            case Wait():
                clock.sleep(args.ms / 1000)
            case Swipe():
                self.swipe(args)
            case _:
                assert_never(args)

    def swipe(self, args: Swipe) -> None:
        if args.direction is not None:
            self.tools.device.swipe_direction(args.direction, args.distance, args.duration_ms)
        elif args.start is not None and args.end is not None:
            self.tools.device.swipe(*args.start, *args.end, duration_ms=args.duration_ms)

    def launch(self, args: LaunchApp) -> str | None:
        """Launch by package (after checking it is installed), or by a known name; None when the name is not
        one the modules know (the step runner then looks for it on the launcher)."""
        apps = self.tools.apps
        package = args.package or (apps.package_for(args.name) if args.name else None)
        if package is None:
            return None
        apps.require_installed(package, args.name)
        self.tools.device.launch_app(package)
        apps.launched.append(package)
        return package
