"""Per-run state that tools need (session id, stop signal, event sink), set in one place.

The agent sets a `RunContext` before it runs tools; tools read it with `current()`. Each tool runs
in its own task, which copies the context at creation, so concurrent runs never see each other's
state. A subagent gets its own context with its own session id (so its scratchpad, todo list and
SSH connections are its own) and the parent's event sink.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

# How a run that nobody can be asked in settles calls that need approval: deny them at once, or
# allow them. None: a person is there (a page, a REST client) and is asked.
Unattended = Literal["deny", "allow"]


@dataclass
class RunContext:
    session_id: str
    profile_id: str = ""
    # The browser sign-in the run's agent profile names (`AgentProfile.browser_profile`; empty: none).
    browser_profile: str = ""
    # The stored session a subagent works for (its own `session_id` is `subagent_…`): approvals
    # of its calls are asked, and answered, in that session.
    root_session_id: str = ""
    owner: str = "local"
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    event_sink: asyncio.Queue[Any] | None = None
    is_subagent: bool = False
    depth: int = 0
    persistent: bool = True
    unattended: Unattended | None = None
    # The user's words said while this turn runs (`mode: "steer"`): called before each model call,
    # it hands over (once) the user messages that arrived since; they join the turn there.
    steering: Callable[[], Awaitable[list[Any]]] | None = None
    # Full texts of results shortened in the context, by recall key (see the `recall` tool).
    full_texts: dict[str, str] = field(default_factory=dict)

    @property
    def root_session(self) -> str:
        return self.root_session_id or self.session_id

    @property
    def stopped(self) -> bool:
        return self.stop_event.is_set()

    def emit(self, event: Any) -> None:
        """Hand an event to whoever drains this run's tool events (the parent loop)."""
        if self.event_sink is not None:
            self.event_sink.put_nowait(event)


_current: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar("navi_run", default=None)


def current() -> RunContext | None:
    return _current.get()


def require() -> RunContext:
    ctx = _current.get()
    if ctx is None:
        raise RuntimeError("this tool must run inside an agent run")
    return ctx


@contextmanager
def using(ctx: RunContext) -> Iterator[RunContext]:
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)
