"""The model backends Navi offers, registered in one place: `BACKENDS`.

A backend is one module of this package: an `LLMBackend` over one API's official client, with its
reading of that client's exceptions and its wording (`navi.llm.failures`). Adding one is that
module, its entry below, and its settings in `navi/llm/settings.py` — nothing outside `llm/`. The
composition root builds every entry from settings (`compose/models.build_backends`);
`DEFAULT_LLM_BACKEND` must name one; `navi doctor` and the page's status light take their fixes
from here.

Nothing here imports a backend: its module (and its SDK) is loaded when the backend is first
built, so an Ollama-only install never loads the OpenAI and Anthropic SDKs.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from navi.llm.base import LLMBackend


@dataclass(frozen=True)
class BackendKind:
    name: str  # DEFAULT_LLM_BACKEND's value, a profile's `llm_backend`
    backend: str  # "module:Class", imported on first use
    options: Mapping[str, str]  # the class's keyword arguments → the settings they come from
    default_model: str  # the setting naming the model a profile without one uses
    server_setting: str  # what to check when its server does not answer ("check OLLAMA_HOST")
    server_fix: str  # what `navi doctor` says then; {where}: the server's address, password masked
    pull: str = ""  # how to get a model the server lacks ({model}); "" when there is no such command
    # The keyword arguments a model list's entry sets (navi/llm/endpoints.py): its server's address,
    # its API key ("": none), its window ("": not the backend's to set).
    url_arg: str = "base_url"
    key_arg: str = "api_key"
    window_arg: str = ""

    def load(self) -> type[LLMBackend]:
        module, _, name = self.backend.partition(":")
        cls: type[LLMBackend] = getattr(importlib.import_module(module), name)
        return cls

    def build(self, **options: Any) -> LLMBackend:
        """A backend with these keyword arguments (its `options`, and `timeout`/`connect_timeout`)."""
        return self.load()(**options)


BACKENDS: tuple[BackendKind, ...] = (
    BackendKind(
        "ollama",
        "navi.llm.ollama_backend:OllamaBackend",
        options={"host": "ollama_host", "num_ctx": "ollama_num_ctx"},
        default_model="ollama_default_model",
        server_setting="OLLAMA_HOST",
        server_fix="start Ollama with `ollama serve` (or set OLLAMA_HOST; now {where})",
        pull="run `ollama pull {model}`",
        url_arg="host",
        key_arg="",
        window_arg="num_ctx",
    ),
    BackendKind(
        "openai",
        "navi.llm.openai_backend:OpenAIBackend",
        options={"base_url": "openai_base_url", "api_key": "openai_api_key"},
        default_model="openai_default_model",
        server_setting="OPENAI_BASE_URL",
        server_fix="start the server or set OPENAI_BASE_URL / OPENAI_API_KEY",
    ),
    BackendKind(
        "anthropic",
        "navi.llm.anthropic_backend:AnthropicBackend",
        options={
            "api_key": "anthropic_api_key",
            "base_url": "anthropic_base_url",
            "max_tokens": "anthropic_max_tokens",
        },
        default_model="anthropic_default_model",
        server_setting="ANTHROPIC_API_KEY",
        server_fix="set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL if you use a proxy)",
    ),
)


def names() -> list[str]:
    return [kind.name for kind in BACKENDS]


def kind_of(name: str) -> BackendKind | None:
    return next((kind for kind in BACKENDS if kind.name == name), None)


def spelled_out(last: str = "or") -> str:
    """The names as a sentence does: "ollama, openai or anthropic"."""
    *rest, final = names()
    return f"{', '.join(rest)} {last} {final}" if rest else final
