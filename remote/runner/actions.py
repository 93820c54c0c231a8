"""The steps that need no look (launch, link, call, keys, waits, home, swipes): one typed action each.

The executor reads the step's parsed ``args`` only (never ``params``); every
repeat and wait goes through the run's clock, so a plan cannot outlast its budget.
"""

from __future__ import annotations

from remote.core.plan.actions import (
    BackToHome,
    Call,
    Finish,
    GoHome,
    InputText,
    LaunchApp,
    LongPress,
    OpenUrl,
    PressKey,
    Swipe,
    TakeOver,
    Tap,
    Wait,
)
from remote.core.records import StepPlan
from remote.runner.tools import StepTools

BLIND = (LaunchApp, OpenUrl, Call, GoHome, Wait, PressKey, Finish)


class Actor:
    def __init__(self, tools: StepTools) -> None:
        self.tools = tools

    def act(self, step: StepPlan) -> None:
        """Carry out a step that needs no target on the screen."""
        device, clock, args = self.tools.device, self.tools.clock, step.args
        if isinstance(args, LaunchApp):
            self.launch(args)
        elif isinstance(args, OpenUrl):
            device.open_url(args.url)
        elif isinstance(args, Call):
            device.call(args.number)
        elif isinstance(args, GoHome):
            device.go_home()
        elif isinstance(args, PressKey):
            for _ in range(args.times):
                clock.check()
                device.input_keyevent(args.key)
        elif isinstance(args, Wait):
            clock.sleep(args.ms / 1000)
        elif isinstance(args, Swipe):
            self.swipe(args)
        elif not isinstance(args, Finish | Tap | LongPress | InputText | BackToHome | TakeOver):
            raise TypeError(f"no blind action for {type(args).__name__}")

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
