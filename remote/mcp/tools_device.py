"""The tools that look at and act on the phone, registered on an `MCPServer`.

One coordinate space: the last screenshot's pixels. Every place is named one
way: ``x``+``y`` in that image, ``element`` (a number from its list), or
``target_ref`` (found by the hybrid locator on the current screen).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, Image, MCPServer
from pydantic import Field

from remote.mcp import apps, batch, clipboard, gestures, keys
from remote.mcp.calls import ACT_TIMEOUT, Caller, ElementNo, Point, TargetRef, X, Y
from remote.mcp.shot import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_SIDE, Shot

MaxSide = Annotated[int, Field(ge=160, le=4096, description="longest side of the returned image, in pixels")]
Direction = Literal["up", "down", "left", "right"]
MaxElements = Annotated[int, Field(ge=0, le=1000, description="cap of the element list (a note says what is hidden)")]
Duration = Annotated[int, Field(ge=50, le=10_000, description="milliseconds")]
Amount = Annotated[int, Field(ge=1, le=20, description="clicks; one is 15 % of the screen")]
Region = Annotated[list[float], Field(min_length=4, max_length=4,
                                      description="[x1, y1, x2, y2] in the last screenshot's pixels")]
Combo = Annotated[str, Field(description=(
    "a key name (enter, back, home, del, tab, space, escape, up, down, left, right, recent, paste, volume_up, "
    "power, a-z, 0-9, f1-f12, or a KEYCODE_ name or number) or a combination like ctrl+a (Android 11+)"))]
AppName = Annotated[str, Field(description="app name (微信, WeChat, 设置, Chrome) or package")]
Actions = Annotated[list[dict[str, Any]], Field(min_length=1, max_length=30, description=(
    'actions in order, each {"action": NAME, ...its arguments}: tap, double_tap, long_press, drag, scroll, '
    "scroll_to, type, key, open_app, stop_app, open_url, wait, wait_for, clipboard_write. Example: "
    '[{"action": "tap", "target_ref": "desc:搜索"}, {"action": "type", "text": "张三"}]'))]
TOOLS = ("screenshot", "zoom", "tap", "double_tap", "long_press", "drag", "scroll", "scroll_to", "type", "key",
         "open_app", "list_apps", "stop_app", "open_url", "clipboard_read", "clipboard_write", "wait", "wait_for",
         "batch")


def shot_content(shot: Shot, lines: list[str] | None = None) -> list[Any]:
    text = "\n".join([*(lines or []), shot.header(), shot.element_text()])
    if shot.secure:
        return [text + "\nThe screen is secure (FLAG_SECURE): the capture is black; the list above comes from "
                       "the UI tree, which still works."]
    return [Image(data=shot.jpeg, format="jpeg"), text]


class DeviceTools:
    """The device tools of one session; `register` adds them to a server (``type`` and ``batch`` are
    methods ``type_`` and ``batch_``)."""

    def __init__(self, calls: Caller) -> None:
        self.calls = calls
        self.s = calls.session

    def register(self, app: MCPServer) -> None:
        for name in TOOLS:
            fn = getattr(self, name + "_", None) or getattr(self, name)
            app.add_tool(fn, name=name, structured_output=False)

    async def screenshot(self, max_side: MaxSide = DEFAULT_MAX_SIDE, with_elements: bool = True,
                         max_elements: MaxElements = DEFAULT_MAX_ELEMENTS) -> list[Any]:
        """The screen as a downscaled JPEG plus a numbered list of its GUI elements, in the image's pixels.

        Every later coordinate is read in this image's space (the scale to device pixels is stated), and
        element numbers refer to this list until the next screenshot.
        """
        shot = await self.calls.run(lambda: self.s.screenshot(max_side, with_elements, max_elements))
        return shot_content(shot)

    async def zoom(self, region: Region, max_side: MaxSide = DEFAULT_MAX_SIDE) -> list[Any]:
        """A region of the last screenshot at the phone's native resolution (for small text and icons)."""
        jpeg, text = await self.calls.run(lambda: gestures.zoom(self.s, region, max_side))
        return [Image(data=jpeg, format="jpeg"), text]

    async def tap(self, ctx: Context, x: X = None, y: Y = None, element: ElementNo = None,
                  target_ref: TargetRef = None) -> str:
        """Tap one place: x,y (last screenshot's pixels), an element number, or a target_ref."""
        asker = self.calls.asker(ctx)
        where: dict[str, Any] = {"x": x, "y": y, "element": element, "target_ref": target_ref}
        return await self.calls.run(lambda: gestures.tap(self.s, asker, **where))

    async def double_tap(self, ctx: Context, x: X = None, y: Y = None, element: ElementNo = None,
                         target_ref: TargetRef = None) -> str:
        """Tap one place twice quickly (zoom a map or picture, select a word)."""
        asker = self.calls.asker(ctx)
        where: dict[str, Any] = {"x": x, "y": y, "element": element, "target_ref": target_ref}
        return await self.calls.run(lambda: gestures.double_tap(self.s, asker, **where))

    async def long_press(self, ctx: Context, x: X = None, y: Y = None, element: ElementNo = None,
                         target_ref: TargetRef = None, duration_ms: Duration = 800) -> str:
        """Press and hold one place (context menus, drag handles)."""
        asker = self.calls.asker(ctx)
        where: dict[str, Any] = {"x": x, "y": y, "element": element, "target_ref": target_ref}
        return await self.calls.run(lambda: gestures.long_press(self.s, asker, duration_ms=duration_ms, **where))

    async def drag(self, ctx: Context, start: Point, end: Point, duration_ms: Duration = 500) -> str:
        """Press at start, move to end, release. Each end is {x,y} or {element} or {target_ref}."""
        asker = self.calls.asker(ctx)
        a, b = start.model_dump(), end.model_dump()
        return await self.calls.run(lambda: gestures.drag(self.s, asker, a, b, duration_ms))

    async def scroll(self, ctx: Context, direction: Direction, amount: Amount = 3, x: X = None, y: Y = None,
                     element: ElementNo = None, target_ref: TargetRef = None) -> str:
        """Scroll the content in a direction ("down" shows what is further down), at a place or the middle."""
        asker = self.calls.asker(ctx)
        where: dict[str, Any] = {"x": x, "y": y, "element": element, "target_ref": target_ref}
        return await self.calls.run(lambda: gestures.scroll(self.s, asker, direction, amount, **where))

    async def scroll_to(self, ctx: Context, target_ref: Annotated[str, Field(description="what to bring on screen")],
                        direction: Direction = "down", max_swipes: Annotated[int, Field(ge=0, le=30)] = 8) -> str:
        """Scroll until target_ref is on the screen (stops at the end of the list); says where it is."""
        asker = self.calls.asker(ctx)
        return await self.calls.run(lambda: gestures.scroll_to(self.s, asker, target_ref, direction, max_swipes),
                                    timeout=240)

    async def type_(self, ctx: Context, text: Annotated[str, Field(description="any text: Chinese, emoji, quotes")],
                    x: X = None, y: Y = None, element: ElementNo = None, target_ref: TargetRef = None,
                    clear: bool = False, submit: bool = False, verify: bool = True) -> str:
        """Type text into the focused field, or into the field named by x,y / element / target_ref (tapped
        first). Any language through ADBKeyboard; the field is read back (verify) and the person's input
        method is restored afterwards. clear empties the field first; submit presses ENTER after."""
        asker = self.calls.asker(ctx)
        where: dict[str, Any] = {"x": x, "y": y, "element": element, "target_ref": target_ref}
        return await self.calls.run(lambda: keys.type_text(self.s, asker, text, clear=clear, submit=submit,
                                                           verify=verify, **where))

    async def key(self, combo: Combo, repeat: Annotated[int, Field(ge=1, le=50)] = 1) -> str:
        """Press a key or key combination, repeat times."""
        return await self.calls.run(lambda: keys.press_key(self.s, combo, repeat))

    async def open_app(self, name: AppName) -> str:
        """Open an app (it must be allowed by request_access)."""
        return await self.calls.run(lambda: apps.open_app(self.s, name))

    async def list_apps(self) -> str:
        """The apps remote knows by name, whether each is allowed, and the installed packages."""
        return await self.calls.run(lambda: apps.list_apps(self.s))

    async def stop_app(self, name: AppName) -> str:
        """Force-stop an app (it must be allowed)."""
        return await self.calls.run(lambda: apps.stop_app(self.s, name))

    async def open_url(self, url: Annotated[str, Field(description="an http:// or https:// URL")]) -> str:
        """Open a web address in the phone's browser (or the app that handles it)."""
        return await self.calls.run(lambda: apps.open_url(self.s, url))

    async def clipboard_read(self, method: Literal["auto", "helper", "paste"] = "auto") -> str:
        """Read the phone's clipboard. Android 10+ keeps it from background apps: then "paste" pastes into the
        focused field, reads it back and restores the field (docs/mcp.md#clipboard)."""
        return await self.calls.run(lambda: clipboard.read(self.s, method))

    async def clipboard_write(self, text: str) -> str:
        """Put text on the phone's clipboard (needs the clipper helper app; see docs/mcp.md#clipboard)."""
        return await self.calls.run(lambda: clipboard.write(self.s, text))

    async def wait(self, seconds: Annotated[float, Field(ge=0, le=60)] = 1.0) -> str:
        """Wait, then return (for animations and loading)."""
        return await self.calls.run(lambda: batch.wait(seconds), timeout=seconds + 5, hold=False)

    async def wait_for(self, target_ref: Annotated[str, Field(description="what to wait for, as a target_ref")],
                       gone: bool = False, timeout: Annotated[float, Field(ge=0, le=300)] = 10.0) -> str:
        """Wait until target_ref is on the screen (or, with gone, until it is not); an error after timeout."""
        return await self.calls.run(lambda: gestures.wait_for(self.s, target_ref, gone, timeout),
                                    timeout=timeout + 60)

    async def batch_(self, ctx: Context, actions: Actions, stop_on_error: bool = True,
                     settle_ms: Annotated[int, Field(ge=0, le=5000)] = 300,
                     max_side: MaxSide = DEFAULT_MAX_SIDE) -> list[Any]:
        """Several actions in one call; each line says whether the screen changed; ends with a screenshot."""
        asker = self.calls.asker(ctx)
        lines, shot = await self.calls.run(
            lambda: batch.run_batch(self.s, asker, actions, stop_on_error, settle_ms, max_side),
            timeout=ACT_TIMEOUT * 3)
        return shot_content(shot, lines)
