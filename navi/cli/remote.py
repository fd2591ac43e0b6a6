"""Navi's HTTP API as the terminal commands use it (`navi chat`, `navi tools`): where Navi is, which
token to send, and every failure as one line that says what to do.

Which token: `NAVI_API_TOKEN` when it is set; otherwise Navi's own token file, but only when the
address is this machine's configured Navi (`NAVI_HOST:NAVI_PORT`, any loopback name). The file's
token is never sent anywhere else: pointing `--url` at another server must not hand it your key.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from navi.config import Settings, is_loopback_host
from navi.net.tls import ca_context

T = TypeVar("T")
START_FIX = "start it with `navi serve`, or point --url (or NAVI_URL) at it"
IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
MAX_IMAGE_BYTES = 10 * 1024 * 1024  # as the web page: larger pictures are uploaded as files


class RemoteError(Exception):
    """A request to Navi failed; the message is one line with the fix. `code` is Navi's error code
    (`session_not_found`, `busy`, …) or a name of ours (`unreachable`, `unauthorized`)."""

    def __init__(self, message: str, code: str = "", status: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


@dataclass(frozen=True)
class Target:
    """Navi's base address (`http://host:port`, no trailing slash) and the token to send."""

    url: str
    token: str = ""
    token_from: str = ""  # "NAVI_API_TOKEN" or the token file's path; empty when none is sent

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")  # http→ws, https→wss

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def default_url(settings: Settings) -> str:
    if settings.navi_url:
        return settings.navi_url
    host = settings.navi_host
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.navi_port}"


def check_url(url: str) -> str:
    """`url` without a trailing slash; ValueError (a sentence) when it is not Navi's base address."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not Navi's address: give its base address, like http://127.0.0.1:8000")
    if parts.path or parts.query:
        raise ValueError(
            f"{url!r} has a path: give Navi's base address only, like {parts.scheme}://{parts.netloc}"
        )
    return url


def is_this_navi(settings: Settings, url: str) -> bool:
    """Whether `url` is the Navi these settings describe (whose token file we may read)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if port != settings.navi_port:
        return False
    host = parts.hostname or ""
    own = settings.navi_host.strip("[]")
    return host == own or (
        is_loopback_host(host) and (settings.listens_on_loopback() or own in ("0.0.0.0", "::"))
    )


def resolve_target(settings: Settings, url: str | None) -> Target:
    """Where to go and with which token. Raises ValueError for a bad URL and `SetupError` for a
    token file that cannot be read."""
    from navi.compose.token import access_token

    base = check_url(url or default_url(settings))
    if settings.navi_api_token:
        return Target(base, settings.navi_api_token, "NAVI_API_TOKEN")
    if is_this_navi(settings, base):
        token = access_token(settings, create=False)
        if token.value:
            return Target(base, token.value, str(token.path))
    return Target(base)


def _detail(resp: httpx.Response) -> tuple[str, str]:
    try:
        body = resp.json()
    except ValueError:
        return resp.text.strip()[:200] or resp.reason_phrase, ""
    if isinstance(body, dict):
        return str(body.get("detail") or resp.reason_phrase), str(body.get("code") or "")
    return resp.reason_phrase, ""


def token_fix(target: Target) -> str:
    if target.token_from == "NAVI_API_TOKEN":
        return "set NAVI_API_TOKEN to the token that Navi was started with"
    if target.token_from:
        return f"the token in {target.token_from} is not this Navi's: set NAVI_API_TOKEN to its token"
    return (
        "set NAVI_API_TOKEN to its token (a Navi of yours on this machine keeps it in the navi_token "
        "file beside its database)"
    )


class Remote:
    """An HTTP client of one Navi. Every method raises `RemoteError` (one line, with the fix)."""

    def __init__(self, target: Target, *, timeout: float = 30.0) -> None:
        self.target = target
        self.http = httpx.AsyncClient(
            base_url=target.url, headers=target.headers, timeout=timeout, verify=ca_context()
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> Remote:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        url = self.target.url
        try:
            resp = await self.http.request(method, path, **kw)
        except httpx.ConnectError:
            raise RemoteError(f"cannot reach Navi at {url} — {START_FIX}", "unreachable") from None
        except httpx.TimeoutException:
            raise RemoteError(
                f"Navi at {url} did not answer in time — is it overloaded?", "timeout"
            ) from None
        except httpx.HTTPError as exc:
            raise RemoteError(
                f"talking to Navi at {url} failed: {exc} — {START_FIX}", "unreachable"
            ) from None
        if resp.status_code == 401:
            asked = "refused the token" if self.target.token else "asks for an access token"
            raise RemoteError(f"Navi at {url} {asked} — {token_fix(self.target)}", "unauthorized", 401)
        if resp.status_code >= 400:
            detail, code = _detail(resp)
            if code == "session_not_found":
                detail += " — /sessions (or `navi sessions list`) shows the sessions there are"
            raise RemoteError(detail, code or f"http_{resp.status_code}", resp.status_code)
        if resp.headers.get("content-type", "").startswith("application/json"):
            return resp.json()
        return resp.text

    # --- resources --------------------------------------------------------------------------------

    async def profiles(self) -> list[dict[str, Any]]:
        return list(await self.request("GET", "/agents/profiles"))

    async def tools(self) -> list[dict[str, Any]]:
        return list(await self.request("GET", "/agents/tools"))

    async def reload_tools(self) -> dict[str, Any]:
        return dict(await self.request("POST", "/agents/tools/reload", timeout=120))

    async def sessions(self) -> list[dict[str, Any]]:
        return list(await self.request("GET", "/sessions"))

    async def find_session(self, ref: str) -> str:
        """The id of the session `ref` names: its id or the start of one."""
        sessions = await self.sessions()
        exact = [s["id"] for s in sessions if s["id"] == ref]
        matches = exact or [s["id"] for s in sessions if s["id"].startswith(ref)]
        if len(matches) == 1:
            return str(matches[0])
        if not matches:
            raise RemoteError(
                f"no conversation '{ref}' — `navi sessions list` (or /sessions) shows them", "not_found"
            )
        raise RemoteError(f"'{ref}' starts {len(matches)} conversations' ids — give more of it", "ambiguous")

    async def session(self, session_id: str) -> dict[str, Any]:
        return dict(await self.request("GET", f"/sessions/{quote(session_id)}"))

    async def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """`GET /search`: the user's messages of every session with all of `query`'s words, best first."""
        return list(await self.request("GET", "/search", params={"q": query[:1000], "limit": limit}))

    async def switch_branch(self, session_id: str, message_id: str) -> str:
        """Make the branch through `message_id` the active one; its leaf's id."""
        body = {"message_id": message_id}
        switched = await self.request("POST", f"/sessions/{quote(session_id)}/branch", json=body)
        return str(switched.get("active_leaf") or "")

    async def create(self, profile_id: str | None = None) -> dict[str, Any]:
        body = {"profile_id": profile_id} if profile_id else {}
        return dict(await self.request("POST", "/sessions", json=body))

    async def update(self, session_id: str, **fields: Any) -> dict[str, Any]:
        return dict(await self.request("PATCH", f"/sessions/{quote(session_id)}", json=fields))

    async def export(self, session_id: str) -> dict[str, Any]:
        return dict(await self.request("GET", f"/sessions/{quote(session_id)}/export"))

    async def start_job(self, prompt: str, session_id: str | None, mode: str = "task") -> dict[str, Any]:
        body: dict[str, Any] = await self.request(
            "POST", "/jobs", json={"prompt": prompt, "session_id": session_id, "mode": mode}
        )
        return body

    async def jobs(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = await self.request("GET", "/jobs")
        return found

    async def stop_job(self, job_id: str) -> dict[str, Any]:
        body: dict[str, Any] = await self.request("POST", f"/jobs/{job_id}/stop")
        return body

    async def stop(self, session_id: str) -> bool:
        return bool((await self.request("POST", f"/sessions/{quote(session_id)}/stop")).get("ok"))

    async def upload(self, session_id: str, path: Path) -> dict[str, Any]:
        """Upload one file to the session's folder; the answer's `name` and `path` go in a message."""
        try:
            with path.open("rb") as fh:
                files = {
                    "file": (path.name, fh, mimetypes.guess_type(path.name)[0] or "application/octet-stream")
                }
                return dict(
                    await self.request(
                        "POST", f"/sessions/{quote(session_id)}/files", files=files, timeout=300
                    )
                )
        except OSError as exc:
            raise RemoteError(
                f"cannot read {path}: {(exc.strerror or str(exc)).lower()}", "unreadable"
            ) from None


def image_data_url(path: Path) -> str | None:
    """A picture the model should see, as the `images` field carries it (a data: URI); None for a
    file that is no picture (or too large), which is uploaded instead."""
    media = mimetypes.guess_type(path.name)[0]
    if media not in IMAGE_TYPES:
        return None
    try:
        if path.stat().st_size > MAX_IMAGE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return f"data:{media};base64,{base64.b64encode(data).decode('ascii')}"


def target_or_exit(settings: Settings, url: str | None) -> Target:
    from navi.cli.common import fail
    from navi.compose import SetupError

    try:
        return resolve_target(settings, url)
    except ValueError as exc:
        fail(f"{exc} (--url or NAVI_URL)")
    except SetupError as exc:
        fail(str(exc))


def with_remote(url: str | None, work: Callable[[Remote], Awaitable[T]]) -> T:
    """Run `work` against the Navi at `url` (default from the settings); any failure is one line
    on stderr (exit 2 for a bad address or setting, 1 for what Navi answered or did not)."""
    import asyncio

    from navi.cli.common import fail, settings_or_exit

    target = target_or_exit(settings_or_exit(), url)

    async def run() -> T:
        async with Remote(target) as remote:
            return await work(remote)

    try:
        return asyncio.run(run())
    except RemoteError as exc:
        fail(str(exc), 1)
