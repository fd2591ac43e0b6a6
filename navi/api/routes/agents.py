"""What the agent can be: profiles and tools."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from navi.api.deps import ConfigDep, OwnerDep, RuntimeDep
from navi.api.routing import api_router

router = api_router(prefix="/agents", tags=["agents"])


class ProfileOut(BaseModel):
    id: str
    name: str
    description: str
    model: str
    llm_backend: str
    temperature: float
    max_iterations: int
    planning_enabled: bool
    tools: list[str]
    scratchpad_sections: list[str]


class ToolProblem(BaseModel):
    file: str
    message: str


class Reloaded(BaseModel):
    loaded: list[str]
    errors: list[ToolProblem]


class ToolOut(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any]
    builtin: bool
    # The MCP server (its name in MCP_SERVERS_FILE) a tool comes from; null for Navi's own and user tools.
    server: str | None = None


@router.get("/profiles", response_model=list[ProfileOut], summary="All profiles")
async def profiles(runtime: RuntimeDep) -> list[ProfileOut]:
    out = []
    for p in runtime.profiles.all():
        out.append(
            ProfileOut(
                id=p.id,
                name=p.name,
                description=p.description,
                model=runtime.profiles.model_of(p),
                llm_backend=runtime.profiles.backend_of(p),
                temperature=p.temperature,
                max_iterations=p.max_iterations,
                planning_enabled=p.planning_enabled,
                tools=[s.name for s in runtime.agent.tool_specs(p)],
                scratchpad_sections=list(p.scratchpad_sections),
            )
        )
    return out


@router.get("/tools", response_model=list[ToolOut], summary="All registered tools, built-in and user")
async def tools(runtime: RuntimeDep) -> list[ToolOut]:
    registry = runtime.tools
    return [
        ToolOut(
            name=n,
            description=t.description,
            parameters=t.parameters,
            builtin=registry.is_builtin(n),
            server=registry.server_of(n),
        )
        for n in registry.names()
        if (t := registry.get(n)) is not None
    ]


@router.post(
    "/tools/reload",
    response_model=Reloaded,
    summary="Reload the user tools from the tools folder (owner only)",
    dependencies=[OwnerDep],
)
async def reload_tools(runtime: RuntimeDep, config: ConfigDep) -> Reloaded:
    """What `navi tools reload` (and the `reload_tools` tool) do: built-ins stay, user tools are
    replaced by what the folder holds now; each file that failed says why. The tools are every
    user's, so only the owner may reload them (403 `owner_only` for anyone else)."""
    result = await runtime.tools.reload_user_tools(config.tools_dir)
    return Reloaded(
        loaded=sorted(result.names),
        errors=[ToolProblem(file=e.file, message=e.message) for e in result.errors],
    )
