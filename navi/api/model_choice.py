"""Which models a person may pick for a conversation or a profile: what the model servers in use
report (Ollama's tags, an OpenAI-compatible server's `/v1/models`, …), each backend asked at once
within a short timeout, plus every profile's configured model.

`available_models` is the one source the page's pickers read (GET /models); a configured list of
models can join it here. A picked model is "backend:model".
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from navi.api.errors import BadRequest
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


def backends_in_use(profiles: ProfileRegistry) -> list[str]:
    """The default backend and every profile's: the servers this Navi talks to."""
    return list(dict.fromkeys([profiles.default_backend, *(profiles.backend_of(p) for p in profiles.all())]))


async def _listed(backends: BackendRegistry, name: str) -> list[str]:
    try:
        return await asyncio.wait_for(backends.get(name).list_models(), LIST_TIMEOUT)
    except (LLMError, TimeoutError, OSError) as exc:
        log.info("models.list_failed", backend=name, error=str(exc))
        return []


async def available_models(backends: BackendRegistry, profiles: ProfileRegistry) -> list[ModelChoice]:
    names = [n for n in backends_in_use(profiles) if n in backends]
    lists = await asyncio.gather(*(_listed(backends, n) for n in names))
    out = {
        f"{n}:{m}": ModelChoice(id=f"{n}:{m}", backend=n, model=m, listed=True)
        for n, ms in zip(names, lists, strict=True)
        for m in ms
    }
    for profile in profiles.all():
        backend, model = profiles.backend_of(profile), profiles.model_of(profile)
        if model and f"{backend}:{model}" not in out:
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
