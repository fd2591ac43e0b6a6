"""What an `Agent` is built from: its collaborators, made in the composition root."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from navi.agent.compression.compressor import ContextCompressor
from navi.agent.gate import ApprovalGate
from navi.agent.quoting import Find
from navi.agent.windows import ContextWindows
from navi.agent.workers import Worker
from navi.llm.registry import BackendRegistry
from navi.profiles.registry import ProfileRegistry
from navi.sessions.store import SessionStore
from navi.tools.registry import ToolRegistry


@dataclass(frozen=True, kw_only=True)
class AgentParts:
    """The agent's collaborators.

    The registries it binds runs from (`backends`, `profiles`, `tools`), where sessions are kept,
    the context compressor, and the post-turn `workers`; then what it asks of the rest of Navi:
    an owner's memory summary, the user tools enabled, the tools a profile is offered besides its
    own (MCP servers', skills'), what to do when a session ends, the context windows (None: its
    own, on `backends`), where calls that need the user's consent wait (None: none wait), and the
    passages of a session's documents (None: no documents), and the clock model calls are timed by.
    """

    backends: BackendRegistry
    profiles: ProfileRegistry
    tools: ToolRegistry
    sessions: SessionStore
    compressor: ContextCompressor
    workers: Sequence[Worker] = ()
    memory_summary: Callable[[str], Awaitable[str | None]] | None = None
    # An owner's custom instructions, the system prompt's layer after the profile's (None: none).
    instructions: Callable[[str], Awaitable[str]] | None = None
    # The model an owner picked for a built-in profile, "backend:model" ("": the profile's own), by
    # (owner, profile id); a conversation's own model wins over it (None: no picks).
    picked_model: Callable[[str, str], Awaitable[str]] | None = None
    user_tools: Callable[[], list[str]] | None = None
    offered_tools: Callable[[str], list[str]] | None = None
    on_session_end: Sequence[Callable[[str], Awaitable[None] | None]] = ()
    windows: ContextWindows | None = None
    approvals: ApprovalGate | None = None
    documents: Find | None = None
    # What model calls are timed with (ttft and duration on each answer): tests pass their own.
    clock: Callable[[], float] = time.monotonic
