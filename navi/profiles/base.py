"""What a profile is: an identity, a tool set and model settings for one domain."""

from __future__ import annotations

from dataclasses import dataclass, field

BASE_TOOLS: tuple[str, ...] = (
    "todo",
    "scratchpad",
    "switch_profile",
    "web_search",
    "web_view",
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
