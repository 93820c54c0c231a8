"""The tools that look at and act on the phone, registered on an `MCPServer`.

One coordinate space: the last screenshot's pixels. Every place is named one
way: ``x``+``y`` in that image, ``element`` (a number from its list), or
``target_ref`` (found by the hybrid locator on the current screen). What these
mean is said once, in the server's instructions, so each tool's schema stays
short (the whole tool list is an agent's fixed cost on every turn).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, Image, MCPServer
from pydantic import Field

from remote.mcp import apps, batch, clipboard, gestures, keys
from remote.mcp.calls import ACT_TIMEOUT, Caller, ElementNo, Point, TargetRef, X, Y
from remote.mcp.session import Session
from remote.mcp.shot import DEFAULT_MAX_ELEMENTS, Shot

MaxSide = Annotated[int | None, Field(ge=160, le=4096, description="long side px; kept for later calls")]
Direction = Literal["up", "down", "left", "right"]
MaxElements = Annotated[int, Field(ge=0, le=1000)]
Duration = Annotated[int, Field(ge=50, le=10_000)]
Amount = Annotated[int, Field(ge=1, le=20, description="1 = 15% of the screen")]
Region = Annotated[list[float], Field(min_length=4, max_length=4, description="[x1,y1,x2,y2] screenshot px")]
Combo = Annotated[str, Field(description="enter, back, home, del, tab, a-z, 0-9, KEYCODE_ name or number, ctrl+a")]
AppName = Annotated[str, Field(description="name (WeChat) or package")]
Actions = Annotated[list[dict[str, Any]], Field(min_length=1, max_length=30, description=(
    '[{"action": "tap", "element": 3}]: acting tools, by name'))]
TOOLS = ("screenshot", "zoom", "tap", "double_tap", "long_press", "drag", "scroll", "scroll_to", "type", "key",
         "open_app", "list_apps", "stop_app", "open_url", "clipboard_read", "clipboard_write", "wait", "wait_for",
         "batch")


def shot_content(shot: Shot, lines: list[str] | None = None) -> list[Any]:
    text = shot.text(lines)
    if shot.secure:
        return [text + "\nThe screen is secure (FLAG_SECURE): the capture is black; the list above comes from "
                       "the UI tree, which still works."]
    if shot.withheld:
        return [text]
    return [Image(data=shot.jpeg, format="jpeg"), text]


class DeviceTools:
    """The device tools; `register` adds them to a server (``type`` and ``batch`` are methods ``type_`` and
    ``batch_``). Each call runs for the session of the MCP session it came in on."""

    def __init__(self, calls: Caller) -> None:
        self.calls = calls

    def register(self, app: MCPServer) -> None:
        for name in TOOLS:
            fn = getattr(self, name + "_", None) or getattr(self, name)
            app.add_tool(fn, name=name, structured_output=False)

    def _s(self, ctx: Context) -> Session:
        return self.calls.session_for(ctx)

    async def screenshot(self, ctx: Context, max_side: MaxSide = None, with_elements: bool = True,
                         max_elements: MaxElements = DEFAULT_MAX_ELEMENTS) -> list[Any]:
        """JPEG of the screen plus its numbered element list; later x,y and element numbers refer to it."""
        s = self._s(ctx)
        return shot_content(await self.calls.run(lambda: s.screenshot(max_side, with_elements, max_elements)))

    async def zoom(self, ctx: Context, region: Region, max_side: MaxSide = None) -> list[Any]:
        """A region of the last screenshot at native resolution."""
        s = self._s(ctx)
        jpeg, text = await self.calls.run(lambda: gestures.zoom(s, region, max_side))
        return [Image(data=jpeg, format="jpeg"), text]

    async def tap(self, ctx: Context, x: X = None, y: Y = None, element: ElementNo = None,
                  target_ref: TargetRef = None) -> str:
        """Tap a place."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        return await self.calls.run(lambda: gestures.tap(s, asker, x=x, y=y, element=element, target_ref=target_ref))

    async def double_tap(self, ctx: Context, x: X = None, y: Y = None, element: ElementNo = None,
                         target_ref: TargetRef = None) -> str:
        """Tap a place twice quickly."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        return await self.calls.run(lambda: gestures.double_tap(s, asker, x=x, y=y, element=element,
                                                                target_ref=target_ref))

    async def long_press(self, ctx: Context, x: X = None, y: Y = None, element: ElementNo = None,
                         target_ref: TargetRef = None, duration_ms: Duration = 800) -> str:
        """Press and hold a place."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        return await self.calls.run(lambda: gestures.long_press(s, asker, duration_ms=duration_ms, x=x, y=y,
                                                                element=element, target_ref=target_ref))

    async def drag(self, ctx: Context, start: Point, end: Point, duration_ms: Duration = 500) -> str:
        """Press at start, move to end, release."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        a, b = start.model_dump(), end.model_dump()
        return await self.calls.run(lambda: gestures.drag(s, asker, a, b, duration_ms))

    async def scroll(self, ctx: Context, direction: Direction, amount: Amount = 3, x: X = None, y: Y = None,
                     element: ElementNo = None, target_ref: TargetRef = None) -> str:
        """Scroll content ("down" shows more below), at a place or the middle."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        return await self.calls.run(lambda: gestures.scroll(s, asker, direction, amount, x=x, y=y, element=element,
                                                            target_ref=target_ref))

    async def scroll_to(self, ctx: Context, target_ref: str, direction: Direction = "down",
                        max_swipes: Annotated[int, Field(ge=0, le=30)] = 8) -> str:
        """Scroll until target_ref is on screen."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        return await self.calls.run(lambda: gestures.scroll_to(s, asker, target_ref, direction, max_swipes),
                                    timeout=240)

    async def type_(self, ctx: Context, text: str, x: X = None, y: Y = None, element: ElementNo = None,
                    target_ref: TargetRef = None, clear: bool = False, submit: bool = False,
                    verify: bool = True) -> str:
        """Type any text (Chinese, emoji) into the focused field or a place tapped first; submit: ENTER."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        return await self.calls.run(lambda: keys.type_text(s, asker, text, clear=clear, submit=submit,
                                                           verify=verify, x=x, y=y, element=element,
                                                           target_ref=target_ref))

    async def key(self, ctx: Context, combo: Combo, repeat: Annotated[int, Field(ge=1, le=50)] = 1) -> str:
        """Press a key or combination."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        return await self.calls.run(lambda: keys.press_key(s, combo, repeat, asker))

    async def open_app(self, ctx: Context, name: AppName) -> str:
        """Open an allowed app."""
        s = self._s(ctx)
        return await self.calls.run(lambda: apps.open_app(s, name))

    async def list_apps(self, ctx: Context) -> str:
        """Known app names, whether allowed, installed packages."""
        s = self._s(ctx)
        return await self.calls.run(lambda: apps.list_apps(s))

    async def stop_app(self, ctx: Context, name: AppName) -> str:
        """Force-stop an allowed app."""
        s = self._s(ctx)
        return await self.calls.run(lambda: apps.stop_app(s, name))

    async def open_url(self, ctx: Context, url: str) -> str:
        """Open an http(s) URL."""
        s = self._s(ctx)
        return await self.calls.run(lambda: apps.open_url(s, url))

    async def clipboard_read(self, ctx: Context, method: Literal["auto", "helper", "paste"] = "auto") -> str:
        """Read the clipboard (paste: into the focused field, then restored)."""
        s = self._s(ctx)
        return await self.calls.run(lambda: clipboard.read(s, method))

    async def clipboard_write(self, ctx: Context, text: str) -> str:
        """Set the clipboard (needs the clipper app)."""
        s = self._s(ctx)
        return await self.calls.run(lambda: clipboard.write(s, text))

    async def wait(self, seconds: Annotated[float, Field(ge=0, le=60)] = 1.0) -> str:
        """Wait."""
        return await self.calls.run(lambda: batch.wait(seconds), timeout=seconds + 5, hold=False)

    async def wait_for(self, ctx: Context, target_ref: str, gone: bool = False,
                       timeout: Annotated[float, Field(ge=0, le=300)] = 10.0) -> str:
        """Wait until target_ref is on screen (or gone)."""
        s = self._s(ctx)
        return await self.calls.run(lambda: gestures.wait_for(s, target_ref, gone, timeout), timeout=timeout + 60)

    async def batch_(self, ctx: Context, actions: Actions, stop_on_error: bool = True,
                     settle_ms: Annotated[int, Field(ge=0, le=5000)] = 300, max_side: MaxSide = None) -> list[Any]:
        """Several actions in one call, each saying if the screen changed; ends with a screenshot."""
        s, asker = self._s(ctx), self.calls.asker(ctx)
        lines, shot = await self.calls.run(lambda: batch.run_batch(s, asker, actions, stop_on_error, settle_ms,
                                                                   max_side), timeout=ACT_TIMEOUT * 3)
        return shot_content(shot, lines)
