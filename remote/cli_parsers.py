"""The command line's parsers, one builder per group of commands (``remote.cli`` puts them together).

Every option says what it does and its default; every command's ``--help`` ends with examples and the
exit-status table. Values are checked as they are parsed (``remote.cli_values``): a bad one is a usage
error (exit 2) naming the option.
"""

from __future__ import annotations

import argparse

from remote.cli_values import (
    env_pair,
    non_negative_int,
    port,
    port_or_zero,
    positive_float,
    positive_int,
    task_text,
)

EXIT_TABLE = """exit status: 0 success, 1 the task or check failed (not found, ambiguous, changed on replay,
`modules check` found a problem), 2 environment, configuration or usage (no device, no model configured or
reachable where one is needed, a bad file or argument, a phone another process drives), 130 aborted (Ctrl-C
or SIGTERM), 141 stdout closed early (| head); a valid --dry-run plan: 0, status planned"""
STRATEGIES = ["opencv_first", "opencv_only", "ai_only"]


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Examples kept as written; an option's default shown after its help, unless the help already says it
    or there is none worth showing (a flag that is off, an option that is unset)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS) or "default" in text or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def add_command(sub: argparse._SubParsersAction, name: str, summary: str, examples: str,  # type: ignore[type-arg]
             description: str = "") -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=summary, description=(description or summary), formatter_class=Formatter,
        epilog=f"examples:\n{examples}\n\n{EXIT_TABLE}")
    return parser


def add_trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", metavar="DIR", default=None,
                   help="serve this DroidBot recording of a real app as the phone (the trace phone, with --device sim)")
    p.add_argument("--trace-start", metavar="STATE", default=None,
                   help="the recorded screen to start on: state_str, a unique prefix of it, or a capture tag "
                        "(default: the recorded launcher)")


def add_device_args(p: argparse.ArgumentParser, *, sim_choice: bool = True, many: bool = False) -> None:
    help_text = "phone serial or ip:port (default: the only connected phone, or ADB_SERIAL)" + \
        ("; 'sim' for the built-in simulated phone" if sim_choice else "")
    if many:
        help_text = "phone serial; repeat it for several phones, each running the task in parallel (default: " \
            "the only connected phone, or ADB_SERIAL)" + ("; each 'sim' adds a simulated phone" if sim_choice else "")
    p.add_argument("--device", "-s", metavar="SERIAL", default=None, help=help_text,
                   action="append" if many else "store")
    if sim_choice:
        p.add_argument("--scenario", metavar="FILE", default=None,
                       help="simulated-phone scenario YAML (with --device sim): popups, resolution, versions ...")
        add_trace_args(p)
    p.add_argument("--adb-host", metavar="HOST", default=None,
                   help="adb server host (default: ANDROID_ADB_SERVER_HOST or 127.0.0.1)")
    p.add_argument("--adb-port", metavar="PORT", type=port, default=None,
                   help="adb server port (default: ANDROID_ADB_SERVER_PORT or 5037); remote never starts one")
    p.add_argument("--tree", choices=["auto", "server", "dump"], default=None,
                   help="where UI trees come from: uiautomator2's resident server, falling back to `uiautomator "
                        "dump` (auto), only the server, or only the dump (default: REMOTE_TREE or auto)")
    p.add_argument("--frames", choices=["needed", "every"], default=None,
                   help="with the server's trees: take a screen's frame when something reads its pixels (needed: "
                        "the record shows those), or one of every screen, for a picture of each step (default: "
                        "REMOTE_FRAMES or needed)")


def run_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "run", "run a task on a phone: route, plan, locate, act, verify, record", """\
  remote run --device sim "给张三发微信消息说你好"
  remote run --device sim --scenario popups.yaml "打开微信"
  remote run "打开WLAN" --dry-run            # plan, and check what the current screen allows
  remote run "在浏览器搜索天气" --json --max-seconds 60
  remote run "打开设置" --device emulator-5554 --device emulator-5556   # both phones at once
  remote run "打开设置" --all-devices --adb-port 5038                  # every phone of that adb server
  remote run --device sim "蓝牙是否打开" --json                          # a question: "answer": false
  remote run --device sim "发早安消息" -e contact=张三                    # a slot the sentence does not say""")
    p.add_argument("task", type=task_text, help="what to do, in one sentence (Chinese or English)")
    p.add_argument("-e", "--env", metavar="KEY=VALUE", type=env_pair, action="append", default=None,
                   help="fill the template's {KEY} when the sentence does not (repeatable; the sentence wins)")
    add_device_args(p, many=True)
    p.add_argument("--all-devices", action="store_true",
                   help="run the task on every connected phone in parallel (docs/fleet.md)")
    p.add_argument("--module", metavar="NAME", default=None,
                   help="use this app module's templates and images (skip routing); see `remote modules`")
    p.add_argument("--strategy", choices=STRATEGIES, default="opencv_first",
                   help="locator tiers: free tiers then the vision model; free tiers only; the model only")
    p.add_argument("--max-steps", type=positive_int, default=30, metavar="N",
                   help="stop after this many steps (replans included)")
    p.add_argument("--max-seconds", type=positive_float, default=300.0, metavar="S",
                   help="stop after this many seconds, also in the middle of a step")
    p.add_argument("--max-model-calls", type=non_negative_int, default=20, metavar="N",
                   help="budget of model calls for the task")
    p.add_argument("--max-tokens", type=non_negative_int, default=200_000, metavar="N",
                   help="budget of model tokens for the task")
    p.add_argument("--dry-run", action="store_true",
                   help="plan, and locate what the current screen shows; touch nothing")
    p.add_argument("--yes", "-y", action="store_true",
                   help="allow sensitive steps (calls, payments, deep links, deletions) without asking")
    p.add_argument("--json", action="store_true", help="print the run summary as one JSON object on stdout")
    p.add_argument("--runs-dir", metavar="DIR", default="runs", help="where run records go")
    add_learn_args(p)


def add_learn_args(p: argparse.ArgumentParser) -> None:
    """Learning (docs/learning.md): where learned tasks live, and switching it off."""
    p.add_argument("--learned-dir", metavar="DIR", default=None,
                   help="where learned tasks are kept and looked for (default: REMOTE_LEARNED_DIR, else "
                        "~/.local/share/remote/learned)")
    p.add_argument("--no-learn", action="store_true",
                   help="write nothing learned: no new learned task from a model's success, no replay counts")


def device_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "devices", "list connected phones: serial, model, resolution, ADBKeyboard", """\
  remote devices
  remote devices --adb-port 5038       # the phones a `remote sim --port 5038` serves""")
    p.add_argument("--adb-host", metavar="HOST", default=None,
                   help="adb server host (default: ANDROID_ADB_SERVER_HOST or 127.0.0.1)")
    p.add_argument("--adb-port", metavar="PORT", type=port, default=None,
                   help="adb server port (default: ANDROID_ADB_SERVER_PORT or 5037)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = add_command(sub, "doctor", "check a phone before running tasks: one line per check, what to switch on for each ✗",
                 """\
  remote doctor                          # the only connected phone
  remote doctor --device R58M123 --json
  remote doctor --device sim --scenario miui-switch-off.yaml""",
                 description="Check a phone (docs/devices.md): its state on the adb server, Android, ROM, whether "
                             "taps and keyboard switching are allowed, ADBKeyboard's build and state; for each ✗ the "
                             "exact steps on that phone's ROM. Exit status 0 when the phone is ready.")
    add_device_args(p)
    p.add_argument("--json", action="store_true", help="print the checks as one JSON object")

    p = add_command(sub, "screenshot", "save the phone's screen to a PNG file", """\
  remote screenshot -o screen.png
  remote screenshot --device sim -o sim.png""")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="PNG file to write")
    add_device_args(p)

    p = add_command(sub, "sim", "serve the simulated phone over the adb protocol until Ctrl-C", """\
  remote sim                             # 127.0.0.1:5037, or the next free port when 5037 is taken
  remote sim --port 5038 --scenario popups.yaml
  remote sim --port 5038 --trace DROIDBOT_OUTPUT_DIR --trace-start a7dec9
  remote sim --count 4 --resolutions 720x1600,1440x3200     # a farm: four phones on one adb server
  adb -P 5038 devices; adb -P 5038 exec-out screencap -p > s.png""")
    p.add_argument("--port", type=port, default=None,
                   help="port to serve on (default 5037; when 5037 is taken, by a real adb server say, the next "
                        "free port is used and printed)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--scenario", metavar="FILE", default=None, help="scenario YAML (docs/testing.md#scenarios)")
    add_trace_args(p)
    p.add_argument("--serial", default=None, help="serial the simulated phone reports (default remote-sim)")
    p.add_argument("--count", type=positive_int, default=1, metavar="N",
                   help="serve N simulated phones on this one adb server (serials remote-sim-1 ... remote-sim-N)")
    p.add_argument("--resolutions", metavar="WxH,...", default=None,
                   help="with --count: resolutions given to the phones in turn, e.g. 720x1600,1080x2400,1440x3200")

    p = add_command(sub, "model-sim", "serve scripted chat-completions replies on loopback, for testing without a provider",
                 """\
  remote model-sim --script replies.yaml       # prints the CUSTOM_LLM_BASE_URL to export
  remote model-sim --script replies.yaml --port 0
  # replies.yaml: rules tried in order, the first that matches answers
  #   - match: {purpose: plan}            # plan | locate | verify, and/or prompt: "text in the prompt"
  #     reply: {steps: [...], success_check: {text: 你好}}    # a mapping is sent as JSON text
  #     times: 1                          # then the next rule; default: forever
  #   - match: {purpose: verify}
  #     status: 429                       # an HTTP error; also retry_after:, delay: (s), drip: (bytes/s)
  remote model-sim --script replies.yaml --family qwen2.5-vl   # answers in that family's own dialect
  #   - match: {purpose: locate}
  #     reply: {box: [804, 78, 936, 210]}  # where the target is, in phone pixels (--screen): written as
  #                                        # the family writes it, in the frame it saw
  #   - match: {purpose: agent}
  #     reply: {action: tap, box: [804, 78, 936, 210]}   # phone agents: tap, type, launch, swipe, finish ...""",
                 description="Serve the loopback chat-completions server (docs/testing.md, model-sim) with replies "
                             "scripted in YAML, printing the URL for CUSTOM_LLM_BASE_URL, until Ctrl-C.")
    p.add_argument("--script", required=True, metavar="FILE", help="the replies, as YAML rules (see the examples)")
    p.add_argument("--port", type=port_or_zero, default=8765, help="port to serve on; 0 picks a free one")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (it checks no key: keep it on loopback)")
    p.add_argument("--family", metavar="NAME", help="answer in this model family's dialect (docs/models.md); "
                   "overrides the script's family:")
    p.add_argument("--screen", metavar="WxH", help="the phone's size that neutral replies' pixels refer to "
                   "(default 1080x2400; overrides the script's screen:)")

    p = add_command(sub, "capture-ref", "crop a reference image from the live screen into a module's images/", """\
  remote capture-ref send_button --module wechat --text 发送
  remote capture-ref wechat_search --module wechat --bbox 930,120,1040,230 --device sim""")
    p.add_argument("name", help="the reference's name: letters, digits, _ and - (saved as images/NAME.png)")
    p.add_argument("--module", required=True, metavar="NAME",
                   help="the module: shipped, or a folder in REMOTE_MODULES (create it with a config.yaml first)")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--bbox", metavar="x1,y1,x2,y2", help="the box to crop, in screen pixels")
    group.add_argument("--text", metavar="文本", help="crop the element that shows this text")
    add_device_args(p)


def offline_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "locate", "offline: find a target on a screenshot file", """\
  remote locate s.png "text:发送" --xml s.xml
  remote locate s.png wechat_search --module wechat --annotate out.png
  remote locate s.png x --ref icon.png --json""")
    p.add_argument("screenshot", help="screenshot file (PNG or JPEG)")
    p.add_argument("target", help="target_ref: text:张三, desc:搜索, id:pkg:id/x, a reference name, xy:540,2280")
    p.add_argument("--xml", metavar="DUMP", help="uiautomator dump taken with the screenshot (for text:/desc:/id:)")
    p.add_argument("--ref", metavar="IMAGE", help="look for this image instead of TARGET")
    p.add_argument("--module", metavar="NAME", default=None, help="module whose images, aliases and fixed points to use")
    p.add_argument("--strategy", choices=STRATEGIES, default=None,
                   help="locator tiers to allow (default: opencv_only; a dynamic: target asks the configured model)")
    p.add_argument("--json", action="store_true", help="print the LocateResult as JSON (with the model's calls)")
    p.add_argument("--annotate", metavar="OUT.png", help="write a copy with the box (green) and tap point drawn")

    p = add_command(sub, "match", "offline: template-match a reference image in a screenshot", """\
  remote match icon.png s.png
  remote match icon.png s.png --annotate out.png --json""")
    p.add_argument("ref", help="reference image (a crop of the target)")
    p.add_argument("screenshot", help="screenshot file")
    p.add_argument("--json", action="store_true", help="print the LocateResult as JSON")
    p.add_argument("--annotate", metavar="OUT.png", help="write a copy with the box and tap point drawn")

    p = add_command(sub, "plan", "offline: plan a task on a screenshot file with the configured model", """\
  remote plan s.png "打开深色模式" --module settings
  CUSTOM_LLM_BASE_URL=http://127.0.0.1:8765/v1 remote plan s.png "打开深色模式" --json
  LLM_PROVIDER=autoglm remote plan s.png "打开深色模式" --xml s.xml --agent""")
    p.add_argument("screenshot", help="screenshot file")
    p.add_argument("task", type=task_text, help="the task to plan")
    p.add_argument("--module", metavar="NAME", default=None,
                   help="module whose reference images and planner prompt the model gets")
    p.add_argument("--xml", metavar="DUMP", help="uiautomator dump (a text-only model plans from its texts; "
                                                  "an agent's tap snaps to its elements)")
    p.add_argument("--agent", action="store_true",
                   help="ask a phone-agent model (AutoGLM-Phone, UI-TARS, Qwen mobile_use, GLM-V, ShowUI) for its next "
                        "action on the screenshot, as a run would take it; touches nothing")
    p.add_argument("--json", action="store_true", help="print the plan (or the agent's turn) as JSON")

    p = add_command(sub, "verify", "offline: check a screenshot against an expectation (tree, OCR, then a model)", """\
  remote verify s.png "text:你好" --xml s.xml         # answered from the UI tree, no model needed
  remote verify s.png "聊天里显示了「你好」"             # OCR, or the configured model""")
    p.add_argument("screenshot", help="screenshot file")
    p.add_argument("expectation", help="text:X / desc:X / id:X, or a sentence (quoted parts 「X」 are looked for)")
    p.add_argument("--xml", metavar="DUMP", help="uiautomator dump taken with the screenshot")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")

    p = add_command(sub, "flow", "offline: route, plan and locate every step of a task on one screenshot", """\
  remote flow s.png "给张三发微信消息说你好" --xml s.xml
  remote flow s.png "打开WLAN" --annotate steps.png""")
    p.add_argument("screenshot", help="screenshot file")
    p.add_argument("task", type=task_text, help="the task")
    p.add_argument("--xml", metavar="DUMP", help="uiautomator dump taken with the screenshot")
    p.add_argument("--module", metavar="NAME", default=None, help="skip routing and use this module")
    p.add_argument("--annotate", metavar="OUT.png", help="write a copy with every located step drawn")
    p.add_argument("--json", action="store_true", help="print the steps as JSON")

    p = add_command(sub, "replay", "offline: re-decide a recorded run and list changed decisions", """\
  remote replay runs/20261123-081321-给张三发微信消息说你好
  remote replay RUN_DIR --json""")
    p.add_argument("run_dir", help="a run record folder (runs/<time>-<task>)")
    p.add_argument("--json", action="store_true", help="print the decisions as JSON")

    p = add_command(sub, "report", "(re)write a run's report.html from its run.json", """\
  remote report runs/20261123-081321-给张三发微信消息说你好""")
    p.add_argument("run_dir", help="a run record folder")


def module_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "modules", "list app modules and their task templates; check them; review learned images", """\
  remote modules                 # every module and its templates
  remote modules check           # validate every YAML key, slot, image and alias (file:line)
  remote modules learned         # learned tasks (replays, heals, trusted) and learned reference images
  remote modules promote learned_1f2e3d4c             # trust a learned task now
  remote modules adopt learned_1f2e3d4c --module wechat   # move it into a module's tasks.yaml""")
    p.add_argument("action", nargs="?", choices=["list", "check", "learned", "promote", "forget", "adopt"],
                   default="list",
                   help="list the modules; check them (exit 1 on a problem); list learned tasks and images; "
                        "promote, forget or adopt a learned task (docs/learning.md)")
    p.add_argument("name", nargs="?", default=None, help="the learned task (promote, forget, adopt)")
    p.add_argument("--module", metavar="NAME", default=None, help="adopt: the module that takes the learned task")
    p.add_argument("--learned-dir", metavar="DIR", default=None,
                   help="the learned tasks' folder (default: REMOTE_LEARNED_DIR, else ~/.local/share/remote/learned)")
    p.add_argument("--json", action="store_true", help="print JSON")


def agent_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "mcp", "serve the phone as MCP tools for AI agents (stdio, or --http HOST:PORT)", """\
  remote mcp --device sim                      # stdio: what Claude Desktop / Code and Cursor start
  remote mcp --device sim --http 127.0.0.1:8765
  REMOTE_MCP_TOKEN=... remote mcp --http 0.0.0.0:8765   # any other address needs a bearer token""",
                 description="Serve the phone as MCP tools (docs/mcp.md): screenshot with an element list, taps by "
                             "coordinate, element number or target_ref, typing, apps, clipboard, batch, run_task.")
    add_device_args(p)
    p.add_argument("--http", metavar="HOST:PORT", default=None,
                   help="streamable HTTP instead of stdio; an address other than loopback needs REMOTE_MCP_TOKEN")
    p.add_argument("--allow", metavar="APPS", default=None,
                   help="apps allowed without request_access, comma-separated (微信,com.android.settings; '*' = all)")
    p.add_argument("--runs-dir", metavar="DIR", default="runs", help="where run_task writes run records")
    add_learn_args(p)
    p.add_argument("--work-dir", metavar="DIR", default=None,
                   help="where teach-mode pictures go (default: a temporary folder)")


def studio_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "studio", "a web page: inspect the screen, build and record templates (docs/studio.md)", """\
  remote studio --device sim --module settings     # then open http://127.0.0.1:8790/
  remote studio --screenshot shot.png --xml shot.xml   # or --run runs/<a run>""")
    add_device_args(p)
    for flag, meta, text in (("--http", "HOST:PORT", "serve here (default 127.0.0.1:8790); beyond loopback needs "
                              "REMOTE_STUDIO_TOKEN (16+ characters) and acts only in --allow apps"),
                             ("--module", "NAME", "the module the template is built for"),
                             ("--run", "RUN_DIR", "open a run record"), ("--screenshot", "FILE", "inspect a file"),
                             ("--xml", "DUMP", "the screenshot's UI dump"), ("--allow", "APPS", "apps to act in "
                              "beyond loopback, comma-separated ('*' = all)")):
        p.add_argument(flag, metavar=meta, default=None, help=text)
    p.add_argument("--runs-dir", metavar="DIR", default="runs", help="where the records of acts go")
    p.add_argument("--max-steps", type=positive_int, default=30, metavar="N", help="steps per act")
    p.add_argument("--max-seconds", type=positive_float, default=120.0, metavar="S", help="seconds per act")
