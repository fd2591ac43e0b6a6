"""Whether the default profile's model server answers and has its model: the page's status light;
and the model list (`GET /models`, docs/models.md), each endpoint with its state, and the models a
conversation or profile may pick.

Every open page polls this, so each question to the model server is bounded by a short timeout (a
server that hangs must not hold the request) and the answer is kept for a few seconds; concurrent
polls share one check. The same questions as `navi doctor`, asked of the runtime's own backends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel

from navi import redact
from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.model_choice import ModelChoice, available_models
from navi.api.routing import api_router
from navi.llm.backends import kind_of
from navi.llm.base import LLMBackend, model_listed
from navi.llm.endpoints import DEFAULT_ID, ModelEndpoint, describe
from navi.llm.errors import LLMError, ModelNotFound
from navi.llm.probe import EndpointState, probe
from navi.llm.registry import BackendRegistry
from navi.logging import get_logger
from navi.profiles.registry import ProfileRegistry
from navi.sessions.models import DEFAULT_OWNER

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


@router.get("/status", response_model=ModelStatus, summary="Whether the default profile's model is ready")
async def model_status(runtime: RuntimeDep, cache: Annotated[StatusCache, Depends(_cache)]) -> ModelStatus:
    return await cache.get(runtime.profiles, runtime.backends)


# --- the model list (docs/models.md) ---------------------------------------------------------------
class EndpointCheck(BaseModel):
    reachable: bool
    model_present: bool | None  # None: the server does not say which models it has
    window: int | None
    detail: str


class Cooling(BaseModel):
    until: float  # seconds since the epoch
    failures: int
    reason: str


class ModelEntry(BaseModel):
    id: str
    backend: str
    model: str
    url: str  # "" for users other than the owner, and where the backend's setting applies
    key_env: str
    window: int | None
    capabilities: list[str] | None
    price: list[float] | None  # USD per million tokens, in and out
    implicit: bool  # `.env`'s one model
    state: EndpointCheck | None  # None when not asked (`check=false`)
    cooling: Cooling | None  # skipped by the circuit breaker until then


class ModelList(BaseModel):
    models: list[ModelEntry]
    chains: dict[str, list[str]]  # "default" and profile ids
    side: str  # the endpoint side calls try first ("": none)
    from_file: bool  # False: no MODELS_FILE, `.env`'s one model
    # The models a conversation or profile may pick ("backend:model"): what the servers in use list,
    # the profiles' models and the model list's endpoints (navi/api/model_choice.py).
    choices: list[ModelChoice] = []


def model_list(profiles: ProfileRegistry, backends: BackendRegistry) -> tuple[list[ModelEndpoint], Any]:
    """The endpoints and the chains' shared state (None without MODELS_FILE)."""
    shared = backends.models
    if shared is not None:
        return list(shared.models.endpoints.values()), shared
    profile = profiles.get(profiles.default_id)
    backend = profiles.backend_of(profile)
    where = backends.get(backend).where if backend in backends else ""
    default = ModelEndpoint(
        id=DEFAULT_ID, backend=backend, model=profiles.model_of(profile), url=where, implicit=True
    )
    return [default], None


@router.get(
    "",
    response_model=ModelList,
    summary="The model list, each endpoint with its state, and the models to pick",
)
async def list_models(runtime: RuntimeDep, user: CurrentUser, check: bool = True) -> ModelList:
    """Every endpoint (`check`: asked about its state, each question bounded), the chains, the
    side model, and which endpoints the circuit breaker skips. Server addresses: the owner's only.
    `choices`: the models a conversation or profile may use — what the servers in use list (each
    asked within a few seconds; one that does not answer lists nothing), every profile's model and
    every endpoint's."""
    listed, choices = await asyncio.gather(
        report(runtime.profiles, runtime.backends, owner=user == DEFAULT_OWNER, check=check),
        available_models(runtime.backends, runtime.profiles),
    )
    listed.choices = choices
    return listed


async def report(
    profiles: ProfileRegistry, backends: BackendRegistry, *, owner: bool, check: bool
) -> ModelList:
    """`GET /models`'s answer (and `navi models list|test`'s)."""
    endpoints, shared = model_list(profiles, backends)
    trips = await shared.breaker.trips() if shared is not None else {}
    now = shared.clock() if shared is not None else time.time()
    states: list[EndpointState | None] = [None] * len(endpoints)
    if check:
        states = list(
            await asyncio.gather(
                *(probe(e, backends.get(e.id if shared else e.backend), CHECK_TIMEOUT) for e in endpoints)
            )
        )
    entries = []
    for endpoint, state in zip(endpoints, states, strict=True):
        data = describe(endpoint)
        data["url"] = redact.url(endpoint.url) if owner and endpoint.url else ""
        trip = trips.get(endpoint.id)
        entries.append(
            ModelEntry(
                **data,
                state=None if state is None else EndpointCheck(**state.as_json()),
                cooling=None
                if trip is None or not trip.open(now)
                else Cooling(until=trip.until, failures=trip.failures, reason=trip.reason),
            )
        )
    chains = {k: list(v) for k, v in shared.models.chains.items()} if shared else {DEFAULT_ID: [DEFAULT_ID]}
    return ModelList(
        models=entries, chains=chains, side=shared.models.side if shared else "", from_file=shared is not None
    )
