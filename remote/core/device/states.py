"""What a phone's state on the adb server's list means, and what to do about it (docs/adb.md#real-phones-behaviours-r1-r11, R7).

``host:devices`` lists every phone the server sees, ready or not::

    R58M123          device
    0123456789ABCDEF unauthorized                  # the USB-debugging prompt is not accepted yet
    192.168.1.50:5555 offline                      # after `adb connect`, before the phone answers
    3655308719       no permissions (missing udev rules? user is in the plugdev group); see [...]

adbutils splits lines on whitespace, so ``no permissions (…)`` arrives as the state ``no``;
`normalise` puts the words back.
"""

from __future__ import annotations

from remote.errors import DeviceNotFound, DeviceNotReady

READY = "device"
# States a phone passes through on its own; worth waiting a bounded while for.
TRANSIENT = frozenset({"offline", "authorizing", "connecting"})
UDEV_STEPS = ("Linux does not let your user open the phone's USB device: install the udev rules "
              "(Debian/Ubuntu: `sudo apt install android-sdk-platform-tools-common`; elsewhere a rule "
              "`SUBSYSTEM==\"usb\", ATTR{idVendor}==\"<the phone's vendor id from lsusb>\", MODE=\"0660\", "
              "GROUP=\"plugdev\"` in /etc/udev/rules.d/51-android.rules, see developer.android.com/studio/run/device)",
              "add yourself to the plugdev group: `sudo usermod -aG plugdev $USER`, then log out and in",
              "`sudo udevadm control --reload-rules`, unplug and plug the phone in, `adb kill-server`")
_STEPS = {
    "unauthorized": ("accept the USB debugging prompt on the phone (and tick 'always allow' from this computer)",
                     "no prompt? unlock the phone, unplug and plug it in again; or Developer options → Revoke USB "
                     "debugging authorisations, then reconnect"),
    "offline": ("Wi-Fi: `adb disconnect IP:PORT` and `adb connect IP:PORT` again (the phone must be awake and on the "
                "same network); USB: unplug and plug in again",
                "if it stays offline: `adb kill-server`, then reconnect"),
    "no permissions": UDEV_STEPS,
    "authorizing": ("wait a few seconds: the phone is checking this computer's key; accept the prompt if one "
                    "shows",),
    "connecting": ("wait a few seconds: adb is still connecting; if it stays so, unplug and plug in again",),
}


def normalise(state: str) -> str:
    """``no`` (adbutils' first word of ``no permissions (…)``) -> ``no permissions``; the others as they are."""
    state = state.strip()
    return "no permissions" if state == "no" or state.startswith("no permissions") else state


def steps(state: str) -> tuple[str, ...]:
    """What to do for a phone in ``state``, one step per string."""
    state = normalise(state)
    if state == READY:
        return ()
    return _STEPS.get(state, (f"the phone is in {state!r} mode: boot it into Android normally",))


def message(state: str) -> str:
    state = normalise(state)
    return {"unauthorized": "has not accepted this computer yet (unauthorized)",
            "offline": "is offline (listed, but not answering)",
            "no permissions": "cannot be opened: no permissions for its USB device"}.get(state, f"is {state}")


def not_ready(serial: str, state: str) -> DeviceNotReady:
    """The error for a phone listed in ``state``: ``phone X is offline …`` with what to do."""
    state = normalise(state)
    return DeviceNotReady(f"phone {serial} {message(state)}", state=state, serial=serial, hint="; ".join(steps(state)))


def from_transport_error(text: str) -> str | None:
    """The state an adb server's transport refusal names (``device unauthorized.`` …), or None.

    >>> from_transport_error("device unauthorized.\\nThis adb server's $ADB_VENDOR_KEYS is not set")
    'unauthorized'
    """
    lowered = text.lower()
    if "unauthorized" in lowered:
        return "unauthorized"
    if "insufficient permissions" in lowered or "no permissions" in lowered:
        return "no permissions"
    if "device offline" in lowered:
        return "offline"
    return None


def choose(serial: str | None, listed: list[tuple[str, str]]) -> tuple[str, str]:
    """The listed ``(serial, state)`` a command means: its serial, else the only ready one, else the only one.

    DeviceNotFound names what is listed (with states) when that is none or several.
    """
    shown = ", ".join(f"{s} ({normalise(state)})" for s, state in listed) or "none"
    if serial:
        found = [item for item in listed if item[0] == serial]
        if not found:
            raise DeviceNotFound(f"device {serial!r} not found (connected: {shown})", serial=serial,
                                 hint="check `python -m remote devices`; accept the USB debugging prompt on the phone")
        return found[0]
    ready = [item for item in listed if item[1] == READY]
    if len(ready) == 1 or (not ready and len(listed) == 1):
        return (ready or listed)[0]
    if not listed:
        raise DeviceNotFound("no device connected",
                             hint="plug the phone in with USB debugging on, or try the simulated phone: --device sim")
    several = ready or listed
    raise DeviceNotFound(f"{len(several)} devices connected ({', '.join(f'{s} ({st})' for s, st in several)})",
                         hint="choose one with --device SERIAL or ADB_SERIAL" if ready else
                         "none is ready: see `python -m remote devices`")
