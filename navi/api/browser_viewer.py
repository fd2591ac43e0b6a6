"""The sign-in viewer's socket, `ws://host/ws/browser/viewer` (frames: navi/protocol/viewer.py).

A person signs into a site from the page, in Navi's own headless Chromium: this socket sends
pictures of the page (after each input, and every `REFRESH` seconds while it is open, each only
when it differs from the last one sent) and hands the person's clicks, text and keys to the
`Viewer` (navi/tools/builtin/browser/viewer.py); `viewer_save` keeps the result as the user's
named sign-in, the same file `navi browser login` writes.

Who: the socket is let in like every other (the token, a signed-in browser, a user's token), and
checks its credentials again before each frame; a sign-out or the user's removal closes it (4401).
The sign-in is the socket's user's: their folder of sign-ins, nobody else's, and no other socket
can reach the viewer. Several workers: the viewer lives as long as its socket, and a socket stays
on the worker that accepted it, whose Chromium holds the sign-in under way — the viewer is pinned
to that worker by its connection; nothing of it crosses to another. The saved sign-in is a file in
NAVI_BROWSER_PROFILES_DIR, which every worker of the machine reads (docs/deploy.md).

What is typed is never logged or stored: frames are not logged, and a `viewer_text` frame's text
goes to the page only. The socket closes 4404 when this Navi has no browser tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from fastapi import APIRouter, WebSocket
from pydantic import ValidationError

from navi.api.identity import recheck_of, user_of
from navi.api.sockets import CLOSE_SIGNED_OUT, SIGNED_OUT, OpenSockets
from navi.logging import get_logger
from navi.protocol.viewer import (
    VIEWER_CLIENT_ADAPTER,
    ViewerCancel,
    ViewerClick,
    ViewerError,
    ViewerFrame,
    ViewerKey,
    ViewerSave,
    ViewerSaved,
    ViewerScroll,
    ViewerStart,
    ViewerText,
)
from navi.tools.builtin.browser.launch import BrowserUnavailable
from navi.tools.builtin.browser.viewer import Viewer, ViewerProblem

log = get_logger(__name__)
router = APIRouter()
REFRESH = 1.0  # seconds between pictures while nothing is done (a page that changes by itself)
MAX_FRAME = 8_000  # characters of a client frame
CLOSE_NO_BROWSER = 4404


class _Link:
    """One socket's sends, one at a time; once it is ending nothing more is sent."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.lock = asyncio.Lock()
        self.ended = asyncio.Event()
        self.shown = b""  # the last picture sent (the same one is not sent again)

    async def send(self, frame: dict[str, Any]) -> None:
        async with self.lock:
            if not self.ended.is_set():
                await self.websocket.send_text(json.dumps(frame))

    def end(self, code: int = CLOSE_SIGNED_OUT, reason: str = SIGNED_OUT) -> None:
        if self.ended.is_set():
            return
        self.ended.set()
        task = asyncio.get_running_loop().create_task(self._close(code, reason))
        task.add_done_callback(lambda _t: None)

    async def _close(self, code: int, reason: str) -> None:
        async with self.lock:
            with contextlib.suppress(Exception):
                await self.websocket.close(code=code, reason=reason)


async def _picture(viewer: Viewer, link: _Link) -> None:
    if viewer.session is None:
        return
    try:
        shot = await viewer.picture()
    except ViewerProblem:
        return
    except Exception as exc:  # the page went away mid-picture: the next one will do
        log.info("viewer.picture_failed", error=type(exc).__name__)
        return
    if shot.jpeg == link.shown:
        return
    link.shown = shot.jpeg
    await link.send(ViewerFrame(image=shot.data_uri(), url=shot.url, title=shot.title).frame())


async def _refresher(viewer: Viewer, link: _Link) -> None:
    while not link.ended.is_set():
        await asyncio.sleep(REFRESH)
        await _picture(viewer, link)


async def _act(viewer: Viewer, frame: Any, link: _Link) -> bool:
    """Do what one frame asks; False when the viewer is done (saved or cancelled)."""
    match frame:
        case ViewerStart(name=name, url=url):
            await viewer.start(name, url)
        case ViewerClick(x=x, y=y):
            await viewer.click(x, y)
        case ViewerText(text=text):
            await viewer.type_text(text)
        case ViewerKey(key=key):
            await viewer.press(key)
        case ViewerScroll(dy=dy):
            await viewer.scroll(dy)
        case ViewerSave():
            name = viewer.name
            sites = await viewer.save()
            log.info("viewer.saved", name=name, sites=len(sites))
            await link.send(ViewerSaved(name=name, sites=sites).frame())
            return False
        case ViewerCancel():
            await viewer.close()
            return False
    await _picture(viewer, link)
    return True


@router.websocket("/ws/browser/viewer")
async def viewer_socket(websocket: WebSocket) -> None:
    runtime = websocket.app.state.runtime
    sockets: OpenSockets = websocket.app.state.sockets
    user = user_of(websocket.scope)
    recheck, credential = recheck_of(websocket.scope)
    await websocket.accept()
    link = _Link(websocket)
    if runtime.browser is None:
        await link.send(ViewerError(message="this Navi has no browser tool").frame())
        link.end(CLOSE_NO_BROWSER, "no browser")
        return
    viewer = Viewer(runtime.browser, user)
    watched = sockets.add(user, recheck, credential, link.end)
    refresher = asyncio.create_task(_refresher(viewer, link))
    try:
        while not link.ended.is_set():
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            if not await recheck():
                link.end()
                break
            try:
                raw = message.get("text") or (message.get("bytes") or b"").decode("utf-8", "replace")
                if len(raw) > MAX_FRAME:
                    raise ViewerProblem(f"a frame is at most {MAX_FRAME:,} characters")
                frame = VIEWER_CLIENT_ADAPTER.validate_json(raw)
                if not await _act(viewer, frame, link):
                    link.end(1000, "done")
            except ValidationError as exc:
                # Said without the frame's input: a text frame's text may be a password.
                where = exc.errors(include_input=False)[0]
                detail = f"{'.'.join(str(p) for p in where['loc'])}: {where['msg']}"
                await link.send(ViewerError(message=f"bad frame: {detail}").frame())
            except (ViewerProblem, BrowserUnavailable) as exc:
                await link.send(ViewerError(message=str(exc)).frame())
            except Exception as exc:  # Chromium's own error on an input: said, the viewer goes on
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                for secret in viewer.session.secrets if viewer.session is not None else ():
                    first = first.replace(secret, "…")  # what was typed is never said back
                await link.send(ViewerError(message=f"the browser could not do that: {first[:200]}").frame())
    finally:
        refresher.cancel()
        with contextlib.suppress(BaseException):
            await refresher
        sockets.discard(watched)
        await viewer.close()
