"""`remote studio`: see what remote sees, point at an element, get the step, in a browser (docs/studio.md).

    python -m remote studio --device sim                    # the simulated phone, at http://127.0.0.1:8790/
    python -m remote studio --device SERIAL --module wechat
    python -m remote studio --screenshot shot.png --xml shot.xml     # a file: inspect only
    python -m remote studio --run runs/20261127-...          # a run record: steps, screens, re-decide
    REMOTE_STUDIO_TOKEN=... python -m remote studio --http 0.0.0.0:8790 --allow 设置   # beyond loopback
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from PIL import Image

from remote.commands._device import open_device
from remote.commands._locate_common import load_image, load_text
from remote.commands._modules import registry as module_registry
from remote.commands._run_task import TerminalPerson
from remote.commands.mcp import _allowed
from remote.config import LLMConfig
from remote.mcp.access import AccessGate
from remote.mcp.gated import GatedDevice
from remote.mcp.server import is_loopback, parse_address
from remote.runner import Limits
from remote.studio.acting import Acts, ActSettings
from remote.studio.app import Studio, build_app
from remote.studio.guard import TOKEN_ENV, check_token
from remote.studio.runs import RunView
from remote.studio.screens import LivePhone, StillScreen

logger = logging.getLogger(__name__)
DEFAULT_ADDRESS = "127.0.0.1:8790"


def run(args: argparse.Namespace) -> int:
    host, port = parse_address(args.http or DEFAULT_ADDRESS)
    token = os.environ.get(TOKEN_ENV, "").strip() or None
    check_token(host, token)                 # before the phone is opened
    with _studio(args, host) as studio:
        shown = f"[{host}]" if ":" in host else host
        print(f"remote studio: http://{shown}:{port}/" + ("?token=<REMOTE_STUDIO_TOKEN>" if token else ""),
              flush=True)
        print("sensitive steps are asked here, on this terminal" if studio.acts.settings.person is not None else
              "no terminal: sensitive steps from the page are refused (they are asked on the terminal)", flush=True)
        uvicorn.run(build_app(studio, host=host, token=token), host=host, port=port, log_level="warning")
    return 0


@contextlib.contextmanager
def _studio(args: argparse.Namespace, host: str) -> Iterator[Studio]:
    registry = module_registry()
    module = registry.get(args.module) if args.module else registry.default
    assert module is not None, "the shipped system module is always there"
    run_view = RunView(Path(args.run), registry) if args.run else None
    with tempfile.TemporaryDirectory(prefix="remote-studio-") as work, _source(args, host, registry) as (source, sim):
        settings = ActSettings(limits=Limits(max_steps=args.max_steps, max_seconds=args.max_seconds),
                               runs_dir=Path(args.runs_dir) if args.runs_dir else None, llm=LLMConfig.from_env(),
                               work_dir=Path(work), device_state=sim.snapshot if sim is not None else None,
                               person=TerminalPerson() if sys.stdin.isatty() else None)
        yield Studio(source, registry, module, Acts(source, registry, settings), run=run_view,
                     mode="live" if source.device is not None else "file", reload=module_registry)


@contextlib.contextmanager
def _source(args: argparse.Namespace, host: str, registry: Any) -> Iterator[tuple[Any, Any]]:
    if args.screenshot:
        image = load_image(args.screenshot, "screenshot")
        yield StillScreen(image, load_text(args.xml, "UI dump") if args.xml else None), None
        return
    if args.run and not args.device:
        first = RunView(Path(args.run), registry).first_screen()   # no phone: the record's first screen
        yield StillScreen(first.pil if first else Image.new("RGB", (1080, 2400)), first.xml if first else None), None
        return
    with open_device(args, lock=True) as (adb, sim):   # one process per phone, as run and mcp
        device = adb if is_loopback(host) else GatedDevice(adb, AccessGate(_allowed(args.allow, registry)))
        yield LivePhone(adb, device), sim
