"""Backends by name. Built-ins register through the same `register()` a plugin or test would use."""

from __future__ import annotations

from collections.abc import Callable

from navi.config import Settings
from navi.llm.base import LLMBackend
from navi.llm.errors import UnknownBackend

BackendFactory = Callable[[], LLMBackend]


class BackendRegistry:
    def __init__(self) -> None:
        self._factories: dict[str, BackendFactory] = {}
        self._instances: dict[str, LLMBackend] = {}
        self._default_models: dict[str, str] = {}

    def register(self, name: str, factory: BackendFactory, *, default_model: str = "") -> None:
        self._factories[name] = factory
        self._instances.pop(name, None)
        if default_model:
            self._default_models[name] = default_model

    def register_instance(self, name: str, backend: LLMBackend, *, default_model: str = "") -> None:
        self.register(name, lambda: backend, default_model=default_model)
        self._instances[name] = backend

    def unregister(self, name: str) -> None:
        self._factories.pop(name, None)
        self._instances.pop(name, None)
        self._default_models.pop(name, None)

    def get(self, name: str) -> LLMBackend:
        if name not in self._instances:
            factory = self._factories.get(name)
            if factory is None:
                known = ", ".join(sorted(self._factories)) or "none"
                raise UnknownBackend(f"no model backend named '{name}' (known: {known})", backend=name)
            self._instances[name] = factory()
        return self._instances[name]

    def default_model(self, name: str) -> str:
        return self._default_models.get(name, "")

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    async def aclose(self) -> None:
        for backend in list(self._instances.values()):
            await backend.aclose()
        self._instances.clear()


def build_backends(settings: Settings) -> BackendRegistry:
    """The three built-in backends, configured from settings.

    Each SDK is imported and its client made on first use, so an Ollama-only install never pays
    for loading the OpenAI and Anthropic SDKs.
    """
    timeouts = {
        # The HTTP read timeout is only a backstop: the agent enforces the first-token and idle
        # timeouts itself (navi/llm/calls.py), and stop closes the request at any moment.
        "timeout": max(settings.llm_first_token_timeout_seconds, settings.llm_idle_timeout_seconds),
        "connect_timeout": settings.llm_connect_timeout_seconds,
    }

    def ollama() -> LLMBackend:
        from navi.llm.ollama_backend import OllamaBackend

        return OllamaBackend(settings.ollama_host, num_ctx=settings.ollama_num_ctx, **timeouts)

    def openai() -> LLMBackend:
        from navi.llm.openai_backend import OpenAIBackend

        return OpenAIBackend(settings.openai_base_url, settings.openai_api_key, **timeouts)

    def anthropic() -> LLMBackend:
        from navi.llm.anthropic_backend import AnthropicBackend

        return AnthropicBackend(
            settings.anthropic_api_key,
            settings.anthropic_base_url,
            max_tokens=settings.anthropic_max_tokens,
            **timeouts,
        )

    registry = BackendRegistry()
    registry.register("ollama", ollama, default_model=settings.ollama_default_model)
    registry.register("openai", openai, default_model=settings.openai_default_model)
    registry.register("anthropic", anthropic, default_model=settings.anthropic_default_model)
    return registry
