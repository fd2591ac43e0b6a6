"""Limits on what one HTTP request may send, enforced as its bytes arrive (pure ASGI middleware).

- **Body size.** Every request body is counted while the route reads it; past the route's cap
  the request is answered `413` (`too_large`) and the connection closed, so a 300 MB POST costs
  what one chunk costs, not 300 MB three times over (raw bytes, decoded text, parsed objects). A
  declared `Content-Length` over the cap is refused before a byte of the body is read. JSON
  routes get `NAVI_MAX_REQUEST_MB`; `POST /sessions/import` gets `NAVI_IMPORT_MAX_MB`,
  `POST /v1/audio/transcriptions` `VOICE_MAX_MB` (and the form around the clip); uploads
  are capped per file by their own parser (`SESSION_FILES_MAX_SIZE_MB`, navi/api/uploads.py;
  documents: `DOCUMENTS_MAX_BYTES`).
- **The sign-in form.** `POST /login` is the one state-changing route open to anyone, so it takes
  only what the login page sends: a small `application/x-www-form-urlencoded` form, arriving
  within `NAVI_HEADER_TIMEOUT_SECONDS`. Multipart is refused (`415`) before anything is read:
  the form parser would otherwise spool every part to disk.
- **NUL in the address.** A path or query string holding `%00` is refused (`422`): no id, name or
  search Navi knows contains one, and PostgreSQL cannot even compare text with it.

The middleware sits inside access control, so a request without the token is refused before its
body is read at all.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from navi.api.errors import error_response

LOGIN_FORM = "application/x-www-form-urlencoded"
LOGIN_MAX_BYTES = 4096  # a token and a field name, with room to spare
AUDIO_PATH = "/v1/audio/transcriptions"
AUDIO_FORM_SLACK = 128 * 1024  # the multipart framing and text fields beside a clip of the cap
_UPLOAD = re.compile(r"^/(sessions/[^/]+/files|collections/[^/]+/documents)/?$")


@dataclass(frozen=True)
class RequestLimits:
    json_bytes: int  # every body not named below
    import_bytes: int  # POST /sessions/import
    login_seconds: float  # time for the sign-in form's body to arrive
    login_bytes: int = LOGIN_MAX_BYTES
    audio_bytes: int = 25 * 1024 * 1024 + AUDIO_FORM_SLACK  # POST /v1/audio/transcriptions


class Refused(Exception):
    def __init__(self, status: int, detail: str, code: str) -> None:
        super().__init__(detail)
        self.status, self.detail, self.code = status, detail, code


def _megabytes(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _too_large(cap: int) -> Refused:
    return Refused(413, f"the request body is larger than the {_megabytes(cap)} limit", "too_large")


class InputLimits:
    def __init__(self, app: ASGIApp, limits: RequestLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            cap, seconds = self._check_head(scope)
        except Refused as refusal:
            await _answer(refusal, scope, receive, send)
            return
        if cap is None:
            await self.app(scope, receive, send)
            return
        await _Limited(self.app, cap, seconds)(scope, receive, send)

    def _check_head(self, scope: Scope) -> tuple[int | None, float | None]:
        """The body cap and deadline for this request, or `Refused` before anything is read."""
        path: str = scope.get("path", "")
        query: bytes = scope.get("query_string", b"")
        if "\x00" in path or b"%00" in query or b"\x00" in query:
            raise Refused(422, "the address contains a NUL character", "bad_request")
        method = scope.get("method", "GET")
        headers = {k.lower(): v for k, v in scope.get("headers") or []}
        seconds: float | None = None
        if method == "POST" and _UPLOAD.match(path):
            return None, None  # multipart uploads cap each file themselves, while streaming
        if method == "POST" and path == "/login":
            kind = headers.get(b"content-type", b"").split(b";")[0].strip().decode("latin-1").lower()
            if kind and kind != LOGIN_FORM:
                raise Refused(415, f"sign in with a {LOGIN_FORM} form (token=…)", "unsupported_type")
            cap, seconds = self.limits.login_bytes, self.limits.login_seconds
        elif method == "POST" and path == "/sessions/import":
            cap = self.limits.import_bytes
        elif method == "POST" and path == AUDIO_PATH:
            cap = self.limits.audio_bytes
        else:
            cap = self.limits.json_bytes
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                length = -1
            if length > cap:
                raise _too_large(cap)
        return cap, seconds


class _Limited:
    """One request whose body may hold at most `cap` bytes and must arrive within `seconds`."""

    def __init__(self, app: ASGIApp, cap: int, seconds: float | None) -> None:
        self.app = app
        self.cap = cap
        self.seconds = seconds
        self.received = 0
        self.refusal: Refused | None = None
        self.started = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds if self.seconds is not None else None

        async def limited_receive() -> Message:
            if self.refusal is not None:
                raise self.refusal
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                self.refusal = Refused(408, "the request body arrived too slowly", "too_slow")
                raise self.refusal from None
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > self.cap:
                    self.refusal = _too_large(self.cap)
                    raise self.refusal
            return message

        async def guarded_send(message: Message) -> None:
            if self.refusal is not None:
                return  # the route's own answer to the failed read; the refusal goes out instead
            if message["type"] == "http.response.start":
                self.started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if self.refusal is None:
                raise
        if self.refusal is not None and not self.started:
            await _answer(self.refusal, scope, receive, send)


async def _answer(refusal: Refused, scope: Scope, receive: Receive, send: Send) -> None:
    response = error_response(refusal.detail, refusal.code, refusal.status)
    response.headers["connection"] = "close"  # the rest of the body is not read
    await response(scope, receive, send)
