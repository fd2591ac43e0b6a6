"""API routers whose JSON bodies are parsed like every other input from a stranger.

FastAPI parses a JSON body with `json.loads` and hands strings on as they are. `api_router()`
makes routers whose routes parse it with `navi.safejson` instead: nesting beyond its limit is a 422
(`bad_request`) rather than a `RecursionError` somewhere later, and lone surrogates and NUL
characters become U+FFFD before any model, store or socket sees them. Large bodies are parsed on a
worker thread so the event loop keeps serving other clients meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.routing import APIRoute

from navi import safejson

THREAD_BYTES = 256 * 1024  # bodies above this are parsed off the event loop


class BodyRefused(HTTPException):
    """A request body refused before the route runs; answered as `{"detail", "code"}`."""

    def __init__(self, status: int, detail: str, code: str) -> None:
        super().__init__(status_code=status, detail=detail)
        self.code = code


async def parse_json(body: bytes) -> Any:
    """A JSON body through `safejson`: `BodyRefused` when nested too deeply, `ValueError` when not
    JSON (FastAPI then reports it as it always does)."""
    try:
        if len(body) > THREAD_BYTES:
            return await asyncio.to_thread(safejson.loads, body)
        return safejson.loads(body)
    except safejson.UnsafeJSON as exc:
        raise BodyRefused(422, f"body: {exc}", "bad_request") from None


class _CheckedRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = await parse_json(await self.body())
        return self._json


class CheckedJSONRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            return await handler(_CheckedRequest(request.scope, request.receive))

        return checked


def api_router(**options: Any) -> APIRouter:
    """An `APIRouter` (same options) whose routes parse JSON bodies with `navi.safejson`."""
    return APIRouter(route_class=CheckedJSONRoute, **options)
