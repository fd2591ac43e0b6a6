"""The state of a model list's endpoints: is the server reachable, does it have the model, what
window does it run it with — for `navi models test`, `GET /models` and the page's Settings.

Each question is bounded (`limit`, seconds); a server that hangs is reported, never waited on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from navi.llm.base import LLMBackend, model_listed
from navi.llm.breaker import Trip
from navi.llm.endpoints import ModelEndpoint
from navi.llm.errors import LLMError, ModelNotFound

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class EndpointState:
    id: str
    reachable: bool
    model_present: bool | None  # None: the server does not say which models it has
    window: int | None  # what the list says, else what the server says
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {
            "reachable": self.reachable,
            "model_present": self.model_present,
            "window": self.window,
            "detail": self.detail,
        }


async def _within(call: Awaitable[T], limit: float) -> T:
    return await asyncio.wait_for(call, limit)


async def probe(endpoint: ModelEndpoint, llm: LLMBackend, limit: float = 3.0) -> EndpointState:
    """Ask `llm` (the endpoint's backend) about `endpoint`."""

    def state(reachable: bool, present: bool | None, window: int | None, detail: str) -> EndpointState:
        return EndpointState(
            id=endpoint.id, reachable=reachable, model_present=present, window=window, detail=detail
        )

    try:
        status = await _within(llm.status(), limit)
    except (LLMError, TimeoutError) as exc:
        return state(False, None, endpoint.window, str(exc) or f"no answer within {limit:g} s")
    if not status.ok:
        return state(False, None, endpoint.window, status.detail)
    try:
        available = await _within(llm.list_models(), limit)
    except (LLMError, TimeoutError):
        available = []
    try:
        info = await _within(llm.model_info(endpoint.model), limit)
    except ModelNotFound:
        return state(True, False, endpoint.window, f"{endpoint.model} is not on {status.detail}")
    except (LLMError, TimeoutError) as exc:
        listed = model_listed(available, endpoint.model) if available else None
        return state(True, listed, endpoint.window, f"{status.detail}; no model information: {exc}")
    window = endpoint.window or info.context_length
    if info.server == "llama.cpp":  # llama-server answers for its one model under any name
        present: bool | None = True
    elif available:
        present = model_listed(available, endpoint.model)
    else:
        present = True if info.probed else None
    where = f"{endpoint.model} on {status.detail}"
    return state(
        True,
        present,
        window,
        where if present is not False else f"{endpoint.model} is not on {status.detail}",
    )


def cooling(trips: Mapping[str, Trip], now: float) -> dict[str, dict[str, Any]]:
    """The endpoints the breaker skips now: until when, after how many failures, and why."""
    return {
        i: {"until": t.until, "failures": t.failures, "reason": t.reason}
        for i, t in trips.items()
        if t.open(now)
    }
