"""The trace phone: a DroidBot recording of a real app, replayed behind the simulated phone's ADB server.

    from remote.sim import serve
    with serve(trace="traces/weibo_bfs_greedy") as server:   # starts on the launcher
        ...                                   # adbutils / ADBController / `adb -P server.port` as usual
        server.phone.snapshot()["trace_state"]

`recording` reads the folder, `machine` decides where an input leads, `dump`
writes the view trees as ``uiautomator dump`` XML, `frames` serves the
screenshots, `phone` puts them together as a `remote.sim.device.Phone`.
"""

from __future__ import annotations

from remote.sim.trace.phone import TRACE_SERIAL, TracePhone
from remote.sim.trace.recording import Recording

__all__ = ["TRACE_SERIAL", "Recording", "TracePhone"]
