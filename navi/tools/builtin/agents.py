"""`spawn_agent` and `switch_profile`: the tools that steer the agent itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from navi import runctx
from navi.profiles.registry import ProfileRegistry
from navi.sessions.store import SessionStore
from navi.tools.base import SwitchProfile, Tool, ToolResult

MAX_DEPTH = 2
Spawner = Callable[[str, str], Awaitable[str]]


class SpawnAgentTool(Tool):
    name = "spawn_agent"
    description = (
        "Give a sub-task to a fresh subagent and wait for its answer. It sees only `task`, not "
        "this conversation: make `task` a complete brief (goal, context, constraints, form of the "
        "answer)."
    )
    parameters = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "minLength": 1},
            "profile_id": {
                "type": "string",
                "description": "default: the current one",
            },
        },
        "required": ["task"],
        "additionalProperties": False,
    }
    timeout = 900.0

    def __init__(self, profiles: ProfileRegistry, spawner: Spawner | None = None) -> None:
        self.profiles = profiles
        self.spawner = spawner

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        if self.spawner is None:
            return ToolResult.fail("subagents are not available in this run")
        if ctx.depth >= MAX_DEPTH:
            return ToolResult.fail(f"subagents may nest at most {MAX_DEPTH} levels; do this task yourself")
        profile_id = params.get("profile_id") or ctx.profile_id
        if profile_id not in self.profiles:
            return ToolResult.fail(f"no profile '{profile_id}' (known: {', '.join(self.profiles.ids())})")
        answer = await self.spawner(params["task"], profile_id)
        return ToolResult.ok(answer or "(the subagent gave no answer)")


class SwitchProfileTool(Tool):
    name = "switch_profile"
    description = "Move this conversation to another profile, from the next step on."
    timeout = 10.0

    def __init__(self, profiles: ProfileRegistry, sessions: SessionStore) -> None:
        self.profiles = profiles
        self.sessions = sessions

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return {
            "type": "object",
            "properties": {
                "profile_id": {"type": "string", "enum": self.profiles.ids()},
                "reason": {"type": "string"},
            },
            "required": ["profile_id"],
            "additionalProperties": False,
        }

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        profile = self.profiles.get(params["profile_id"])
        if ctx.persistent and not await self.sessions.set_profile(ctx.session_id, profile.id):
            return ToolResult.fail("this session no longer exists")
        # The intent, even when already there: an earlier call in this batch may have switched away.
        intent = SwitchProfile(profile_id=profile.id, profile_name=profile.name)
        if profile.id == ctx.profile_id:
            return ToolResult.ok(f"Already in the {profile.name} profile.", intents=[intent])
        return ToolResult.ok(f"Switched to the {profile.name} profile ({profile.id}).", intents=[intent])
