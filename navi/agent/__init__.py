"""The agent engine: the loop, its events, planning, compression and post-turn workers.

`Agent`, `AgentConfig`, `AgentRunError` and `AgentEvent` are imported on first use, so a module
below the engine (the grants store, approvals) can be imported without loading the whole loop.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from navi.agent.engine import Agent, AgentConfig, AgentRunError
    from navi.agent.events import AgentEvent

__all__ = ["Agent", "AgentConfig", "AgentEvent", "AgentRunError"]


def __getattr__(name: str) -> Any:
    if name in ("Agent", "AgentConfig", "AgentRunError"):
        from navi.agent import engine

        return getattr(engine, name)
    if name == "AgentEvent":
        from navi.agent import events

        return events.AgentEvent
    raise AttributeError(f"module 'navi.agent' has no attribute {name!r}")
