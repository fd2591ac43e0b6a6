"""What a profile is: an identity, a tool set and model settings for one domain."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

BASE_TOOLS: tuple[str, ...] = (
    "todo",
    "scratchpad",
    "switch_profile",
    "web_search",
    "web_view",
    "browser",
    "http_request",
    "filesystem",
    "code_exec",
    "terminal",
    "ssh_exec",
    "image_view",
    "memory_search",
    "remember",
    "memory_forget",
    "reload_tools",
    "write_tool",
    "list_tools",
    "tool_manual",
    "spawn_agent",
    "recall",
    "schedule",
    "search_documents",
    "notify",
    "background_job",
)


@dataclass(frozen=True, kw_only=True)
class AgentProfile:
    """A profile. `model`/`llm_backend` left empty mean "the configured default"."""

    id: str
    name: str
    description: str
    system_prompt: str
    enabled_tools: list[str] = field(default_factory=lambda: list(BASE_TOOLS))
    model: str = ""
    temperature: float = 0.7
    max_iterations: int = 50
    planning_enabled: bool = False
    llm_backend: str = ""
    scratchpad_sections: tuple[str, ...] = ()
    # The tools sent with full schemas from a session's start (the rest are listed one line each
    # and loaded on demand, navi/agent/disclosure.py); None: a default set.
    core_tools: tuple[str, ...] | None = None
    # A session's own layer of the system prompt, after the profile's: an imported archive's
    # system prompt (`Session.system_prompt`). Set per session with `for_session`, never in a registry.
    session_prompt: str = ""
    # The user's custom instructions ("about me", "how to answer"), a layer of the system prompt
    # between the profile's and the session's. Set per run with `for_user`, never in a registry.
    user_prompt: str = ""
    # Who made this profile on the page (None: a built-in or configured one, everyone's).
    owner: str | None = None
    # The saved browser sign-in (`navi browser login NAME`) the `browser` tool opens pages with in
    # this profile's conversations, unless the model names another: the name of one of the
    # conversation's user's own sign-ins (empty: none).
    browser_profile: str = ""

    def for_session(self, session_prompt: str | None, model: str | None = None) -> AgentProfile:
        """This profile in a session with its own layer of the system prompt (None: none) and the
        model picked for it ("backend:model"; None or empty: the profile's)."""
        return replace(self.with_model(model), session_prompt=(session_prompt or "").strip())

    def with_model(self, model: str | None) -> AgentProfile:
        """This profile on the model picked for it ("backend:model"; None or empty: its own)."""
        backend, _, name = (model or "").partition(":")
        return replace(self, llm_backend=backend, model=name) if name else self

    def for_user(self, user_prompt: str) -> AgentProfile:
        """This profile with its user's custom instructions (empty: none)."""
        return replace(self, user_prompt=user_prompt.strip())

    def with_layers_of(self, other: AgentProfile) -> AgentProfile:
        """This profile carrying `other`'s session and user layers (a profile switch mid-run)."""
        return replace(self, session_prompt=other.session_prompt, user_prompt=other.user_prompt)

    def visible_to(self, owner: str) -> bool:
        return self.owner is None or self.owner == owner
