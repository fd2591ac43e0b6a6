"""Backends by name. Built-ins register through the same `register()` a plugin or test would use.

`get()` is the backend itself; `observed()` is the one to make model calls through: the same
backend, its calls seen by the registry's `observer` (metrics and traces, when the composition
root set one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from navi.llm.base import LLMBackend
from navi.llm.errors import UnknownBackend
from navi.llm.observe import CallObserver, ObservedBackend

if TYPE_CHECKING:
    from navi.llm.chain import ChainShared

BackendFactory = Callable[[], LLMBackend]


class BackendRegistry:
    def __init__(self) -> None:
        self._factories: dict[str, BackendFactory] = {}
        self._instances: dict[str, LLMBackend] = {}
        self._default_models: dict[str, str] = {}
        self.observer = CallObserver()  # sees nothing until the composition root sets one
        # The model list (MODELS_FILE, navi/llm/endpoints.py) when the composition root built one:
        # its endpoints are backends by id, its chains backends too (navi/llm/chain.py).
        self.models: ChainShared | None = None

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

    def observed(self, name: str) -> LLMBackend:
        """The backend to make model calls through: `get(name)`, its calls seen by `observer`."""
        backend = self.get(name)
        if getattr(backend, "bounded", None) is not None:  # a model chain: its endpoints are observed
            return backend
        return ObservedBackend(backend, self.observer) if self.observer.active else backend

    def default_model(self, name: str) -> str:
        return self._default_models.get(name, "")

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    async def aclose(self) -> None:
        for backend in {id(b): b for b in self._instances.values()}.values():  # `default` is another's
            await backend.aclose()
        self._instances.clear()
