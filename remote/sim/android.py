"""Android's shell services, answering with the texts real devices print.

``input`` (tap/swipe/keyevent/text), ``am`` (start, broadcast for ADBKeyboard: `keyboard.receive`,
force-stop), ``dumpsys`` (window, display, input_method, activity, audio), ``ime`` (in `keyboard`),
``screencap``, ``uiautomator dump``, ``monkey -p``, ``pm list packages``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from remote.sim import clipboard, keyboard, real_screen, realism, roms, tree_server
from remote.sim.device import ADB_IME
from remote.sim.shell import CommandFn, Ctx

KEYCODES = {"HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21,
            "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27,
            "SPACE": 62, "TAB": 61, "ENTER": 66, "DEL": 67, "MENU": 82, "SEARCH": 84, "FORWARD_DEL": 112,
            "ESCAPE": 111, "MOVE_HOME": 122, "MOVE_END": 123, "APP_SWITCH": 187, "WAKEUP": 224, "SLEEP": 223,
            **{str(d): 7 + d for d in range(10)}, **{chr(65 + i): 29 + i for i in range(26)}}
ADB_PACKAGE = ADB_IME.split("/", 1)[0]
LAUNCHER = "android.intent.category.LAUNCHER"
_NPE = ("Exception occurred while executing 'text':\n"
        "java.lang.NullPointerException: Attempt to get length of null array\n"
        "\tat com.android.server.input.InputShellCommand.sendText(InputShellCommand.java:374)\n"
        "\tat com.android.server.input.InputShellCommand.runText(InputShellCommand.java:352)\n"
        "\tat com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:266)\n")


# ---------------------------------------------------------------- input


def input_(ctx: Ctx, argv: list[str], *, app_process: bool = True) -> int:
    if app_process:   # `input` is a Java program (an app_process per call); `cmd input` is not (realism.cmd)
        realism.app_process_start(ctx)
    args = argv[1:]
    if args and args[0] in ("touchscreen", "touchpad", "keyboard", "mouse", "dpad", "stylus", "trackball"):
        args = args[1:]
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        ctx.err("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n")
        return 1
    sub, rest = args[0], args[1:]
    if ctx.phone.scenario.input_refused:   # a ROM switch is off (roms: R1)
        ctx.err(roms.executing(sub, roms.INJECT_REFUSED))
        return 255
    if sub == "roll":
        return 0
    least, run = _INPUT.get(sub, (0, None))
    if run is None or len(rest) < least:
        ctx.err(f"Error: Unknown command: {sub}\n" if sub not in ("tap", "swipe", "keyevent", "text")
                else f"Error: Invalid arguments for command: {sub}\n")
        return 1
    try:
        return run(ctx, rest)
    except ValueError as exc:
        ctx.err(f"Exception occurred while executing '{sub}':\njava.lang.NumberFormatException: {exc}\n")
        return 255


def _tap(ctx: Ctx, rest: list[str]) -> int:
    phone = ctx.phone
    x, y = real_screen.to_portrait(phone, int(float(rest[0])), int(float(rest[1])))
    if not realism.on_tap(phone, x, y):
        phone.tap(x, y)
    return 0


def _swipe(ctx: Ctx, rest: list[str]) -> int:
    phone = ctx.phone
    x1, y1, x2, y2 = (int(float(v)) for v in rest[:4])
    x1, y1 = real_screen.to_portrait(phone, x1, y1)
    x2, y2 = real_screen.to_portrait(phone, x2, y2)
    duration = int(rest[4]) if len(rest) > 4 else 300
    if not realism.on_swipe(phone, x1, y1, x2, y2):
        phone.swipe(x1, y1, x2, y2, duration)
    ctx.sleep(min(duration, 5000) / 1000.0)  # `input swipe` blocks for its duration
    return 0


def _keyevent(ctx: Ctx, rest: list[str]) -> int:
    for name in (r for r in rest if not r.startswith("--")):
        code = _keycode(name)
        if code is None:
            ctx.err(f"Error: Unknown keycode: {name}\n")  # real input ignores it the same way
            continue
        if not realism.on_key(ctx.phone, code):
            ctx.phone.key(code)
    return 0


def _text(ctx: Ctx, rest: list[str]) -> int:
    text = rest[0].replace("%s", " ")
    if not all(32 <= ord(ch) < 127 or ch in "\n\t" for ch in text):
        ctx.err(_NPE)
        return 255
    ctx.phone.type_text(text)
    return 0


# input's commands: how many arguments each needs at least, and what it does
_INPUT: dict[str, tuple[int, Callable[[Ctx, list[str]], int]]] = {
    "tap": (2, _tap), "swipe": (4, _swipe), "draganddrop": (4, _swipe), "keyevent": (1, _keyevent),
    "text": (1, _text)}


def _keycode(name: str) -> int | None:
    if name.isdigit():
        return int(name)
    key = name.upper().removeprefix("KEYCODE_")
    return KEYCODES.get(key)


# ---------------------------------------------------------------- am / monkey / pm


def _extras(args: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Intent options: (-a/-d/-n/... values, extras given with --es/--ei/--eia/...)."""
    opts: dict[str, str] = {}
    extras: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--es", "--ei", "--ez", "--el", "--ef", "--eu", "--eia", "--esa", "--ela") and i + 1 < len(args):
            extras[args[i + 1]] = args[i + 2] if i + 2 < len(args) else ""
            i += 3
        elif a == "--esn" and i + 1 < len(args):
            extras[args[i + 1]] = ""
            i += 2
        elif a in ("-a", "-d", "-t", "-c", "-n", "-f", "-p", "--user") and i + 1 < len(args):
            opts[a] = args[i + 1]
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            opts.setdefault("uri", a)
            i += 1
    return opts, extras


def am(ctx: Ctx, argv: list[str]) -> int:
    if len(argv) < 2:
        ctx.err("usage: am [start|broadcast|force-stop] ...\n")
        return 1
    sub, args = argv[1], argv[2:]
    phone = ctx.phone
    if sub == "force-stop" and args:
        phone.force_stop(args[-1])
        return 0
    opts, extras = _extras(args)
    if sub in ("start", "start-activity"):
        return _am_start(ctx, opts)
    if sub == "broadcast":
        action, package = opts.get("-a", ""), opts.get("-p", "")
        desc = "Intent { " + (f"act={action} " if action else "") + "flg=0x400000" + \
            (f" pkg={package}" if package else "") + (" (has extras)" if extras else "") + " }"
        ctx.out(f"Broadcasting: {desc}\n")
        answer = clipboard.broadcast(phone, action, extras) if package in ("", clipboard.PACKAGE) else None
        if answer is None and package in ("", ADB_PACKAGE):
            keyboard.receive(phone, action, extras)
        ctx.out(answer or "Broadcast completed: result=0\n")
        return 0
    ctx.err(f"Error: unknown command '{sub}'\n")
    return 255


def _am_start(ctx: Ctx, opts: dict[str, str]) -> int:
    phone = ctx.phone
    if "-n" in opts:
        component = opts["-n"]
        pkg, _, act = component.partition("/")
        full = pkg + act if act.startswith(".") else act
        ctx.out(f"Starting: Intent {{ cmp={pkg}/{act} }}\n")
        if not phone.launch(pkg):
            ctx.err(f"Error type 3\nError: Activity class {{{pkg}/{full}}} does not exist.\n")
            return 1
        return 0
    action, data = opts.get("-a", ""), opts.get("-d", opts.get("uri", ""))
    if action == "android.intent.action.VIEW" and data:
        ctx.out(f"Starting: Intent {{ act={action} dat={data} }}\n")
        if data.startswith(("http://", "https://")) or "." in data:
            phone.open_url(data)
            return 0
        ctx.err(f"Error: Activity not started, unable to resolve Intent {{ act={action} dat={data} flg=0x10000000 }}\n")
        return 1
    ctx.err("Error: Activity not started, unable to resolve Intent\n")
    return 1


def monkey(ctx: Ctx, argv: list[str]) -> int:
    realism.app_process_start(ctx)
    args = argv[1:]
    for a in args:
        ctx.out(f"  bash arg: {a}\n")
    pkg = args[args.index("-p") + 1] if "-p" in args and args.index("-p") + 1 < len(args) else ""
    if not pkg or not ctx.phone.launch(pkg):
        ctx.out("** No activities found to run, monkey aborted.\n")
        return 251
    ctx.out("Events injected: 1\n## Network stats: elapsed time=18ms (0ms mobile, 0ms wifi, 18ms not connected)\n")
    return 0


def pm(ctx: Ctx, argv: list[str]) -> int:
    packages = ctx.phone.packages()
    if argv[1:3] == ["list", "packages"]:
        needle = next((a for a in argv[3:] if not a.startswith("-")), "")
        ctx.out("".join(f"package:{p}\n" for p in packages if needle in p))
        return 0
    if len(argv) > 2 and argv[1] == "path":
        if argv[2] in packages:
            ctx.out(f"package:/data/app/{argv[2]}-1/base.apk\n")
            return 0
        return 1
    if argv[1:2] == ["resolve-activity"]:
        return _resolve_activity(ctx, argv[2:])
    ctx.err("Error: unknown pm command\n")
    return 255


def _resolve_activity(ctx: Ctx, args: list[str]) -> int:
    """``cmd package resolve-activity --brief [-a ACTION] [-c CATEGORY] PACKAGE``: the app's launcher activity
    as a short component on the last line (PackageManagerShellCommand), ``No activity found`` otherwise."""
    opts, _ = _extras(args)
    package = opts.get("uri", "")
    activity = ctx.phone.launcher_activity(package) if opts.get("-c", LAUNCHER) == LAUNCHER else None
    if activity is None:
        ctx.out("No activity found\n")
        return 0
    short = activity[len(package):] if activity.startswith(package + ".") else activity
    if "--brief" not in args:
        ctx.out(f"  ActivityInfo:\n    name={activity}\n    packageName={package}\n")
        return 0
    ctx.out(f"priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n{package}/{short}\n")
    return 0


def reboot(ctx: Ctx, argv: list[str]) -> int:
    with ctx.phone.lock:
        ctx.phone.reboots += 1
        ctx.phone.home()
    return 0


# ---------------------------------------------------------------- dumpsys


def dumpsys(ctx: Ctx, argv: list[str]) -> int:
    phone = ctx.phone
    service = argv[1] if len(argv) > 1 else ""
    component = phone.focus_component()
    if service == "window":
        ctx.out(real_screen.window(phone))
    elif service == "display":
        ctx.out(real_screen.display(phone))
    elif service == "SurfaceFlinger" and "--display-id" in argv:
        ctx.out(real_screen.surfaceflinger_ids(phone))
    elif service == "input_method":
        shown = phone.keyboard_shown()
        ctx.out(f"Input method service state:\n  mCurMethodId={phone.ime}\n  mCurFocusedWindow={component}\n"
                f"  mInputShown={'true' if shown else 'false'}\n  mShowRequested={'true' if shown else 'false'}\n")
    elif service == "activity":
        ctx.out(f"  mResumedActivity: ActivityRecord{{7d3b2e0 u0 {component} t12}}\n"
                f"  ACTIVITY {component} 7d3b2e0 pid=4242\n")
    elif service == "package" and len(argv) > 2 and argv[2] == ADB_PACKAGE:
        ctx.out(roms.dumpsys_package(phone.scenario.adbkeyboard_build, ADB_IME in phone.imes_installed))
    elif service == "package" and len(argv) > 2:
        version = phone.version_name(argv[2])
        if version is not None:   # the lines of a real `dumpsys package PKG` that readers look for
            ctx.out(f"Packages:\n  Package [{argv[2]}] (5e0c1a7):\n    userId=10123\n"
                    f"    versionCode=1 minSdk=21 targetSdk=33\n    versionName={version}\n")
    elif service == "power":
        ctx.out(real_screen.power(phone))
    elif service == "audio":   # AOSP AudioService.dumpStreamStates, the music stream (core/device/audio.py)
        ctx.out(f"Stream volumes (device: index)\n- STREAM_MUSIC:\n   Muted: false\n   Min: 0\n   Max: 15\n"
                f"   streamVolume:{phone.volume}\n   Current: 2 (speaker): {phone.volume}, 40000000 (default): "
                f"{phone.volume}\n   Devices: speaker\n- STREAM_ALARM:\n   Muted: false\n   Min: 1\n   Max: 7\n")
    elif service in ("battery",):
        ctx.out("Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  level: 88\n")
    else:
        ctx.out(f"Can't find service: {service}\n" if service else "")
    return 0


# ---------------------------------------------------------------- screencap / uiautomator


def screencap(ctx: Ctx, argv: list[str]) -> int:
    args, png, path, display = argv[1:], False, None, None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-p":
            png = True
        elif a == "-d" and i + 1 < len(args):
            i += 1
            display = args[i]
        elif a.startswith("-"):
            png = png or "p" in a[1:]
        else:
            path = a
        i += 1
    if path is not None and path.endswith(".png"):
        png = True
    ids = real_screen.display_ids(ctx.phone)
    if display is None and len(ids) > 1:
        ctx.err(real_screen.WARNING)   # on stderr: through `exec:` and `shell:` it lands before the image
    elif display is not None and (not display.isdigit() or int(display) not in ids):
        ctx.err("Capturing failed.\n")
        return 1
    started = time.perf_counter()
    data = real_screen.frame(ctx.phone, png, int(display) if display else None)
    # the phone captures (and for a PNG encodes) before the first byte moves: drawing (and encoding) the picture
    # here stands for part of that time (remote.sim.realism: screencap_ms, png_ms)
    scenario = ctx.phone.scenario
    ctx.sleep((scenario.png_ms if png else scenario.screencap_ms) / 1000 - (time.perf_counter() - started))
    if path is None:
        ctx.out(data)
        return 0
    try:
        ctx.phone.fs.write(path, data)
    except OSError:
        ctx.err(f"Error opening file: {path} (No such file or directory)\n")
        return 1
    return 0


def uiautomator(ctx: Ctx, argv: list[str]) -> int:
    args = argv[1:]
    if not args or args[0] != "dump":
        ctx.err("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                "help: displays help message\n\ndump: creates an XML dump of current UI hierarchy\n\n")
        return 1 if args else 0
    compressed = "--compressed" in args
    paths = [a for a in args[1:] if not a.startswith("-")]
    path = paths[0] if paths else "/sdcard/window_dump.xml"
    if tree_server.serving(ctx.phone):   # the resident server holds UiAutomation (uiautomator2#298)
        ctx.phone.tree_server.dumps_refused += 1
        ctx.sleep(ctx.phone.scenario.uiautomator_delay_ms / 1000.0)
        ctx.err(realism.REGISTERED_TEXT)
        return 1
    failed = realism.dump_failure(ctx)
    if failed is not None:   # R4: idle state, null root, a second UiAutomation client
        ctx.err(failed[0])
        return failed[1]
    ctx.sleep(ctx.phone.scenario.uiautomator_delay_ms / 1000.0)  # JVM start + waitForIdle on a real phone
    xml = real_screen.dump_xml(ctx.phone, compressed)
    if path in ("/dev/tty", "/dev/stdout"):
        ctx.out(xml)
    else:
        try:
            ctx.phone.fs.write(path, xml.encode("utf-8"))
        except OSError:
            ctx.err(f"ERROR: could not write {path}\n")  # the message real devices print is similar
            return 0
    ctx.out(f"UI hierchary dumped to: {path}\n")
    return 0


def svc(ctx: Ctx, argv: list[str]) -> int:
    if len(argv) >= 3 and argv[1] in ("wifi", "bluetooth") and argv[2] in ("enable", "disable"):
        ctx.phone.settings["wlan" if argv[1] == "wifi" else "bluetooth"] = argv[2] == "enable"
        ctx.phone.changed()
        return 0
    return 0


def cmd(ctx: Ctx, argv: list[str]) -> int:
    return realism.cmd(ctx, argv, COMMANDS)


COMMANDS: dict[str, CommandFn] = {
    "input": input_, "am": realism.native_tool(am), "monkey": monkey, "pm": realism.native_tool(pm), "ime": realism.native_tool(keyboard.ime),
    "dumpsys": realism.native_tool(dumpsys),
    "screencap": screencap, "uiautomator": uiautomator, "svc": svc, "reboot": reboot, "cmd": cmd,
    "ps": realism.ps, "app_process": tree_server.app_process, "md5sum": tree_server.md5sum,
    "toybox": tree_server.toybox,
}
