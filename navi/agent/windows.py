"""How many tokens each model can hold: one answer for the engine, the REST API and the page.

The window of a (backend, model) is the smaller of Navi's configured `num_ctx` and what the model
server says the model holds; it is asked once and remembered. A server that cannot be reached is
not remembered, so a later question gets the real answer once it is back. The same lookup tells
whether the model takes tools natively or must be offered them as text.
"""

from __future__ import annotations

import asyncio

from navi.llm.base import LLMBackend
from navi.llm.errors import LLMError
from navi.llm.registry import BackendRegistry
from navi.profiles.base import AgentProfile
from navi.profiles.registry import ProfileRegistry


class ContextWindows:
    def __init__(self, backends: BackendRegistry, profiles: ProfileRegistry, num_ctx: int) -> None:
        self.backends = backends
        self.profiles = profiles
        self.num_ctx = num_ctx
        self._known: dict[tuple[str, str], int] = {}
        self._text_tools: set[tuple[str, str]] = set()  # models offered tools as text

    async def window(self, llm: LLMBackend, model: str) -> int:
        """The window of `model` on `llm`, asking the server the first time."""
        key = (llm.name, model)
        if key not in self._known:
            try:
                info = await llm.model_info(model)
            except LLMError:
                return self.num_ctx  # not remembered: the server may come back with a real answer
            length = info.context_length
            self._known[key] = min(self.num_ctx, length) if length else self.num_ctx
            if not info.native_tools:
                self._text_tools.add(key)
        return self._known[key]

    def _key(self, profile: AgentProfile) -> tuple[str, str] | None:
        name = self.profiles.backend_of(profile)
        if name not in self.backends:
            return None
        return self.backends.get(name).name, self.profiles.model_of(profile)

    def known(self, profile: AgentProfile) -> bool:
        """Whether the profile's window is known without asking (a backend Navi lacks counts as known)."""
        key = self._key(profile)
        return key is None or key in self._known

    def native_tools(self, llm: LLMBackend, model: str) -> bool:
        """Whether the model takes tools natively (else they are offered as text); until the
        server was asked, native is assumed."""
        return (llm.name, model) not in self._text_tools

    async def for_profile(self, profile: AgentProfile, *, wait: float | None = None) -> int:
        """The window a turn in `profile` gets. `wait` bounds a first question to the server (the
        configured `num_ctx` is the answer meanwhile, as it is for the engine when unreachable)."""
        key = self._key(profile)
        if key is None:
            return self.num_ctx
        if key in self._known:
            return self._known[key]
        llm = self.backends.get(self.profiles.backend_of(profile))
        try:
            return await asyncio.wait_for(self.window(llm, key[1]), wait)
        except TimeoutError:
            return self.num_ctx
