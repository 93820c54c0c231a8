"""`remote sim`: serve the simulated phone (or, with --trace, a recorded app) over the adb protocol until Ctrl-C."""

from __future__ import annotations

import argparse
import errno
import sys

from remote.errors import DeviceError

DEFAULT_PORT = 5037


def run(args: argparse.Namespace) -> int:
    from remote.commands._device import trace_overrides
    from remote.sim import serve

    ports = [args.port] if args.port is not None else list(range(DEFAULT_PORT, DEFAULT_PORT + 20))
    server = None
    for port in ports:
        try:
            server = serve(args.scenario, host=args.host, port=port, serial=args.serial, **trace_overrides(args))
            break
        except OSError as exc:
            if args.port is not None or exc.errno != errno.EADDRINUSE:
                raise DeviceError(f"cannot listen on {args.host}:{port}: {exc.strerror or exc}",
                                  hint="another adb server may be running there; try another --port "
                                       "(or `adb kill-server`)") from exc
    if server is None:
        raise DeviceError(f"ports {ports[0]}-{ports[-1]} on {args.host} are all taken", hint="choose one with --port")
    if server.port != DEFAULT_PORT and args.port is None:
        print(f"port {DEFAULT_PORT} is taken (a real adb server?): serving on {server.port} instead")
    phone = server.phone
    width, height = phone.size
    scenario = f" (scenario {args.scenario})" if args.scenario else ""
    state = phone.snapshot()
    if "trace_state" in state:
        print(f"trace phone {server.serial} {width}x{height}: recording {state['trace']}, "
              f"screen {state['trace_state']} ({state['foreground']['package']}){scenario} "
              f"on {server.host}:{server.port}")
    else:
        print(f"simulated phone {server.serial} {width}x{height}{scenario} on {server.host}:{server.port}")
    print("connect with:")
    print(f"  adb -P {server.port} devices")
    print(f"  adb -P {server.port} shell wm size")
    print(f"  adb -P {server.port} exec-out screencap -p > screen.png")
    print(f"  python -m remote run --adb-port {server.port} --device {server.serial} \"…\"")
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
