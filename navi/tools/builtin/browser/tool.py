"""`browser`: a real Chromium for pages that need JavaScript, a login, a click or a form.

Actions: `open` a URL, `read` the page (its text and numbered interactive elements), `click`,
`type` into and `select` in an element by its number, `scroll`, `screenshot` (shown to a vision
model the way `image_view` shows an image), `back`, `tabs` (list, or switch with `tab`), `close`
(a tab, or the whole browser of this session). Each action that changes the page answers with the
page as `read` shows it, so the model always acts on numbers it has seen.

Approvals are decided by `navi/agent/approvals.py` from the call's arguments and the facts
`call_facts` gives (what element N is on the page the model saw, which sites this session's
browser has been on); the tool itself asks nothing.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from typing import Any

from navi import runctx
from navi.net.guard import NetGuard
from navi.tools.base import SECRET_MARKER, Tool, ToolResult
from navi.tools.builtin.browser.launch import BrowserSettings, BrowserUnavailable
from navi.tools.builtin.browser.profiles import NAME, ProfileError
from navi.tools.builtin.browser.sessions import BrowserPool, BrowserSession, Tab
from navi.tools.builtin.browser.snapshot import (
    KEY_CHECK_JS,
    MAX_ELEMENTS,
    SNAPSHOT_JS,
    Snapshot,
    listing,
    quoted,
    render,
    same_element,
    site,
)
from navi.tools.builtin.browser.states import BrowserStates
from navi.tools.builtin.http import check_url
from navi.tools.builtin.image import NotAnImage, prepare_image

ACTIONS = ("open", "read", "click", "type", "select", "scroll", "screenshot", "back", "tabs", "close")
SETTLE_MS = 2_000  # after an action, how long to wait for the page's own requests to calm down
ACTION_MS = 10_000  # a click, fill or select waits this long for its element to be ready
MIN_SECRET = 3  # shorter typed secrets are not searched for in results (they would match everywhere)
THUMB_SIDE = 640  # the tool card's screenshot: a JPEG of some 20 KB, in every browser frame


class BrowserTool(Tool):
    name = "browser"
    description = (
        "A real web browser (Chromium): pages that need JavaScript, a login, clicks or forms. "
        "Actions: open (url), read (text + numbered elements), click (element), type (element, text, "
        "submit), select (element, value), scroll (direction), screenshot, back, tabs (tab to "
        "switch), close (tab, or all). Cookies last for this conversation; open with profile (a name "
        "the user signed into) starts signed in. For plain pages prefer web_view."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "url": {"type": "string", "minLength": 1, "maxLength": 4000},
            "element": {"type": "integer", "minimum": 1, "description": "the [N] of read"},
            "text": {"type": "string", "maxLength": 10_000},
            "submit": {"type": "boolean", "description": "press Enter after typing"},
            "value": {"type": "string", "maxLength": 500, "description": "the option to select"},
            "direction": {"type": "string", "enum": ["down", "up"]},
            "tab": {"type": "integer", "minimum": 1},
            "new_tab": {"type": "boolean"},
            "start": {"type": "integer", "minimum": 0},
            "profile": {
                "type": "string",
                "pattern": NAME.pattern,
                "description": "open only: a browser profile the user signed into",
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    }
    keywords = ("browser", "click", "log in", "login", "sign in", "form", "website", "javascript")
    timeout = 120.0

    def __init__(
        self, settings: BrowserSettings, guard: NetGuard | None = None, *, states: BrowserStates | None = None
    ) -> None:
        self.settings = settings
        self.pool = BrowserPool(settings, guard or NetGuard(), states=states)

    async def aclose(self) -> None:
        await self.pool.aclose()

    # --- facts for the approval rules ----------------------------------------------------------------
    async def call_facts(self, args: dict[str, Any]) -> dict[str, Any]:
        """What this call would touch that its arguments do not say: the site a URL or link leads
        to and whether this session's browser has been there, and what element N is."""
        ctx = runctx.current()
        session = self.pool.peek(ctx.session_id) if ctx is not None else None
        tab = session.tab if session is not None else None
        snap = tab.snapshot if tab is not None else None
        facts: dict[str, Any] = {"site": site(snap.url) if snap is not None else ""}
        visited = session.sites if session is not None else set()
        if args.get("action") == "open" and args.get("url"):
            target = site(str(args["url"]))
            facts.update(site=target, new_site=target not in visited)
            fresh = session is None and not await self._saved(ctx)
            named = args.get("profile") or (await self._default_profile(ctx) if fresh else "")
            if named and (session is None or session.profile != named):
                facts["profile"] = str(named)  # its first use in this conversation
        if args.get("element") is not None:
            element = snap.element(int(args["element"])) if snap is not None else None
            facts["element"] = element
            href = (element or {}).get("href")
            if href and not (element or {}).get("submits"):
                target = site(str(href))
                facts["new_site"] = bool(target) and target not in visited
                facts["link_site"] = target
        return facts

    async def secret_arguments(self, params: dict[str, Any], *, after: bool = False) -> frozenset[str]:
        """`text` typed into a password field is never stored or shown: the agent keeps a marker in
        its place. To be safe also when the page cannot say yet: an element the page the model
        read does not have, and any `type` after another browser call of the same reply (which may
        change the page first)."""
        if params.get("action") != "type":
            return frozenset()
        if after or params.get("element") is None:
            return frozenset({"text"})
        ctx = runctx.current()
        session = self.pool.peek(ctx.session_id) if ctx is not None else None
        snap = session.tab.snapshot if session is not None and session.tab is not None else None
        element = snap.element(int(params["element"])) if snap is not None else None
        return frozenset({"text"}) if element is None or element.get("password") else frozenset()

    # --- the actions -------------------------------------------------------------------------------
    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        action = params["action"]
        persist = _persistent(ctx)
        if action == "close" and params.get("tab") is None:
            saved = await self._saved(ctx)
            closed = await self.pool.forget(ctx.session_id, ctx.owner) if persist else False
            closed = await self.pool.close_session(ctx.session_id) or closed or saved
            said = "Closed this conversation's browser (its tabs and cookies)."
            return ToolResult.ok(said if closed else "No browser was open.")
        existing = self.pool.peek(ctx.session_id)
        saved = existing is None and await self._saved(ctx)  # its cookies, kept from an earlier turn
        if action != "open" and existing is None and not saved:
            return ToolResult.fail("no page is open: call browser with action open and a url first")
        profile = params.get("profile") if action == "open" else None
        note = ""
        if action == "open" and not profile and existing is None and not saved and ctx.browser_profile:
            profile = await self._default_profile(ctx) or None  # the agent profile's sign-in, if it is saved
            if not profile:
                note = (
                    f"(This profile opens pages signed in with the browser profile "
                    f"{ctx.browser_profile!r}, which you have not saved: opened signed out. "
                    f"`navi browser login {ctx.browser_profile} URL` or the page's Sign in makes it.)"
                )
        if profile and existing is not None and existing.profile != profile:
            now = f"profile {existing.profile!r}" if existing.profile else "no profile"
            return ToolResult.fail(
                f"this conversation's browser is open with {now}: close it (action close) before "
                f"opening with profile {profile!r}"
            )
        try:
            session = await self.pool.session(
                ctx.session_id, ctx.root_session, owner=ctx.owner, profile=profile, persist=persist
            )
        except (BrowserUnavailable, ProfileError) as exc:
            return ToolResult.fail(str(exc))
        if profile and session.profile != profile:  # its cookies came back from an earlier turn
            now = f"profile {session.profile!r}" if session.profile else "no profile"
            return ToolResult.fail(
                f"this conversation's browser is open with {now}: close it (action close) before "
                f"opening with profile {profile!r}"
            )
        async with session.lock:
            try:
                result = scrubbed(await self._act(session, action, params), session.secrets)
                await self.pool.persist(session)
            finally:
                session.last_used = self.pool.clock()
        if note and result.success:
            result.output = f"{result.output}\n\n{note}"
        return result

    async def _saved(self, ctx: runctx.RunContext | None) -> bool:
        """Whether this conversation's browser state was saved by an earlier call (on any worker)."""
        if ctx is None or not _persistent(ctx):
            return False
        return await self.pool.states.version(ctx.session_id, ctx.owner) > 0

    async def _default_profile(self, ctx: runctx.RunContext | None) -> str:
        """The browser profile the run's agent profile names, when its user has saved it ("" else)."""
        if ctx is None or not ctx.browser_profile:
            return ""
        name = ctx.browser_profile
        try:
            return name if await asyncio.to_thread(self.pool.profiles.exists, ctx.owner, name) else ""
        except ProfileError:
            return ""

    async def _act(self, session: BrowserSession, action: str, params: dict[str, Any]) -> ToolResult:
        if action == "open":
            return await self._open(session, params)
        if action == "tabs":
            return await self._tabs(session, params.get("tab"))
        if action == "close":
            index = int(params["tab"]) - 1
            if not 0 <= index < len(session.tabs):
                return ToolResult.fail(f"there is no tab {params['tab']} (tabs: {len(session.tabs)})")
            await self.pool.close_tab(session, index)
            return ToolResult.ok(f"Closed tab {params['tab']}; {len(session.tabs)} left.")
        tab = session.tab
        if tab is None:
            if session.restored_url:  # made again from the saved state: cookies back, no page
                return ToolResult.fail(
                    "no page is open: this conversation's browser was closed since the last call "
                    f"(its cookies are kept); open the page again, it was {session.restored_url}"
                )
            return ToolResult.fail("no page is open: call browser with action open and a url first")
        if action == "read":
            return await self._page_result(session, tab, start=params.get("start", 0))
        if action == "screenshot":
            return await self._screenshot(session, tab)
        if action == "scroll":
            sign = -1 if params.get("direction") == "up" else 1
            await tab.page.evaluate("(s) => window.scrollBy(0, s * window.innerHeight * 0.8)", sign)
            return await self._page_result(session, tab)
        if action == "back":
            session.router.take_refusals()
            await tab.page.go_back(wait_until="load")
            await self._settle(session, tab)
            return await self._page_result(session, tab)
        return await self._on_element(session, tab, action, params)

    async def _open(self, session: BrowserSession, params: dict[str, Any]) -> ToolResult:
        url = str(params.get("url") or "").strip()
        if not url:
            return ToolResult.fail("open needs a url")
        if problem := check_url(url):
            return ToolResult.fail(problem)
        try:
            fresh = params.get("new_tab") or session.tab is None
            tab = await self.pool.new_tab(session) if fresh else session.tab
        except ValueError as exc:
            return ToolResult.fail(str(exc))
        assert tab is not None
        session.router.take_refusals()
        try:
            await self._goto(tab, url)
        except Exception as exc:
            return self._navigation_failed(session, url, exc)
        session.restored_url = ""
        await self._settle(session, tab)
        return await self._page_result(session, tab)

    async def _goto(self, tab: Tab, url: str) -> None:
        """Navigate; once more when Chromium's error page for an earlier failure, committing late,
        cut the navigation short (it says "interrupted by another navigation")."""
        try:
            await tab.page.goto(url, wait_until="load")
        except Exception as exc:
            if "interrupted by another navigation" not in str(exc):
                raise
            await tab.page.goto(url, wait_until="load")

    def _navigation_failed(self, session: BrowserSession, url: str, exc: Exception) -> ToolResult:
        refused = [r for r in session.router.take_refusals() if r.navigation]
        if refused:
            return ToolResult.fail(refused[-1].reason, refused=[r.url for r in refused])
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return ToolResult.fail(f"could not open {url}: {first}")

    async def _on_element(
        self, session: BrowserSession, tab: Tab, action: str, params: dict[str, Any]
    ) -> ToolResult:
        number = params.get("element")
        if number is None:
            return ToolResult.fail(f"{action} needs `element`: the [N] of an element in the last read")
        element = tab.snapshot.element(int(number)) if tab.snapshot is not None else None
        if element is None:
            return ToolResult.fail(
                f"there is no element [{number}] on this page: read it to see the elements"
            )
        if problem := _unfit(action, element, params):
            return ToolResult.fail(problem)
        locator = tab.page.locator(f'[data-navi-id="{int(number)}"]')
        if problem := await _changed(locator, element):
            return ToolResult.fail(problem)
        session.router.take_refusals()
        try:
            if action == "click":
                await locator.click(timeout=ACTION_MS)
            elif action == "type":
                if element.get("password"):  # never echoed back: taken out of every later result
                    session.secrets.add(str(params["text"]))
                await locator.fill(str(params["text"]), timeout=ACTION_MS)
                if params.get("submit"):
                    await locator.press("Enter", timeout=ACTION_MS)
            else:
                value = str(params["value"])
                labels = [str(o) for o in element.get("options") or []]
                pick = {"label": value} if value in labels else {"value": value}
                await locator.select_option(**pick, timeout=ACTION_MS)
        except Exception as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return ToolResult.fail(f"could not {action} element [{number}]: {first}")
        await self._settle(session, tab)
        tab = session.tab or tab  # a click may have opened a tab, which is now the current one
        return await self._page_result(session, tab)

    async def _settle(self, session: BrowserSession, tab: Tab) -> None:
        with contextlib.suppress(Exception):
            await tab.page.wait_for_load_state("load", timeout=self.settings.timeout_seconds * 1000)
        with contextlib.suppress(Exception):
            await tab.page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
        await self.pool.drain(session)  # a download the action started

    async def _snapshot(self, tab: Tab) -> Snapshot:
        raw = await tab.page.evaluate(SNAPSHOT_JS, MAX_ELEMENTS)
        tab.snapshot = Snapshot.of(raw)
        return tab.snapshot

    async def _page_result(self, session: BrowserSession, tab: Tab, *, start: int = 0) -> ToolResult:
        try:
            snap = await self._snapshot(tab)
        except Exception as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return ToolResult.fail(f"could not read the page: {first}")
        refused = session.router.take_refusals()
        stopped = [r for r in refused if r.navigation]
        if any(r.url == snap.url for r in stopped):  # the page itself was refused
            return ToolResult.fail(stopped[-1].reason, refused=[r.url for r in stopped])
        text = render(snap, start=start)
        extra = session.take_notes()
        if refused:
            extra.append("Navi refused some of the page's requests (the network guard):")
            extra += [f"- {r.url[:160]}: {r.reason}" for r in refused[:5]]
        if extra:
            text += "\n\n" + "\n".join(extra)
        return ToolResult.ok(text, **await self._surface(session, tab, snap))

    async def _surface(self, session: BrowserSession, tab: Tab, snap: Snapshot) -> dict[str, Any]:
        """What the page and `navi chat` show of the browser: title, URL, elements, a thumbnail."""
        meta: dict[str, Any] = {
            "browser": {
                "url": snap.url,
                "title": snap.title,
                "tab": session.current + 1,
                "tabs": len(session.tabs),
                "elements": listing(snap),
            }
        }
        with contextlib.suppress(Exception):
            shot = await tab.page.screenshot(type="jpeg", quality=60, timeout=5_000)
            thumb = await asyncio.to_thread(prepare_image, shot, THUMB_SIDE)
            meta["browser"]["screenshot"] = (
                f"data:{thumb.media_type};base64,{base64.b64encode(thumb.data).decode('ascii')}"
            )
        return meta

    async def _screenshot(self, session: BrowserSession, tab: Tab) -> ToolResult:
        png = await tab.page.screenshot(type="png")
        try:
            image = await asyncio.to_thread(prepare_image, png, 1568)
        except NotAnImage as exc:
            return ToolResult.fail(f"the screenshot could not be prepared: {exc}")
        snap = tab.snapshot or await self._snapshot(tab)
        data = base64.b64encode(image.data).decode("ascii")
        meta = await self._surface(session, tab, snap)
        meta["browser"]["screenshot"] = f"data:{image.media_type};base64,{data}"
        return ToolResult.ok(
            f"Screenshot of {snap.url} ({image.width}×{image.height}), shown as an image.",
            is_image=True,
            base64=data,
            media_type=image.media_type,
            width=image.width,
            height=image.height,
            **meta,
        )

    async def _tabs(self, session: BrowserSession, switch: int | None) -> ToolResult:
        if switch is not None:
            if not 1 <= switch <= len(session.tabs):
                return ToolResult.fail(f"there is no tab {switch} (tabs: {len(session.tabs)})")
            session.current = switch - 1
            await session.tabs[session.current].page.bring_to_front()
            return await self._page_result(session, session.tabs[session.current])
        lines = []
        for i, tab in enumerate(session.tabs, 1):
            title = ""
            with contextlib.suppress(Exception):
                title = await tab.page.title()
            mark = " (current)" if i - 1 == session.current else ""
            lines.append(f"{i}. {quoted(title) or '(untitled)'} — {tab.page.url}{mark}")
        return ToolResult.ok("\n".join(lines) or "No tabs are open.", tabs=len(session.tabs))


def _persistent(ctx: runctx.RunContext) -> bool:
    """A stored conversation's run, whose browser state is kept for its next turn (not a subagent's,
    nor `navi browser login`'s)."""
    return ctx.persistent and not ctx.is_subagent


def scrubbed(result: ToolResult, secrets: set[str]) -> ToolResult:
    """`result` with every secret typed in this session (a page may echo a password into its text,
    a GET form into its URL) replaced by the marker, in its text and what the surfaces show
    (a screenshot's pixels are not read)."""
    hiding = sorted((s for s in secrets if len(s) >= MIN_SECRET), key=len, reverse=True)
    if not hiding:
        return result

    def clean(value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            if key in ("base64", "screenshot"):
                return value
            for secret in hiding:
                value = value.replace(secret, SECRET_MARKER)
            return value
        if isinstance(value, dict):
            return {k: clean(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    result.output = clean(result.output)
    result.error = clean(result.error) if result.error else result.error
    result.metadata = clean(result.metadata)
    return result


async def _changed(locator: Any, element: dict[str, Any]) -> str | None:
    """Why the element carrying number N now is not the one the model saw (and the approval
    judged): gone, more than one (a page can copy the number onto another element), or different."""
    again = f"the page changed since it was read: element [{element.get('id')}]"
    try:
        count = await locator.count()
        if count != 1:
            return f"{again} is {'gone' if count == 0 else 'not one element any more'}; read it again"
        now = await locator.evaluate(KEY_CHECK_JS, timeout=ACTION_MS)
    except Exception as exc:
        return f"{again} cannot be checked ({str(exc).splitlines()[0] if str(exc) else exc}); read it again"
    if not isinstance(now, dict) or not same_element(element, now):
        return f"{again} is not the one you saw any more; read it again"
    return None


def _unfit(action: str, element: dict[str, Any], params: dict[str, Any]) -> str | None:
    """Why `action` cannot be done to `element` with these arguments (said before Chromium waits)."""
    number = element.get("id")
    if action == "type" and "text" not in params:
        return "type needs `text`"
    if action == "select":
        if element.get("tag") != "select":
            return f"element [{number}] is not a list to select in; click it instead"
        if "value" not in params:
            return "select needs `value`: one of the element's options"
        options = [str(o) for o in element.get("options") or []]
        if options and str(params["value"]) not in options and len(options) < 30:
            return f"element [{number}] has no option {params['value']!r}; its options: {' | '.join(options)}"
    if element.get("disabled"):
        return f"element [{number}] is disabled"
    return None
