"""One Chromium for the process, one browser context per session, closed when idle.

`BrowserPool` starts Chromium on the first call that needs it (`launch.py`), never at import or at
server start. Each session gets its own context: its own cookies and storage, kept while the session
uses it, and closed after `idle_seconds` without a call. A stored conversation's cookies and storage
are saved after each call (`states.py`: in the database, for whichever worker runs its next turn)
and a context made for it again starts from them; one started from a named profile (`profiles.py`)
also writes it back as it closes. When the last
context closes, Chromium and Playwright stop too. At most `max_sessions` contexts are open in the
process (the least recently used idle one makes room). A session has at most `max_pages` tabs: a page
that opens more (a popup, a `target=_blank` link) is closed at once and the tool says so.

Every context routes its requests through a `Router` (the network guard), blocks service workers
(their fetches would not be routed), and closes WebSockets. A download is saved into the session's
upload folder under the upload rules (a safe, unused name; no programs or files that run when
opened; a size cap); a refused one is reported, never kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from navi.logging import get_logger
from navi.net.guard import NetGuard
from navi.sessions.files import claim
from navi.sessions.filetypes import SNIFF_BYTES, executable_reason, extension_reason, kind_reason, zip_reason
from navi.tools.builtin.browser.launch import BrowserSettings, BrowserUnavailable, SandboxKind, launch
from navi.tools.builtin.browser.profiles import Profiles
from navi.tools.builtin.browser.routing import Router
from navi.tools.builtin.browser.snapshot import Snapshot, site
from navi.tools.builtin.browser.states import BrowserStates, InMemoryBrowserStates, SavedState
from navi.tools.paths import upload_folder_name

log = get_logger(__name__)


@dataclass
class Tab:
    page: Any
    snapshot: Snapshot | None = None


@dataclass
class BrowserSession:
    """One session's browser: its context, tabs, the sites it has been to, what it downloaded."""

    key: str
    files_session: str | None
    context: Any
    router: Router
    owner: str = "local"
    profile: str | None = None  # the named profile it started from, written back when it closes
    creating: bool = False  # `navi browser login` of a new profile (else one deleted meanwhile stays so)
    explicit: bool = False  # a sign-in being made (login, the page's viewer): kept only by its Save
    tabs: list[Tab] = field(default_factory=list)
    current: int = 0
    sites: set[str] = field(default_factory=set)  # sites this session's pages have been on
    downloads: list[str] = field(default_factory=list)  # lines for the next result
    notes: list[str] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)  # typed into password fields: never shown again
    awaited: int = 0  # downloads the routing handed over whose files are not saved yet
    persist: bool = False  # a stored conversation's: its state is saved for its next turn (states.py)
    version: int = 0  # the saved state's version this context has (a higher one: another worker acted)
    saved: str = ""  # the state last saved, as JSON (an unchanged one is not written again)
    restored_url: str = ""  # made again from a saved state: the page it was on
    last_used: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def tab(self) -> Tab | None:
        return self.tabs[self.current] if 0 <= self.current < len(self.tabs) else None

    def take_notes(self) -> list[str]:
        out = [*self.notes, *self.downloads]
        self.notes, self.downloads = [], []
        return out


def safe_name(raw: str) -> str:
    """A download's file name: no directory part, no control characters, no leading dots, ≤ 150."""
    name = unicodedata.normalize("NFC", raw.replace("\\", "/").rsplit("/", 1)[-1])
    name = "".join(ch for ch in name if ch.isprintable() and ch not in '<>:"|?*\x00')
    name = re.sub(r"\s+", " ", name).strip(" .")
    return (name or "download")[-150:]


class BrowserPool:
    def __init__(
        self,
        settings: BrowserSettings,
        guard: NetGuard,
        *,
        clock: Callable[[], float] = time.monotonic,
        states: BrowserStates | None = None,
    ) -> None:
        self.settings = settings
        self.guard = guard
        self.clock = clock
        self.states = states if states is not None else InMemoryBrowserStates()
        self.sessions: dict[str, BrowserSession] = {}
        self.profiles = Profiles(Path(settings.profiles_dir))
        self.kind: SandboxKind | None = None
        self._pw: Any = None
        self._browser: Any = None
        self._folder: str | None = None
        self._start = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    def peek(self, key: str) -> BrowserSession | None:
        """The session's browser if it has one now (never starts anything)."""
        return self.sessions.get(key)

    async def session(
        self,
        key: str,
        files_session: str | None,
        *,
        owner: str = "local",
        profile: str | None = None,
        create: bool = False,
        persist: bool = False,
    ) -> BrowserSession:
        """The session's browser, made on its first call: with `persist` (a stored conversation)
        from its saved state when it has one (another worker's, or this one's before the context
        was closed), else from the user's named `profile` (its cookies and storage) when one is
        given, else empty. `ProfileError` for a missing profile, unless `create` (`navi browser
        login`: it is made when the browser closes). A context whose version is not the saved
        state's (another worker acted since, or closed it) is replaced by one made from it."""
        await self.reap()
        if self._browser is not None and not self._browser.is_connected():  # Chromium died
            log.warning("browser.lost", sessions=len(self.sessions))
            lost, self.sessions = list(self.sessions.values()), {}
            for gone in lost:
                await gone.router.aclose()
            await self._stop_browser()
        existing = self.sessions.get(key)
        if existing is not None and persist and await self.states.version(key, owner) != existing.version:
            # Another worker acted since (a newer state, which writes the profile back itself) or
            # closed the conversation's browser (none): this context is out of date.
            log.info("browser.changed_elsewhere", session=key)
            await self.close_session(key, keep_profile=False)
            existing = None
        if existing is not None:
            existing.last_used = self.clock()
            return existing
        await self._make_room()
        state = None
        saved = await self.states.load(key, owner) if persist else None
        creating = bool(
            profile and create and not await asyncio.to_thread(self.profiles.exists, owner, profile)
        )
        if saved is not None:
            state, profile, creating = saved.state, saved.profile, False
        elif profile and not creating:
            state = await asyncio.to_thread(self.profiles.load, owner, profile)
        browser = await self._browser_started()
        router = Router(
            self.guard,
            self.settings.timeout_seconds,
            self.settings.max_response_bytes,
            max_download_bytes=self.settings.max_download_bytes,
        )
        context = await browser.new_context(
            service_workers="block",
            accept_downloads=True,
            viewport={"width": 1280, "height": 800},
            storage_state=state,
        )
        context.set_default_timeout(self.settings.timeout_seconds * 1000)
        await context.route("**/*", router.handle)
        await context.route_web_socket("**/*", _refuse_websocket)
        made = BrowserSession(
            key, files_session, context, router, owner=owner, profile=profile, last_used=self.clock()
        )
        made.creating, made.explicit = creating, create
        made.persist = persist
        if saved is not None:
            made.version, made.restored_url = saved.version, saved.url
            made.saved = json.dumps(saved.state, sort_keys=True)
            log.info("browser.restored", session=key, version=saved.version)
        router.secrets = made.secrets  # the same set: what is typed later is kept out of its log too
        router.on_request = lambda url, nav: made.sites.add(site(url)) if nav else None
        router.on_attachment = lambda: setattr(made, "awaited", made.awaited + 1)
        context.on("page", lambda page: self._opened(made, page))
        self.sessions[key] = made
        return made

    async def _make_room(self) -> None:
        """At most `max_sessions` contexts in this process: the least recently used one that is not
        acting now is closed for a new one (its next call opens its page again)."""
        while len(self.sessions) >= self.settings.max_sessions:
            idle = [s for s in self.sessions.values() if not s.lock.locked()]
            if not idle:
                raise BrowserUnavailable(
                    f"the browser is busy: {len(self.sessions)} conversations are using it now "
                    f"(at most {self.settings.max_sessions}); try again in a moment"
                )
            oldest = min(idle, key=lambda s: s.last_used)
            log.info("browser.evicted", session=oldest.key, open=len(self.sessions))
            await self.close_session(oldest.key)

    async def _browser_started(self) -> Any:
        async with self._start:
            if self._browser is None or not self._browser.is_connected():
                self._folder = tempfile.mkdtemp(prefix="navi-browser-")
                # Made now, so the confinement can hide it (a folder that does not exist cannot be).
                files = Path(self.settings.files_dir)
                await asyncio.to_thread(files.mkdir, mode=0o700, parents=True, exist_ok=True)
                profiles = Path(self.settings.profiles_dir)
                await asyncio.to_thread(profiles.mkdir, mode=0o700, parents=True, exist_ok=True)
                self._pw, self._browser, self.kind = await launch(self.settings, self._folder)
                log.info("browser.started", sandbox=self.kind, executable=self.settings.executable)
                if self._reaper is None or self._reaper.done():
                    self._reaper = asyncio.create_task(self._reap_loop())
            return self._browser

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` from a Playwright event handler, holding the task until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, session: BrowserSession) -> None:
        """Wait (at most the action timeout) for the downloads the session's page started to be
        saved, and for page closes under way."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.timeout_seconds
        while session.awaited and loop.time() < deadline:  # noqa: ASYNC110 - set from Playwright's events
            await asyncio.sleep(0.05)
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.settings.timeout_seconds)

    def _opened(self, session: BrowserSession, page: Any) -> None:
        if any(t.page is page for t in session.tabs):
            return
        if len(session.tabs) >= self.settings.max_pages:
            session.notes.append(
                f"The page opened another tab ({page.url or 'a popup'}); it was closed: at most "
                f"{self.settings.max_pages} tabs. Close one (action close with tab) first."
            )
            self._later(page.close())
            return
        page.on("download", lambda download: self._later(self._download(session, download)))
        session.tabs.append(Tab(page))
        session.current = len(session.tabs) - 1

    async def new_tab(self, session: BrowserSession) -> Tab:
        if len(session.tabs) >= self.settings.max_pages:
            raise ValueError(
                f"at most {self.settings.max_pages} tabs are open at once; close one first "
                "(action close, tab N)"
            )
        page = await session.context.new_page()
        self._opened(session, page)  # the context's "page" event may come later: added once either way
        session.current = next(i for i, t in enumerate(session.tabs) if t.page is page)
        return session.tabs[session.current]

    async def close_tab(self, session: BrowserSession, index: int) -> None:
        tab = session.tabs.pop(index)
        with contextlib.suppress(Exception):
            await tab.page.close()
        session.current = min(session.current, len(session.tabs) - 1) if session.tabs else 0

    async def persist(self, session: BrowserSession) -> None:
        """Save a stored conversation's cookies and storage for its next turn, on any worker (when
        they changed); a failure is logged, the call's result stands."""
        if not session.persist:
            return
        try:
            state = await session.context.storage_state()
            data = json.dumps(state, sort_keys=True)
            if data == session.saved:
                return
            url = session.tab.page.url if session.tab is not None else session.restored_url
            saved = SavedState(state, session.version + 1, session.profile, url)
            await self.states.save(session.key, session.owner, saved)
            session.version, session.saved = saved.version, data
        except Exception as exc:
            log.warning("browser.state_not_saved", session=session.key, error=str(exc)[:200])

    async def forget(self, key: str, owner: str | None = None) -> bool:
        """Close the session's browser and drop its saved state (its cookies are gone for good)."""
        closed = await self.close_session(key)
        await self.states.forget(key, owner)
        return closed

    async def close_session(self, key: str, *, keep_profile: bool | None = None) -> bool:
        """Close the session's browser (its saved state stays, for its next call); one started from
        a profile writes what the sites changed back to it first (`keep_profile` None: unless it is
        a sign-in being made, which only its Save keeps)."""
        session = self.sessions.pop(key, None)
        if session is None:
            return False
        if keep_profile is None:
            keep_profile = not session.explicit
        if session.profile and keep_profile:
            try:
                if not (session.creating or self.profiles.exists(session.owner, session.profile)):
                    raise FileNotFoundError("deleted while the browser was open")  # not made again
                state = await session.context.storage_state()
                await asyncio.to_thread(self.profiles.save, session.owner, session.profile, state)
            except Exception as exc:  # the browser died, the folder is not writable: said, not fatal
                log.warning("browser.profile_not_saved", profile=session.profile, error=str(exc)[:200])
        with contextlib.suppress(Exception):
            await session.context.close()
        await session.router.aclose()
        if not self.sessions:
            await self._stop_browser()
        return True

    async def reap(self) -> None:
        """Close every context unused for `idle_seconds`."""
        now = self.clock()
        for key, session in list(self.sessions.items()):
            if now - session.last_used >= self.settings.idle_seconds and not session.lock.locked():
                log.info("browser.idle_closed", session=key)
                await self.close_session(key)

    async def _reap_loop(self) -> None:
        while self._browser is not None:
            await asyncio.sleep(max(1.0, self.settings.idle_seconds / 4))
            await self.reap()

    async def _stop_browser(self) -> None:
        browser, pw, self._browser, self._pw = self._browser, self._pw, None, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.close()
        if pw is not None:
            with contextlib.suppress(Exception):
                await pw.stop()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        reaper, self._reaper = self._reaper, None
        if reaper is not None and reaper is not asyncio.current_task():
            reaper.cancel()

    async def aclose(self) -> None:
        for key in list(self.sessions):
            await self.close_session(key)
        await self._stop_browser()

    # --- downloads -----------------------------------------------------------------------------------
    async def _download(self, session: BrowserSession, download: Any) -> None:
        try:
            await self._save(session, download)
        finally:
            session.awaited = max(0, session.awaited - 1)

    async def _save(self, session: BrowserSession, download: Any) -> None:
        name = safe_name(download.suggested_filename or "download")
        try:
            source = await download.path()
        except Exception as exc:
            session.downloads.append(f"Download of {name} failed: {exc}")
            return
        try:
            line = await asyncio.to_thread(self._keep, session, name, Path(source))
        except OSError as exc:
            line = f"Download of {name} was not saved: {exc}"
        session.downloads.append(line)
        with contextlib.suppress(Exception):
            await download.delete()

    def _keep(self, session: BrowserSession, name: str, source: Path) -> str:
        folder_name = upload_folder_name(session.files_session)
        if folder_name is None:
            return f"Download of {name} was not saved: this run has no session folder"
        size = source.stat().st_size
        limit = self.settings.max_download_bytes
        if size > limit:
            return f"Download of {name} refused: {size:,} bytes, over the {limit:,}-byte limit"
        with open(source, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
        reason = extension_reason(name) or executable_reason(name, head)
        if reason is not None:
            return f"Download of {name} refused: {reason}"
        folder = Path(self.settings.files_dir) / folder_name
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        path = claim(folder, name)
        if path is None:
            return f"Download of {name} was not saved: no free name in the session folder"
        shutil.copyfile(source, path)
        why = zip_reason(path) or kind_reason(name, head, path)
        if why is not None:
            os.unlink(path)
            return f"Download of {name} refused: {why}"
        return f"Downloaded {path.name} ({size:,} bytes) into the session's files: {path}"


async def _refuse_websocket(ws: Any) -> None:
    await ws.close(code=1008, reason="WebSockets are not available in Navi's browser")
