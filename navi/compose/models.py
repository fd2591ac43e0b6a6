"""Settings → the model backends, the profiles and memory's embedding model.

The model list: each endpoint of MODELS_FILE a backend by its id, each chain a backend
(navi/llm/chain.py) named `models` (the default chain) or `models:<profile>`. Nothing here imports
a model SDK or the embedding model itself: a backend's SDK loads on its first call.

Without MODELS_FILE nothing is added: `.env`'s one model is the whole list (`navi models list`
shows it as the entry `default`) and calls go to it as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navi.compose.problems import SetupError
from navi.config import Settings, cache_home
from navi.llm import backends as catalogue
from navi.llm.chain import ChainShared, ModelChain
from navi.llm.endpoints import (
    DEFAULT_ID,
    ModelEndpoint,
    ModelList,
    ModelsFileError,
    chain_backend,
    implicit_list,
    parse_models,
)
from navi.llm.prices import Price, Prices
from navi.llm.registry import BackendRegistry
from navi.profiles.registry import ProfileRegistry, builtin_profiles

if TYPE_CHECKING:
    from navi.memory.embedders import Embedder

FIX = "fix the file (docs/models.md) or unset MODELS_FILE"


def default_endpoint(settings: Settings) -> ModelEndpoint:
    """`.env`'s one model, as the list's entry `default`."""
    kind = catalogue.kind_of(settings.default_llm_backend)
    assert kind is not None  # validated by Settings
    return ModelEndpoint(
        id=DEFAULT_ID,
        backend=kind.name,
        model=getattr(settings, kind.default_model),
        url=str(getattr(settings, kind.options.get(kind.url_arg, ""), "") or ""),
        implicit=True,
    )


def model_list(settings: Settings) -> ModelList:
    """The model list the settings give; a file Navi cannot use is a `SetupError`."""
    default = default_endpoint(settings)
    if not settings.models_file:
        if settings.side_model and settings.side_model != DEFAULT_ID:
            raise SetupError(f"SIDE_MODEL names {settings.side_model!r} but MODELS_FILE is unset", FIX)
        return implicit_list(default)
    path = Path(settings.models_file).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SetupError(f"MODELS_FILE {path} cannot be read: {exc.strerror or exc}", FIX) from None
    try:
        return parse_models(text, default, source=f"MODELS_FILE {path}", side=settings.side_model)
    except ModelsFileError as exc:
        raise SetupError(str(exc), FIX) from None


def endpoint_options(settings: Settings, endpoint: ModelEndpoint) -> dict[str, Any]:
    """The backend's keyword arguments for `endpoint`: its kind's settings, then the entry's own."""
    kind = catalogue.kind_of(endpoint.backend)
    assert kind is not None  # validated by the parser
    options = {arg: getattr(settings, setting) for arg, setting in kind.options.items()}
    if endpoint.url:
        options[kind.url_arg] = endpoint.url
    if endpoint.key_env and kind.key_arg:
        options[kind.key_arg] = os.environ.get(endpoint.key_env, "")
    if endpoint.window and kind.window_arg:
        options[kind.window_arg] = min(endpoint.window, settings.ollama_num_ctx)
    return options


def add_models(registry: BackendRegistry, settings: Settings, timeouts: Mapping[str, float]) -> None:
    """The model list's endpoints and chains, as backends of `registry` (nothing without MODELS_FILE)."""
    models = model_list(settings)
    if not models.from_file:
        return
    shared = ChainShared(
        models, cooldown=settings.model_cooldown_seconds, default_window=settings.ollama_num_ctx
    )
    for endpoint in models.endpoints.values():
        if endpoint.implicit:  # `.env`'s model: the backend already registered
            registry.register(
                endpoint.id, partial(registry.get, endpoint.backend), default_model=endpoint.model
            )
            continue
        kind = catalogue.kind_of(endpoint.backend)
        assert kind is not None
        build = partial(kind.build, **endpoint_options(settings, endpoint), **timeouts)
        registry.register(endpoint.id, build, default_model=endpoint.model)
    for name, ids in models.chains.items():
        chain = ModelChain(chain_backend(name), ids, shared, registry.observed)
        registry.register_instance(chain.name, chain, default_model=models.get(ids[0]).model)
    registry.models = shared


def with_chains(profiles: ProfileRegistry, backends: BackendRegistry) -> None:
    """Every profile on its chain: its own when the model list names one, else the default."""
    if backends.models is None:
        return
    chains = backends.models.models.chains
    unknown = [name for name in chains if name != DEFAULT_ID and name not in profiles]
    if unknown:
        raise SetupError(
            f"MODELS_FILE names chains of no profile: {', '.join(unknown)} "
            f"(profiles: {', '.join(profiles.ids())})",
            FIX,
        )
    profiles.default_backend = chain_backend(DEFAULT_ID)
    profiles.default_models[profiles.default_backend] = backends.default_model(profiles.default_backend)
    for profile in profiles.all():
        if profile.id in chains and not profile.llm_backend:
            chain = chain_backend(profile.id)
            profiles.register(replace(profile, llm_backend=chain, model=backends.default_model(chain)))


def prices(settings: Settings, backends: BackendRegistry) -> Prices:
    """LLM_PRICE_PER_MTOK's prices, and the model list's by endpoint."""
    base = Prices.parse(settings.llm_price_per_mtok)
    if backends.models is None:
        return base
    by_endpoint: dict[str, Price] = {
        e.id: e.price for e in backends.models.models.endpoints.values() if e.price is not None
    }
    return replace(base, by_endpoint=by_endpoint)


def build_backends(settings: Settings, *, timeout: float | None = None) -> BackendRegistry:
    """Every backend in `navi.llm.backends.BACKENDS`, each given the settings its entry names.

    Each SDK is imported and its client made on first use, so an Ollama-only install never pays
    for loading the OpenAI and Anthropic SDKs. `timeout` replaces both HTTP timeouts (`navi doctor`
    asks with a short one).
    """
    timeouts = {
        # The HTTP read timeout is only a backstop: the agent enforces the first-token and idle
        # timeouts itself (navi/llm/calls.py), and stop closes the request at any moment.
        "timeout": timeout
        or max(settings.llm_first_token_timeout_seconds, settings.llm_idle_timeout_seconds),
        "connect_timeout": timeout or settings.llm_connect_timeout_seconds,
    }

    registry = BackendRegistry()
    for kind in catalogue.BACKENDS:
        options = {arg: getattr(settings, setting) for arg, setting in kind.options.items()}
        registry.register(
            kind.name,
            partial(kind.build, **options, **timeouts),
            default_model=getattr(settings, kind.default_model),
        )
    add_models(registry, settings, timeouts)  # MODELS_FILE's endpoints and chains (docs/models.md)
    return registry


def default_models(backends: BackendRegistry) -> dict[str, str]:
    return {name: backends.default_model(name) for name in backends.names()}


def build_profiles(settings: Settings, backends: BackendRegistry) -> ProfileRegistry:
    """The built-in profiles; an empty model or backend on a profile means the configured default."""
    registry = ProfileRegistry(settings.default_llm_backend, default_models(backends))
    for profile in builtin_profiles(settings.agent_browser_profiles):  # NAVI_AGENT_BROWSER_PROFILES
        registry.register(profile)
    with_chains(registry, backends)
    return registry


def embedder(settings: Settings, backends: BackendRegistry) -> Embedder | None:
    """Memory's (and documents') embedding model: `MEMORY_EMBED_MODEL=builtin` is the built-in
    sentence embedder (all-MiniLM-L6-v2, `builtin:minilm`), `builtin:wordllama` the faster word
    vectors, both from their wheels; another name is a model on the default backend's embedding
    endpoint; empty means keyword-only search."""
    from navi.memory.embedders import (
        BUILTIN,
        BUILTIN_MINILM,
        BUILTIN_WORDLLAMA,
        BuiltinEmbedder,
        ServerEmbedder,
    )
    from navi.memory.minilm import MiniLMEmbedder

    name = settings.memory_embed_model.strip()
    if not name:
        return None
    if name in (BUILTIN, BUILTIN_MINILM):
        return MiniLMEmbedder(rewrites=cache_home() / "models")
    if name == BUILTIN_WORDLLAMA:
        return BuiltinEmbedder()
    backend = settings.default_llm_backend

    async def embed(texts: list[str], model: str) -> list[list[float]]:
        return await backends.get(backend).embed(texts, model)

    return ServerEmbedder(backend, name, embed)


def describe_memory_search(embed: Embedder | None, db_dialect: str | None) -> str:
    """What `navi doctor` and the start log say about memory search."""
    from navi.storage.vectors import EXACT_MAX

    if embed is None:
        return "keyword-only (full-text search); MEMORY_EMBED_MODEL=builtin (or a served model) adds meaning"
    where = "PostgreSQL" if db_dialect == "postgresql" else "SQLite"
    return (
        f"hybrid: full-text + embedding model {embed.name}; vectors in {where}, scanned in memory "
        f"(exact up to {EXACT_MAX:,} facts a user, sign bits first beyond)"
        + ("; candidates rescored by what they are about" if getattr(embed, "attribute_floor", None) else "")
    )
