"""Pytest fixtures: a running simulated phone and an `ADBController` connected to it.

    def test_something(sim_phone, adb):              # defaults: 1080x2400, dumps without delay
        adb.tap(540, 1200); assert sim_phone.snapshot()["foreground"]["package"] == ...

    @pytest.mark.sim(resolution="720x1600", ad_popup=True)   # scenario keys for one test
    def test_small(sim_phone, adb): ...

    @pytest.mark.parametrize("sim_scenario", [{"resolution": "1440x3200"}], indirect=True)
    def test_big(sim_phone, adb): ...

Fixtures: ``sim_scenario`` (dict of scenario keys), ``sim_server`` (`remote.sim.SimServer`,
``.port``/``.serial``/``.phone``), ``sim_phone`` (its `SimPhone`), ``adb_client``
(an `adbutils.AdbClient` on the server's port), ``adb`` (a connected `ADBController`).
Each test gets its own phone on a free port; all are torn down after the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import adbutils
import pytest

from remote.sim import SimPhone, SimServer, serve

# Tests do not wait for uiautomator's real ~1 s unless they ask for it.
TEST_DEFAULTS: dict[str, Any] = {"uiautomator_delay_ms": 0}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sim(**scenario): scenario keys for the simulated phone fixtures")


@pytest.fixture
def sim_scenario(request: pytest.FixtureRequest) -> dict[str, Any]:
    scenario = dict(TEST_DEFAULTS)
    scenario.update(getattr(request, "param", None) or {})
    marker = request.node.get_closest_marker("sim")
    if marker is not None:
        scenario.update(marker.kwargs)
    return scenario


@pytest.fixture
def sim_server(sim_scenario: dict[str, Any]) -> Iterator[SimServer]:
    server = serve(sim_scenario)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def sim_phone(sim_server: SimServer) -> SimPhone:
    return sim_server.phone


@pytest.fixture
def adb_client(sim_server: SimServer) -> adbutils.AdbClient:
    return adbutils.AdbClient(host="127.0.0.1", port=sim_server.port, socket_timeout=5)


@pytest.fixture
def adb(sim_server: SimServer, tmp_path: Any) -> Iterator[Any]:
    from remote.core.device.adb_controller import ADBController

    controller = ADBController(sim_server.serial, host="127.0.0.1", port=sim_server.port, socket_timeout=5,
                               command_timeout=10, reconnect_attempts=2, reconnect_delay=0.05,
                               state_dir=str(tmp_path / "ime-state"))
    controller.connect()
    try:
        yield controller
    finally:
        controller.close()
