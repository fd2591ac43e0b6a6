"""The model list: named model endpoints and the chains that try them in order (docs/models.md).

`MODELS_FILE` is a TOML file (read in the composition root; parsed here from its text):

    side = "small"                     # side calls (naming, planning, summaries, memory) go here first

    [[models]]
    id = "local-big"                   # what chains, SIDE_MODEL and the answers' metadata call it
    backend = "ollama"                 # ollama, openai or anthropic
    url = "http://localhost:11434"     # the server (empty: the backend's setting in .env)
    model = "gemma4:26b-a4b-it-q4_K_M"
    window = 32768                     # tokens the model holds (empty: as the server says)
    capabilities = ["tools", "vision"] # tools, vision, audio (absent: not said)
    price = [0.15, 0.6]                # USD per million tokens in and out (absent: no cost)
    key_env = "OPENAI_API_KEY"         # the environment variable holding its API key

    [chains]
    default = ["local-big", "local-small", "cloud"]   # every profile's, unless named below
    coder = ["cloud", "local-big"]                     # a profile's own, by profile id

`.env`'s single model is always on the list as the entry `default` (unless the file names one so):
without a file it is the whole list, and nothing routes.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from navi.llm import backends
from navi.llm.prices import Price

DEFAULT_ID = "default"
CHAIN_PREFIX = "models"  # the chains' names as backends: "models" (the default chain), "models:<profile>"
CAPABILITIES = ("tools", "vision", "audio")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_FIELDS = {"id", "backend", "url", "model", "window", "capabilities", "price", "key_env"}


class ModelsFileError(ValueError):
    """The models file cannot be used; the message says where and what."""


@dataclass(frozen=True, kw_only=True)
class ModelEndpoint:
    """One model on one server."""

    id: str
    backend: str
    model: str
    url: str = ""  # "" : the backend's own setting (OLLAMA_HOST, OPENAI_BASE_URL…)
    key_env: str = ""  # "" : the backend's own key setting
    window: int | None = None  # None: as the server says (capped by OLLAMA_NUM_CTX)
    capabilities: frozenset[str] | None = None  # None: not said
    price: Price | None = None
    implicit: bool = False  # `.env`'s single model

    def has(self, capability: str) -> bool | None:
        """Whether the endpoint has `capability`; None when the list does not say."""
        return None if self.capabilities is None else capability in self.capabilities


@dataclass(frozen=True)
class ModelList:
    """The endpoints by id (in the file's order) and the chains by name (`default`, profile ids)."""

    endpoints: Mapping[str, ModelEndpoint]
    chains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    side: str = ""
    from_file: bool = False

    def chain(self, name: str = DEFAULT_ID) -> tuple[str, ...]:
        return self.chains.get(name) or self.chains.get(DEFAULT_ID) or (next(iter(self.endpoints)),)

    def get(self, endpoint_id: str) -> ModelEndpoint:
        return self.endpoints[endpoint_id]


def implicit_list(default: ModelEndpoint) -> ModelList:
    """The list without a file: `.env`'s one model."""
    return ModelList({default.id: default}, {DEFAULT_ID: (default.id,)})


def parse_models(
    text: str, default: ModelEndpoint, *, source: str = "MODELS_FILE", side: str = ""
) -> ModelList:
    """The list a models file's `text` gives, `.env`'s model added as `default` (unless the file
    defines that id). `side` (SIDE_MODEL) overrides the file's. Raises `ModelsFileError`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelsFileError(f"{source} is not valid TOML: {exc}") from None
    unknown = set(data) - {"models", "chains", "side"}
    if unknown:
        raise ModelsFileError(f"{source}: unknown key(s) {', '.join(sorted(unknown))} (models, chains, side)")
    entries = data.get("models", [])
    if not isinstance(entries, list):
        raise ModelsFileError(f"{source}: `models` must be an array of tables ([[models]])")
    endpoints: dict[str, ModelEndpoint] = {}
    for n, entry in enumerate(entries, 1):
        endpoint = _endpoint(entry, f"{source}, model {n}")
        if endpoint.id in endpoints:
            raise ModelsFileError(f"{source}: the id {endpoint.id!r} is used twice")
        endpoints[endpoint.id] = endpoint
    endpoints.setdefault(DEFAULT_ID, default)
    raw_chains = data.get("chains", {})
    if not isinstance(raw_chains, dict):
        raise ModelsFileError(f"{source}: `chains` must be a table of lists of model ids")
    chains: dict[str, tuple[str, ...]] = {}
    for name, ids in raw_chains.items():
        chains[name] = _ids(ids, endpoints, f"{source}, chain {name!r}")
    if DEFAULT_ID not in chains:
        listed = tuple(i for i, e in endpoints.items() if not e.implicit or len(endpoints) == 1)
        chains[DEFAULT_ID] = listed
    side = side or data.get("side", "")
    if not isinstance(side, str) or (side and side not in endpoints):
        where = "SIDE_MODEL" if side and side != data.get("side") else f"{source}, side"
        raise ModelsFileError(f"{where}: {side!r} is not a model id ({', '.join(endpoints)})")
    return ModelList(endpoints, chains, side, from_file=True)


def _ids(ids: Any, endpoints: Mapping[str, ModelEndpoint], where: str) -> tuple[str, ...]:
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise ModelsFileError(f"{where}: must be a non-empty list of model ids")
    for i in ids:
        if i not in endpoints:
            raise ModelsFileError(f"{where}: {i!r} is not a model id ({', '.join(endpoints)})")
    if len(set(ids)) != len(ids):
        raise ModelsFileError(f"{where}: a model is named twice")
    return tuple(ids)


def _endpoint(entry: Any, where: str) -> ModelEndpoint:
    if not isinstance(entry, dict):
        raise ModelsFileError(f"{where}: must be a table")
    unknown = set(entry) - _FIELDS
    if unknown:
        raise ModelsFileError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    ident, backend, model = (entry.get(k) for k in ("id", "backend", "model"))
    if not isinstance(ident, str) or not _ID.match(ident):
        raise ModelsFileError(f"{where}: `id` must be letters, digits, '.', '_' or '-' (at most 64)")
    where = f"{where} ({ident})"
    if ident in backends.names() or ident.startswith(CHAIN_PREFIX):
        raise ModelsFileError(f"{where}: `id` must not be a backend's name nor start with {CHAIN_PREFIX!r}")
    if backend not in backends.names():
        raise ModelsFileError(f"{where}: `backend` must be {backends.spelled_out()}")
    if not isinstance(model, str) or not model.strip():
        raise ModelsFileError(f"{where}: `model` must name the model")
    url = entry.get("url", "")
    if not isinstance(url, str) or (url and not url.startswith(("http://", "https://"))):
        raise ModelsFileError(f"{where}: `url` must start with http:// or https://")
    key_env = entry.get("key_env", "")
    if not isinstance(key_env, str) or (key_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key_env)):
        raise ModelsFileError(f"{where}: `key_env` must name an environment variable")
    window = entry.get("window")
    if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 512):
        raise ModelsFileError(f"{where}: `window` must be a whole number of tokens, at least 512")
    return ModelEndpoint(
        id=ident,
        backend=backend,
        model=model.strip(),
        url=url.rstrip("/"),
        key_env=key_env,
        window=window,
        capabilities=_capabilities(entry, where),
        price=_price(entry.get("price"), where),
    )


def _capabilities(entry: Mapping[str, Any], where: str) -> frozenset[str] | None:
    if "capabilities" not in entry:
        return None
    caps = entry["capabilities"]
    if not isinstance(caps, list) or not all(c in CAPABILITIES for c in caps):
        raise ModelsFileError(f"{where}: `capabilities` must be a list of {', '.join(CAPABILITIES)}")
    return frozenset(caps)


def _price(value: Any, where: str) -> Price | None:
    if value is None:
        return None
    ok = isinstance(value, list) and len(value) == 2
    ok = ok and all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in value)
    if not ok:
        raise ModelsFileError(
            f"{where}: `price` must be [input, output] USD per million tokens, e.g. [2.5, 10]"
        )
    return Price(float(value[0]), float(value[1]))


def describe(endpoint: ModelEndpoint) -> dict[str, Any]:
    """The endpoint as `navi models list` and `GET /models` show it (no key, only its variable)."""
    return {
        "id": endpoint.id,
        "backend": endpoint.backend,
        "model": endpoint.model,
        "url": endpoint.url,
        "key_env": endpoint.key_env,
        "window": endpoint.window,
        "capabilities": None if endpoint.capabilities is None else sorted(endpoint.capabilities),
        "price": None if endpoint.price is None else [endpoint.price.input, endpoint.price.output],
        "implicit": endpoint.implicit,
    }


def chain_backend(name: str) -> str:
    """The backend name of the chain `name` (`default`, or a profile id)."""
    return CHAIN_PREFIX if name == DEFAULT_ID else f"{CHAIN_PREFIX}:{name}"
