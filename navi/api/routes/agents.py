"""What the agent can be: profiles and tools."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from navi.api.deps import ConfigDep, CurrentUser, OwnerDep, RuntimeDep
from navi.api.errors import BadRequest, NotFound
from navi.api.model_choice import check_model
from navi.api.routing import api_router
from navi.compose.runtime import Runtime
from navi.profiles.base import AgentProfile
from navi.profiles.custom import CustomProfile, Instructions, ProfileSpec, as_profile, new_profile_id

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
    # A profile this user made on the page (editable; PUT and DELETE /agents/profiles/{id}).
    custom: bool = False
    # A custom profile's instructions, to edit.
    instructions: str | None = None
    # The model picked ("backend:model"; empty: the default): a custom profile's own, or the one this
    # user picked for a built-in profile (PUT /agents/profiles/{id}/model), which `model` then names.
    model_choice: str | None = None
    # The saved browser sign-in (`GET /browser/profiles`) the browser tool opens pages with in this
    # profile's conversations, unless the model names another: the user's own of this name ("": none).
    browser_profile: str = ""
    # A built-in profile's model when this user picked none (null for custom profiles).
    default_model: str | None = None


class ModelPick(BaseModel):
    model: str = Field(
        default="",
        max_length=300,
        description='The model this profile uses for you, "backend:model" (GET /models); empty: its own',
    )


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


def profile_out(runtime: Runtime, p: AgentProfile, pick: str = "") -> ProfileOut:
    """`p` as this user sees it: a built-in profile on the model they picked for it (`pick`)."""
    custom = p.owner is not None
    shown = p if custom else p.with_model(pick)
    return ProfileOut(
        id=p.id,
        name=p.name,
        description=p.description,
        model=runtime.profiles.model_of(shown),
        llm_backend=runtime.profiles.backend_of(shown),
        temperature=p.temperature,
        max_iterations=p.max_iterations,
        planning_enabled=p.planning_enabled,
        tools=[s.name for s in runtime.agent.tool_specs(p)] if not custom else list(p.enabled_tools),
        scratchpad_sections=list(p.scratchpad_sections),
        custom=custom,
        instructions=p.system_prompt if custom else None,
        model_choice=(f"{p.llm_backend}:{p.model}" if p.model else "") if custom else pick,
        default_model=None if custom else runtime.profiles.model_of(p),
        browser_profile=p.browser_profile,
    )


async def picks_of(runtime: Runtime, user: str) -> dict[str, str]:
    """The models `user` picked for built-in profiles, those whose backend Navi still has."""
    picks = await runtime.preferences.profile_models(user)
    return {k: v for k, v in picks.items() if v.partition(":")[0] in runtime.backends}


@router.get("/profiles", response_model=list[ProfileOut], summary="The profiles this user may pick")
async def profiles(runtime: RuntimeDep, user: CurrentUser) -> list[ProfileOut]:
    """Everyone's profiles, then the ones this user made on the page (`custom`). A built-in profile
    names the model it uses for this user: the one they picked (`model_choice`), else its own."""
    picks = await picks_of(runtime, user)
    return [profile_out(runtime, p, picks.get(p.id, "")) for p in runtime.profiles.visible(user)]


@router.put(
    "/profiles/{profile_id}/model",
    response_model=ProfileOut,
    summary="Pick the model a built-in profile uses for you",
)
async def pick_model(profile_id: str, body: ModelPick, runtime: RuntimeDep, user: CurrentUser) -> ProfileOut:
    """For you alone: other users keep theirs. Your conversations in this profile use it from their
    next message, except one with a model of its own (PATCH /sessions/{id} `model`). Empty: the
    profile's own model again. A profile you made has its model in itself (PUT /agents/profiles/{id})."""
    if profile_id not in runtime.profiles or not runtime.profiles.get(profile_id).visible_to(user):
        raise NotFound(f"no profile {profile_id[:64]!r} (GET /agents/profiles lists yours)")
    profile = runtime.profiles.get(profile_id)
    if profile.owner is not None:
        raise BadRequest("a profile you made has its model in itself: PUT /agents/profiles/{id} sets it")
    choice = body.model.strip()
    if choice:
        check_model(runtime.backends, choice)
    await runtime.preferences.set_profile_model(user, profile_id, choice or None)
    return profile_out(runtime, profile, choice)


def _checked(runtime: Runtime, spec: ProfileSpec) -> ProfileSpec:
    unknown = [t for t in spec.tools if t not in runtime.tools.names()]
    if unknown:
        raise BadRequest(f"no such tool: {', '.join(unknown[:5])} (GET /agents/tools lists them)")
    if spec.model:
        check_model(runtime.backends, spec.model)
    return spec.model_copy(update={"name": spec.name.strip(), "tools": list(dict.fromkeys(spec.tools))})


def _own(runtime: Runtime, profile_id: str, user: str) -> AgentProfile:
    profile = runtime.profiles.of_session(profile_id) if profile_id in runtime.profiles else None
    if profile is None or profile.id != profile_id or profile.owner != user:
        raise NotFound(
            f"no profile of yours {profile_id[:64]!r} (only profiles made on the page can be changed)"
        )
    return profile


@router.post("/profiles", status_code=201, response_model=ProfileOut, summary="Make a profile of your own")
async def create_profile(spec: ProfileSpec, runtime: RuntimeDep, user: CurrentUser) -> ProfileOut:
    custom = CustomProfile(id=new_profile_id(), owner=user, spec=_checked(runtime, spec))
    await runtime.preferences.put_profile(custom)
    runtime.profiles.register(as_profile(custom))
    return profile_out(runtime, runtime.profiles.get(custom.id))


@router.put("/profiles/{profile_id}", response_model=ProfileOut, summary="Change a profile you made")
async def update_profile(
    profile_id: str, spec: ProfileSpec, runtime: RuntimeDep, user: CurrentUser
) -> ProfileOut:
    _own(runtime, profile_id, user)
    custom = CustomProfile(id=profile_id, owner=user, spec=_checked(runtime, spec))
    await runtime.preferences.put_profile(custom)
    runtime.profiles.register(as_profile(custom))
    return profile_out(runtime, runtime.profiles.get(custom.id))


@router.delete("/profiles/{profile_id}", status_code=204, summary="Delete a profile you made")
async def delete_profile(profile_id: str, runtime: RuntimeDep, user: CurrentUser) -> None:
    """Its conversations go on in the default profile."""
    _own(runtime, profile_id, user)
    await runtime.preferences.delete_profile(profile_id, user)
    runtime.profiles.unregister(profile_id)


@router.get("/instructions", response_model=Instructions, summary="Your custom instructions")
async def get_instructions(runtime: RuntimeDep, user: CurrentUser) -> Instructions:
    return await runtime.preferences.instructions(user)


@router.put("/instructions", response_model=Instructions, summary="Set your custom instructions")
async def set_instructions(body: Instructions, runtime: RuntimeDep, user: CurrentUser) -> Instructions:
    """ "About me" and "how to answer": part of the system prompt of every conversation of yours, after
    the profile's instructions (the same text on every call, so the prompt cache keeps it)."""
    await runtime.preferences.set_instructions(user, body)
    return body


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
