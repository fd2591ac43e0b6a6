"""The agent engine: the loop, its events, planning, compression and post-turn workers."""

from navi.agent.engine import Agent, AgentConfig, AgentRunError
from navi.agent.events import AgentEvent

__all__ = ["Agent", "AgentConfig", "AgentEvent", "AgentRunError"]
