"""Real phones, as the simulated phone imitates them: timings, the link, dump failures, power, keyguard.

The facts come from docs/adb.md#real-phones-behaviours-r1-r11 (R4-R6, R8-R11) and the sources named there;
docs/testing.md ("Real-phone behaviours") lists each key with its source and
says where a value is an assumption. The keys (all optional)::

    profile: real-usb            # real-usb | real-wifi: fills the timing keys left at their defaults
    link_mb_s: 38                # device -> host speed in MB/s (null: loopback speed)
    input_ms: 250                # `input` and `monkey` each start an app_process (R11)
    cmd_ms: 30                   # `cmd input`, `dumpsys`, `am`, `pm`, `ime`, `settings`: a native binary and a binder
                                 # call each (assumed, not measured)
    png_ms: 450                  # `screencap -p` encodes a PNG on the phone (§4.3)
    screencap_ms: 250            # a raw `screencap` captures before its first byte moves (below)
    idle_timeout_ms: 10000       # an `idle` dump failure takes this long (waitForIdle's 10 s)
    dump_failures: [null_root]   # the first dumps go so, in order: ok | idle | null_root | killed | registered
    automation_holder: null      # uiautomator2 | appium: another UiAutomation client holds the phone
    displays: 1                  # 2: a Flip-style phone with a cover display (R5)
    screen_off: false            # the phone sleeps (R6)
    keyguard: none               # none | swipe | pin (pin stands for any PIN, pattern or password)
    secure_layer: false          # the app's layer is FLAG_SECURE: black under a visible status bar (R8)
    rotation: 0                  # 0-3: the display is turned at start (R9); `settings put system user_rotation` turns it
    response_ms: 33              # what the screen shows keeps the state before a change for this long (below)
    transition_ms: 250           # ... and for this long when the change brought a new screen (an activity, an app)

`Hardware` is the per-phone state these keys start (awake, locked, the dumps
counted, taps timed for double taps); the shell commands in `remote.sim.android`
call the functions here, and the screen's own parts are in `remote.sim.real_screen`.
`cmd input` answers from Android 11 (the ``android`` key, `remote.sim.roms`) (R11).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, TypeAlias

from remote.errors import ConfigError
from remote.sim import tree_server

# The phone, its scenario and a command's context are passed in (remote.sim.device.Phone, .scenario.Scenario,
# .shell.Ctx); they are not imported here: device and scenario import this module.
Phone: TypeAlias = Any
Scenario: TypeAlias = Any
Ctx: TypeAlias = Any

# uiautomator2's resident server (remote.sim.tree_server; docs/devices.md "The resident tree server"):
# cold start 800 ms, "starting a Java helper via app_process costs ~800 ms" (Genymobile/scrcpy#112, its
# maintainer); a warm read 40 ms, the top of the 5-40 ms mobilecli PR #334 measured for a warm resident server
# (uiautomator2's users report "<100 ms", codematrixer/hmdriver2#10: `RANGES` has both ends).
# Its `takeScreenshot` (UiAutomation.takeScreenshot, then a JPEG at quality 80 on the phone): 24-450 ms. The low end
# is a resident capture daemon's full-resolution JPEG at quality 80 (24 ms, elliotgao2/handsets "Why adb screencap is
# slow"); the high end gains nothing over `screencap` (1080x2400 in ~450 ms, web-infra-dev/midscene PR #1842). The
# profiles charge 250 ms: "screencap takes 250 ms or so to capture" (Genymobile/scrcpy#112), the same SurfaceFlinger
# capture. No published figure times u2's own call, hence the range.
# Calls asked at once (a read beside a screenshot): u2.jar's HTTP server is NanoHTTPD, whose default runner serves
# each request on a thread of its own ("By default, the server spawns a new Thread for every incoming request",
# NanoHTTPD's DefaultAsyncRunner), and neither `AutomatorHttpServer.serve` nor `AutomatorServiceImpl`'s
# `dumpWindowHierarchy` / `takeScreenshot` takes a lock (openatx/android-uiautomator-server-jar @ 43363d8, a14a27a):
# the profiles answer them side by side, each at its own cost. How much a phone's cores slow two at once is not
# published: the dear end answers one call at a time (`tree_server_one_call` 1).
_TREE = {"tree_server_start_ms": 800, "tree_server_read_ms": 40, "tree_server_shot_ms": 250, "tree_server_one_call": 0}
# How long a change takes to reach the screen (remote.sim.phone shows the state before it for that long, to the
# screenshot, the dump and the tree server alike). An in-place change (a field focused, text committed, a list row
# added): "On a VSync event, the display begins showing frame N while SurfaceFlinger begins compositing windows for
# frame N+1. The app handles pending input and generates frame N+2" (source.android.com/docs/core/graphics/
# implement-vsync): two to three frames at 60 Hz, 33-50 ms. A new screen (an activity, an app brought up) is taken
# as drawn once its open animation has run: config_activityShortDur 150 ms (AOSP core/res/res/values/config.xml),
# activity_open_enter.xml's fade 200 ms and slide 350 ms (aosp-mirror/platform_frameworks_base @ 000cdd5): 150-350
# ms, 250 in the profiles. A real phone's tree can show the new activity before its animation ends (a product that
# waits for the tree then waits less); an app's cold start (seconds) is not modelled: the sim's launches are warm.
_DRAWN = {"response_ms": 33, "transition_ms": 250}
# A raw `screencap`'s capture before its first byte moves (`screencap_ms`; a PNG's `png_ms` holds its capture too):
# "screencap takes 250 ms or so to capture" (Genymobile/scrcpy#112) at the top; a raw screencap piped over netcat
# on emulators took 0.10-0.13 s in all (LmeSzinc/AzurLaneAutoScript#5703, #5107), so about 100 ms at the bottom.
_CAPTURE = {"screencap_ms": 250}
# The uncertain costs, both ends (bench/e2e_bench.py --compare-trees runs each end): a warm read 5-100 ms (above);
# a dump 1.0-3.0 s ("1-3 s": docs/adb.md; 0.9-3.2 s one-shot in mobilecli PR #334); `cmd_ms` 30-150 ms is
# an assumption at both ends (not measured: issue 35 reads it at 150 ms too).
RANGES: dict[str, tuple[int, int]] = {"tree_server_read_ms": (5, 100), "uiautomator_delay_ms": (1000, 3000),
                                      "cmd_ms": (30, 150), "tree_server_shot_ms": (24, 450),
                                      "response_ms": (33, 50), "transition_ms": (150, 350), "screencap_ms": (100, 250),
                                      "tree_server_one_call": (0, 1)}
PROFILES: dict[str, dict[str, Any]] = {
    # issue 25: dump 1.5 s, `input` 0.25 s, frames at USB 2.0 speed (~38 MB/s, R10)
    "real-usb": {"uiautomator_delay_ms": 1500, "input_ms": 250, "cmd_ms": 30, "png_ms": 450, "link_mb_s": 38.0,
                 **_TREE, **_DRAWN, **_CAPTURE},
    # the same phone over Wi-Fi ADB at 5 MB/s (the top of the 0.1-5 MB/s reported, R10)
    "real-wifi": {"uiautomator_delay_ms": 1500, "input_ms": 250, "cmd_ms": 30, "png_ms": 450, "link_mb_s": 5.0,
                  **_TREE, **_DRAWN, **_CAPTURE},
}
DUMP_FAILURES = ("ok", "idle", "null_root", "killed", "registered")   # "ok": this dump works
# What `ps -A` shows while each holder's UiAutomation client runs (package / process names).
HOLDERS: dict[str, tuple[str, ...]] = {
    "uiautomator2": ("com.github.uiautomator", "com.github.uiautomator.test"),
    "appium": ("io.appium.uiautomator2.server", "io.appium.uiautomator2.server.test"),
}
KEYGUARDS = ("none", "swipe", "pin")
DOUBLE_TAP_MIN_S, DOUBLE_TAP_MAX_S = 0.040, 0.300   # ViewConfiguration DOUBLE_TAP_MIN_TIME / DOUBLE_TAP_TIMEOUT
DOUBLE_TAP_SLOP_PX = 100
IDLE_TEXT = "ERROR: could not get idle state.\n"
NULL_ROOT_TEXT = "ERROR: null root node returned by UiTestAutomationBridge.\n"
REGISTERED_TEXT = ("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
                   "IAccessibilityServiceClient$Stub$Proxy@6b5d2a3already registered!\n"
                   "\tat android.app.UiAutomationConnection.registerUiTestAutomationServiceLocked(UiAutomationConnection"
                   ".java:456)\n\tat com.android.commands.uiautomator.DumpCommand.run(DumpCommand.java:90)\n")
_TIMING_KEYS = ("uiautomator_delay_ms", "input_ms", "cmd_ms", "png_ms", "link_mb_s", *_TREE, *_DRAWN, *_CAPTURE)


def settle(scenario: Scenario) -> None:
    """Fill the profile's timings into keys left at their defaults, then check every real-phone key."""
    name = scenario.profile
    if name is not None:
        if name not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)}, not {name!r}")
        defaults = {f: type(scenario).__dataclass_fields__[f].default for f in _TIMING_KEYS}
        for key, value in PROFILES[name].items():
            if getattr(scenario, key) == defaults[key]:
                object.__setattr__(scenario, key, value)
    for key in ("input_ms", "cmd_ms", "png_ms", "idle_timeout_ms", *_DRAWN, *_CAPTURE):
        value = getattr(scenario, key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{key} must be a whole number of milliseconds >= 0, not {value!r}")
    speed = scenario.link_mb_s
    if speed is not None and (isinstance(speed, bool) or not isinstance(speed, int | float) or not speed > 0):
        raise ConfigError(f"link_mb_s must be null or a speed in MB/s > 0, not {speed!r}")
    failures = scenario.dump_failures
    if isinstance(failures, str) or not all(f in DUMP_FAILURES for f in failures):
        raise ConfigError(f"dump_failures must be a list of {', '.join(DUMP_FAILURES)}, not {failures!r}")
    object.__setattr__(scenario, "dump_failures", tuple(failures))
    _choice(scenario, "automation_holder", (None, *HOLDERS))
    _choice(scenario, "keyguard", KEYGUARDS)
    _choice(scenario, "displays", (1, 2))
    _choice(scenario, "rotation", (0, 1, 2, 3))
    for key in ("screen_off", "secure_layer"):
        if not isinstance(getattr(scenario, key), bool):
            raise ConfigError(f"{key} must be true or false, not {getattr(scenario, key)!r}")


def _choice(scenario: Scenario, key: str, allowed: tuple[Any, ...]) -> None:
    value = getattr(scenario, key)
    if value not in allowed or isinstance(value, bool):
        shown = ", ".join("null" if a is None else str(a) for a in allowed)
        raise ConfigError(f"{key} must be one of {shown}, not {value!r}")


def android_major(phone: Phone) -> int:
    return int(str(phone.android_release).split(".")[0])


class Hardware:
    """What a real phone's body adds to the apps: power, the keyguard, dumps counted, taps timed."""

    def __init__(self, scenario: Scenario) -> None:
        self.awake = not scenario.screen_off
        self.locked = scenario.keyguard != "none"
        self.bouncer = False                        # the PIN / pattern / password pad is up
        self.dumps = 0                              # `uiautomator dump` runs started
        self.failures = list(scenario.dump_failures)
        self.last_tap: tuple[float, int, int] | None = None
        self.double_taps = 0                        # pairs of taps that a GestureDetector takes as a double tap
        self.unlocked_by_swipe = 0
        # the display's rotation (R9): the scenario's at start, turned at run time through the two Settings.System
        # keys real phones are turned with (`settings put system ...`, remote.sim.real_screen.put_rotation)
        self.rotation = scenario.rotation           # the display as turned now (Surface.ROTATION_0..270)
        self.user_rotation = scenario.rotation      # USER_ROTATION: used while the accelerometer is off
        self.auto_rotate = False                    # ACCELEROMETER_ROTATION

    def snapshot(self) -> dict[str, Any]:
        return {"awake": self.awake, "locked": self.locked, "bouncer": self.bouncer, "dumps": self.dumps,
                "double_taps": self.double_taps, "rotation": self.rotation}


# ---------------------------------------------------------------- timings and the link


PACE_CHUNK = 1 << 16


def paced(phone: Phone, data: bytes, stop: Any) -> Iterator[bytes]:
    """``data`` in pieces, each held for as long as the scenario's link needs to carry it (all at once if none)."""
    speed = phone.scenario.link_mb_s
    if not speed:
        yield data
        return
    view = memoryview(data)
    for start in range(0, len(data), PACE_CHUNK):
        piece = view[start:start + PACE_CHUNK]
        if stop.wait(len(piece) / (speed * 1_000_000)):
            return
        yield bytes(piece)


def native_tool(fn: Any) -> Any:
    """``dumpsys``, and ``am`` / ``pm`` / ``ime`` / ``settings`` (scripts that exec ``cmd activity|package|
    input_method|settings`` on current Androids): a native binary and a binder call, charged ``cmd_ms`` each,
    as ``cmd input`` is."""

    def run(ctx: Ctx, argv: list[str]) -> int:
        ctx.sleep(ctx.phone.scenario.cmd_ms / 1000)
        return int(fn(ctx, argv))

    return run


def app_process_start(ctx: Ctx) -> None:
    """`input` and `monkey` are Java programs: each call starts an app_process (R11)."""
    ctx.sleep(ctx.phone.scenario.input_ms / 1000)


# ---------------------------------------------------------------- uiautomator dump


def dump_failure(ctx: Ctx) -> tuple[str, int] | None:
    """Whether this dump fails, as (what it prints, exit status); it also takes the time it takes."""
    phone, scenario = ctx.phone, ctx.phone.scenario
    with phone.lock:
        phone.hw.dumps += 1
        held = tree_server.refuse_for_holder(phone)
        kind = "registered" if held and scenario.automation_holder == "appium" else \
            "killed" if held else phone.hw.failures.pop(0) if phone.hw.failures else None
    if kind is None or kind == "ok":
        return None
    if kind == "idle":   # waitForIdle(1000, 10000) gives up; the process still exits 0 (§7)
        ctx.sleep(scenario.idle_timeout_ms / 1000)
        return IDLE_TEXT, 0
    ctx.sleep(scenario.uiautomator_delay_ms / 1000)
    if kind == "null_root":
        return NULL_ROOT_TEXT, 0
    if kind == "killed":
        return "Killed\n", 137
    return REGISTERED_TEXT, 1


# ---------------------------------------------------------------- ps, cmd


def ps(ctx: Ctx, argv: list[str]) -> int:
    """toybox ``ps -A``: the processes a holder check looks for (and a few system ones)."""
    names = ["init", "zygote64", "system_server", "com.android.systemui", "adbd", "sh"]
    holder = ctx.phone.scenario.automation_holder
    if holder and tree_server.holder_present(ctx.phone):
        names += list(HOLDERS[holder])
    ctx.out("USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME\n")
    for i, name in enumerate(names):
        user = "root" if name in ("init", "zygote64", "adbd") else "shell" if name == "sh" else "u0_a201"
        ctx.out(f"{user:<12} {1 + 97 * i:>5} {1:>5} {12345678:>7} {65432:>6} 0                   0 S {name}\n")
    return 0


def cmd(ctx: Ctx, argv: list[str], services: dict[str, Any]) -> int:
    """``cmd SERVICE ARGS``: input through the binder from Android 11 (R11); a few others mapped to their tools."""
    if len(argv) < 2:
        ctx.err("cmd: No service specified; use -l to list all services\n")
        return 20
    service, rest = argv[1], argv[2:]
    if service == "input":
        ctx.sleep(ctx.phone.scenario.cmd_ms / 1000)
        if android_major(ctx.phone) < 11:    # InputManagerService has no shell command before Android 11
            ctx.err("No shell command implementation.\n")
            return 0
        return int(services["input"](ctx, ["input", *rest], app_process=False))
    tool = {"activity": "am", "package": "pm", "input_method": "ime"}.get(service)
    if tool is None:
        ctx.err(f"cmd: Can't find service: {service}\n")
        return 20
    return int(services[tool](ctx, [tool, *rest]))


# ---------------------------------------------------------------- power, keyguard, taps


def on_key(phone: Phone, code: int) -> bool:
    """Power keys and the keyguard; True when the key was used up here (the app does not get it)."""
    hw = phone.hw
    if code in (224, 26) and not hw.awake:            # WAKEUP, POWER: the screen comes on, still locked
        hw.awake = True
        phone.changed()
        return True
    if code in (223, 26):                             # SLEEP, POWER while awake: off, and locked again
        hw.awake, hw.bouncer = False, False
        hw.locked = phone.scenario.keyguard != "none"
        phone.changed()
        return True
    if not hw.awake:
        return True
    if hw.locked:
        if code == 4 and hw.bouncer:                  # BACK on the PIN pad: back to the lock screen
            hw.bouncer = False
            phone.changed()
        return True                                   # HOME, BACK, keys: the keyguard keeps them
    return False


def on_swipe(phone: Phone, x1: int, y1: int, x2: int, y2: int) -> bool:
    """A swipe up on the lock screen unlocks a keyguard without a PIN, or brings up the PIN pad."""
    hw = phone.hw
    if not hw.awake:
        return True
    if not hw.locked:
        return False
    if y1 - y2 > phone.size[1] // 4 and abs(x2 - x1) < abs(y1 - y2):
        if phone.scenario.keyguard == "swipe":
            hw.locked = False
            hw.unlocked_by_swipe += 1
        else:
            hw.bouncer = True
        phone.changed()
    return True


def on_tap(phone: Phone, x: int, y: int) -> bool:
    """Taps on a sleeping or locked phone do nothing; timed pairs count as double taps."""
    hw = phone.hw
    if not hw.awake or hw.locked:
        return True
    now = time.monotonic()
    last = hw.last_tap
    if last is not None and DOUBLE_TAP_MIN_S <= now - last[0] <= DOUBLE_TAP_MAX_S \
            and abs(x - last[1]) + abs(y - last[2]) <= DOUBLE_TAP_SLOP_PX:
        hw.double_taps += 1
        hw.last_tap = None
    else:
        hw.last_tap = (now, x, y)
    return False
