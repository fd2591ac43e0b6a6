"""Which models a person may pick for a conversation or a profile: what the model servers in use
report (Ollama's tags, an OpenAI-compatible server's `/v1/models`, …), each backend asked at once
within a short timeout, plus every profile's configured model and, with MODELS_FILE, every
endpoint of the model list (docs/models.md).

`available_models` is the one source the page's pickers read (GET /models' `choices`). A picked
model is "backend:model"; a MODELS_FILE endpoint is a backend by its id, so picking "big:qwen3:8b"
runs the conversation on the endpoint `big` alone (no fallback), and the model chains — whose
backend names hold a colon ("models:<profile>") — are not offered: the profile's default is the
chain.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from navi.api.errors import BadRequest
from navi.llm.endpoints import CHAIN_PREFIX
from navi.llm.errors import LLMError
from navi.llm.registry import BackendRegistry
from navi.logging import get_logger
from navi.profiles.registry import ProfileRegistry

log = get_logger(__name__)

LIST_TIMEOUT = 3.0  # seconds for each server's list


class ModelChoice(BaseModel):
    id: str  # "backend:model", what PATCH /sessions/{id} and a profile's `model` take
    backend: str
    model: str
    listed: bool  # the server listed it (False: a profile's configured model it did not list)


def _chain(backend: str) -> bool:
    return backend == CHAIN_PREFIX or backend.startswith(f"{CHAIN_PREFIX}:")


def backends_in_use(profiles: ProfileRegistry, backends: BackendRegistry) -> list[str]:
    """The default backend and every profile's, and every MODELS_FILE endpoint (a backend by its id):
    the servers this Navi talks to. A chain is no server: its endpoints are."""
    names = [profiles.default_backend, *(profiles.backend_of(p) for p in profiles.all())]
    if backends.models is not None:
        names += list(backends.models.models.endpoints)
    return [n for n in dict.fromkeys(names) if not _chain(n)]


async def _listed(backends: BackendRegistry, name: str) -> list[str]:
    try:
        return await asyncio.wait_for(backends.get(name).list_models(), LIST_TIMEOUT)
    except (LLMError, TimeoutError, OSError) as exc:
        log.info("models.list_failed", backend=name, error=str(exc))
        return []


async def available_models(backends: BackendRegistry, profiles: ProfileRegistry) -> list[ModelChoice]:
    names = [n for n in backends_in_use(profiles, backends) if n in backends]
    lists = await asyncio.gather(*(_listed(backends, n) for n in names))
    out = {
        f"{n}:{m}": ModelChoice(id=f"{n}:{m}", backend=n, model=m, listed=True)
        for n, ms in zip(names, lists, strict=True)
        for m in ms
    }
    configured = [(profiles.backend_of(p), profiles.model_of(p)) for p in profiles.all()]
    if backends.models is not None:  # each endpoint's own model, listed by its server or not
        configured += [(e.id, e.model) for e in backends.models.models.endpoints.values()]
    for backend, model in configured:
        if model and not _chain(backend) and f"{backend}:{model}" not in out:
            out[f"{backend}:{model}"] = ModelChoice(
                id=f"{backend}:{model}", backend=backend, model=model, listed=False
            )
    return sorted(out.values(), key=lambda c: (c.backend, c.model))


def check_model(backends: BackendRegistry, choice: str) -> str:
    """`choice` if it names a backend Navi has and a model ("backend:model"); else `BadRequest`."""
    backend, _, model = choice.partition(":")
    if not model.strip() or backend not in backends:
        raise BadRequest(
            f'not a model choice: {choice[:100]!r} — use "backend:model" with a backend of '
            f"{', '.join(backends.names())} (GET /models lists them)"
        )
    return choice
