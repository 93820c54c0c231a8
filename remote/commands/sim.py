"""`remote sim`: serve the simulated phone (or a farm of them, `--count N`) over the adb protocol until Ctrl-C."""

from __future__ import annotations

import argparse
import errno
import sys
from typing import TYPE_CHECKING

from remote.errors import BadInput, DeviceError

if TYPE_CHECKING:
    from remote.sim import SimServer

DEFAULT_PORT = 5037
MAX_COUNT = 64


def _start(args: argparse.Namespace, count: int, resolutions: list[str] | None) -> SimServer:
    """The server on --port, or on the first free port from 5037 on."""
    from remote.commands._device import trace_overrides
    from remote.sim import serve, serve_farm

    ports = [args.port] if args.port is not None else list(range(DEFAULT_PORT, DEFAULT_PORT + 20))
    for port in ports:
        try:
            if count > 1:
                return serve_farm(count, args.scenario, host=args.host, port=port, serial_prefix=args.serial,
                                  resolutions=resolutions, **trace_overrides(args))
            return serve(args.scenario, host=args.host, port=port, serial=args.serial, **trace_overrides(args))
        except OSError as exc:
            if args.port is not None or exc.errno != errno.EADDRINUSE:
                raise DeviceError(f"cannot listen on {args.host}:{port}: {exc.strerror or exc}",
                                  hint="another adb server may be running there; try another --port "
                                       "(or `adb kill-server`)") from exc
    raise DeviceError(f"ports {ports[0]}-{ports[-1]} on {args.host} are all taken", hint="choose one with --port")


def _describe(server: SimServer, scenario: str) -> None:
    for phone in server.phones:
        width, height = phone.size
        state = phone.snapshot()
        if "trace_state" in state:
            print(f"trace phone {phone.serial} {width}x{height}: recording {state['trace']}, "
                  f"screen {state['trace_state']} ({state['foreground']['package']}){scenario} "
                  f"on {server.host}:{server.port}")
        else:
            print(f"simulated phone {phone.serial} {width}x{height}{scenario} on {server.host}:{server.port}")


def run(args: argparse.Namespace) -> int:
    count = getattr(args, "count", 1) or 1
    resolutions = [r.strip() for r in args.resolutions.split(",") if r.strip()] if args.resolutions else None
    if count > MAX_COUNT:
        raise BadInput(f"--count {count}: at most {MAX_COUNT} simulated phones on one server")
    if resolutions and count == 1:
        raise BadInput("--resolutions is for a farm (--count N); one phone takes its resolution from --scenario")
    server = _start(args, count, resolutions)
    if server.port != DEFAULT_PORT and args.port is None:
        print(f"port {DEFAULT_PORT} is taken (a real adb server?): serving on {server.port} instead")
    _describe(server, f" (scenario {args.scenario})" if args.scenario else "")
    print("connect with:")
    print(f"  adb -P {server.port} devices")
    print(f"  adb -P {server.port} shell wm size")
    print(f"  adb -P {server.port} exec-out screencap -p > screen.png")
    print(f"  python -m remote run --adb-port {server.port} --device {server.serial} \"…\"")
    if count > 1:
        print(f"  python -m remote run --adb-port {server.port} --all-devices \"…\"")
    print(f"  (or ANDROID_ADB_SERVER_PORT={server.port} for adbutils)")
    print("Ctrl-C stops it.")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.close()
    return 0
