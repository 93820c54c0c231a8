"""The simulated phone: widget-tree apps served over the real adb wire protocol.

    from remote.sim import serve
    with serve(resolution="720x1600") as server:      # a free loopback port
        adbutils.AdbClient(port=server.port).device(server.serial).shell("wm size")
        server.phone.snapshot()["foreground"]

With ``trace=DIR`` (a DroidBot recording) the same server serves the trace
phone instead (`remote.sim.trace`); both are a `remote.sim.device.Phone`.

It imports nothing of the agent: it is a phone, not a test oracle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from remote.sim.adb_server import SimServer
from remote.sim.device import Phone
from remote.sim.phone import SimPhone
from remote.sim.scenario import Scenario, make_scenario
from remote.sim.trace import TracePhone

__all__ = ["Phone", "Scenario", "SimPhone", "SimServer", "TracePhone", "make_phone", "serve"]


def make_phone(scenario: Scenario | str | Path | dict[str, Any] | None = None, *, serial: str | None = None,
               **overrides: Any) -> Phone:
    """The phone a scenario describes: the trace phone when it names a recording, else the simulated one."""
    chosen = make_scenario(scenario, **overrides)
    kwargs = {"serial": serial} if serial else {}
    return TracePhone(chosen, **kwargs) if chosen.trace else SimPhone(chosen, **kwargs)


def serve(scenario: Scenario | str | Path | dict[str, Any] | None = None, *, host: str = "127.0.0.1",
          port: int = 0, serial: str | None = None, phone: Phone | None = None, **overrides: Any) -> SimServer:
    """Start a `SimServer` in a background thread and return it (also a context manager).

    `scenario` is a `Scenario`, a YAML path or a dict; keyword arguments override its keys
    (``serve(ad_popup=True, resolution="1440x3200")``, ``serve(trace=DIR, trace_start="a7dec9")``).
    ``server.port``, ``server.serial`` and ``server.phone`` tell how to reach and observe it;
    ``server.close()`` stops it.
    """
    if phone is None:
        phone = make_phone(scenario, serial=serial, **overrides)
    return SimServer(phone, host=host, port=port).start()
