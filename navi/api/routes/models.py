"""Whether the default profile's model server answers and has its model: the page's status light.

Every open page polls this, so each question to the model server is bounded by a short timeout (a
server that hangs must not hold the request) and the answer is kept for a few seconds; concurrent
polls share one check. The same questions as `navi doctor`, asked of the runtime's own backends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel

from navi import redact
from navi.api.deps import RuntimeDep
from navi.api.model_choice import ModelChoice, available_models
from navi.api.routing import api_router
from navi.llm.backends import kind_of
from navi.llm.base import LLMBackend, model_listed
from navi.llm.errors import LLMError, ModelNotFound
from navi.llm.registry import BackendRegistry
from navi.logging import get_logger
from navi.profiles.registry import ProfileRegistry

log = get_logger(__name__)

router = api_router(prefix="/models", tags=["models"])

CHECK_TIMEOUT = 3.0  # seconds, for each question to the model server
CACHE_SECONDS = 10.0

T = TypeVar("T")


class ModelStatus(BaseModel):
    backend: str
    model: str
    reachable: bool
    model_available: bool | None  # None: the server does not say which models it has
    detail: str


async def _bounded(call: Awaitable[T]) -> T:
    return await asyncio.wait_for(call, CHECK_TIMEOUT)


async def _model_available(llm: LLMBackend, model: str) -> bool | None:
    try:
        available = await _bounded(llm.list_models())
    except (LLMError, TimeoutError):
        available = []
    if available and model_listed(available, model):
        return True
    try:
        info = await _bounded(llm.model_info(model))
    except ModelNotFound:
        return False
    except (LLMError, TimeoutError):
        return False if available else None
    if info.server == "llama.cpp":  # llama-server answers for its one model under any name
        return True
    if available:
        return False
    return True if info.probed else None


async def check(profiles: ProfileRegistry, backends: BackendRegistry) -> ModelStatus:
    profile = profiles.get(profiles.default_id)
    backend, model = profiles.backend_of(profile), profiles.model_of(profile)

    def result(reachable: bool, available: bool | None, detail: str) -> ModelStatus:
        return ModelStatus(
            backend=backend, model=model, reachable=reachable, model_available=available, detail=detail
        )

    # Where the backend's server is configured, for the "check …" in an unreachable server's detail.
    kind = kind_of(backend)
    setting = kind.server_setting if kind else "DEFAULT_LLM_BACKEND"
    try:
        llm = backends.get(backend)
        status = await _bounded(llm.status())
    except LLMError as exc:
        return result(False, None, f"{exc} (check {setting})")
    except TimeoutError:
        return result(
            False, None, f"the {backend} server did not answer within {CHECK_TIMEOUT:g} s (check {setting})"
        )
    if not status.ok:
        return result(False, None, f"{status.detail} (check {setting})")
    available = await _model_available(llm, model)
    if available is False:
        fix = f" — {kind.pull.format(model=model)}" if kind and kind.pull else ""
        return result(True, False, f"model {model} is not available on {status.detail}{fix}")
    return result(True, available, f"{model} on {status.detail}")


class StatusCache:
    """The latest answer, for `CACHE_SECONDS`; one check at a time."""

    def __init__(self) -> None:
        self.value: ModelStatus | None = None
        self.at = 0.0
        self.lock = asyncio.Lock()

    async def get(self, profiles: ProfileRegistry, backends: BackendRegistry) -> ModelStatus:
        async with self.lock:
            if self.value is None or time.monotonic() - self.at > CACHE_SECONDS:
                try:
                    self.value = await check(profiles, backends)
                except Exception as exc:  # a surprise in a backend must not take the light down
                    log.warning("models.status_failed", error=str(exc))  # the log masks secrets itself
                    return ModelStatus(
                        backend="",
                        model="",
                        reachable=False,
                        model_available=None,
                        detail=redact.text(f"could not check: {exc}"),
                    )
                self.at = time.monotonic()
            return self.value


def _cache(request: Request) -> StatusCache:
    state = request.app.state
    cache: StatusCache | None = getattr(state, "model_status", None)
    if cache is None:
        cache = state.model_status = StatusCache()
    return cache


@router.get("", response_model=list[ModelChoice], summary="The models a conversation or profile may use")
async def models(runtime: RuntimeDep) -> list[ModelChoice]:
    """What the model servers in use list (each asked within a few seconds; one that does not
    answer lists nothing), and every profile's configured model."""
    return await available_models(runtime.backends, runtime.profiles)


@router.get("/status", response_model=ModelStatus, summary="Whether the default profile's model is ready")
async def model_status(runtime: RuntimeDep, cache: Annotated[StatusCache, Depends(_cache)]) -> ModelStatus:
    return await cache.get(runtime.profiles, runtime.backends)
