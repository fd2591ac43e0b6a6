"""Signing in from the page: a person drives Navi's own headless Chromium through a picture of it.

A `Viewer` is one sign-in being made by one user: its own browser context in the tool's pool (the
same confinement, network guard and limits as the tool's; no approvals, since the person acts, not
the model), opened on the site's sign-in page, then clicked at a point of a screenshot, typed into,
scrolled; `save` keeps its cookies and storage as the user's named sign-in (`profiles.py`, the same
file `navi browser login` writes), `close` keeps nothing. What is typed goes to the page only: it is
in no log (it joins the context's secrets, which the routing's log leaves out) and nowhere stored.
The socket that carries it is navi/api/browser_viewer.py.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import uuid
from dataclasses import dataclass
from typing import Any

from navi import runctx
from navi.tools.builtin.browser.profiles import NAME, ProfileError
from navi.tools.builtin.browser.sessions import BrowserSession
from navi.tools.builtin.http import check_url

SETTLE_MS = 1_500  # after an input, how long the page may take to calm down before the next picture
QUALITY = 70  # the pictures' JPEG quality


class ViewerProblem(ValueError):
    """Why the viewer cannot do what was asked (said to the person; the viewer goes on)."""


@dataclass(frozen=True)
class Picture:
    jpeg: bytes
    url: str
    title: str

    def data_uri(self) -> str:
        return "data:image/jpeg;base64," + base64.b64encode(self.jpeg).decode("ascii")


class Viewer:
    def __init__(self, tool: Any, owner: str) -> None:
        self.tool = tool  # the BrowserTool
        self.owner = owner
        self.key = f"viewer:{owner}:{uuid.uuid4().hex[:12]}"
        self.name = ""

    @property
    def session(self) -> BrowserSession | None:
        return self.tool.pool.peek(self.key) if self.name else None

    async def start(self, name: str, url: str) -> None:
        if not NAME.match(name):
            raise ViewerProblem("a sign-in's name is lower-case letters, digits, '-' and '_' (at most 40)")
        if problem := check_url(url):
            raise ViewerProblem(problem)
        await self.close()
        try:
            await self.tool.pool.session(self.key, None, owner=self.owner, profile=name, create=True)
        except ProfileError as exc:
            raise ViewerProblem(str(exc)) from exc
        self.name = name
        with runctx.using(runctx.RunContext(session_id=self.key, owner=self.owner, persistent=False)):
            opened = await self.tool.execute({"action": "open", "url": url})
        if not opened.success:
            await self.close()
            raise ViewerProblem(opened.error or f"could not open {url}")

    def _page(self) -> tuple[BrowserSession, Any]:
        session = self.session
        if session is None or session.tab is None:
            raise ViewerProblem("no sign-in is under way: start one (its name and the site's address)")
        session.last_used = self.tool.pool.clock()
        return session, session.tab.page

    async def click(self, x: float, y: float) -> None:
        session, page = self._page()
        async with session.lock:
            await page.mouse.click(x, y)
            await self._settle(session)

    async def type_text(self, text: str) -> None:
        session, page = self._page()
        session.secrets.add(text)  # out of the routing's log (a GET form puts it in a URL)
        async with session.lock:
            await page.keyboard.type(text)

    async def press(self, key: str) -> None:
        session, page = self._page()
        async with session.lock:
            await page.keyboard.press(key)
            await self._settle(session)

    async def scroll(self, dy: float) -> None:
        session, page = self._page()
        async with session.lock:
            await page.mouse.wheel(0, dy)
            await self._settle(session)

    async def _settle(self, session: BrowserSession) -> None:
        page = session.tab.page if session.tab is not None else None  # a click may open a tab
        if page is None:
            return
        with contextlib.suppress(Exception):
            await page.wait_for_load_state("load", timeout=self.tool.settings.timeout_seconds * 1000)
        with contextlib.suppress(Exception):
            await page.wait_for_load_state("networkidle", timeout=SETTLE_MS)

    async def picture(self) -> Picture:
        session, page = self._page()
        async with session.lock:
            jpeg = await page.screenshot(type="jpeg", quality=QUALITY, timeout=10_000)
            title = ""
            with contextlib.suppress(Exception):
                title = await page.title()
            return Picture(jpeg, page.url, title)

    async def save(self) -> list[str]:
        """Keep the sign-in under its name; the sites it holds cookies for (no values)."""
        self._page()
        name = self.name
        self.name = ""
        await self.tool.pool.close_session(self.key, keep_profile=True)
        try:
            state = await asyncio.to_thread(self.tool.pool.profiles.load, self.owner, name)
        except ProfileError as exc:
            raise ViewerProblem(f"the sign-in {name!r} was not kept: {exc}") from exc
        domains = {str(c.get("domain", "")).lstrip(".") for c in state["cookies"] if isinstance(c, dict)}
        return sorted(d for d in domains if d)

    async def close(self) -> None:
        """End the sign-in under way, keeping nothing."""
        self.name = ""
        await self.tool.pool.close_session(self.key, keep_profile=False)
