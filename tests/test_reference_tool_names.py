"""The built-in tools keep the reference's names (SPEC: tool names match the reference exactly)."""

from __future__ import annotations

from bench.prompt_tokens import fixed_prompts
from navi.memory.in_memory import InMemoryMemoryStore
from navi.tools.builtin.memory import ForgetTool
from navi.tools.loader import LoadResult
from navi.tools.registry import ToolRegistry

# The reference's 18 built-ins, every one in every profile (reference/navi-docs/profiles.md).
REFERENCE_TOOLS = (
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
    "memory_forget",
    "reload_tools",
    "write_tool",
    "list_tools",
    "tool_manual",
    "spawn_agent",
)


def test_every_profile_offers_the_reference_tools_by_their_names() -> None:
    for profile_id, (_system, specs) in fixed_prompts(disclosure=False).items():
        names = [s.name for s in specs]
        assert set(REFERENCE_TOOLS) <= set(names), (profile_id, set(REFERENCE_TOOLS) - set(names))
        assert "forget" not in names, profile_id  # one name per tool in what the model reads


def test_the_former_name_reaches_memory_forget() -> None:
    registry = ToolRegistry()
    registry.register(ForgetTool(InMemoryMemoryStore()), builtin=True)
    registry.alias("forget", "memory_forget")
    assert registry.names() == ["memory_forget"]
    assert registry.get("forget") is registry.get("memory_forget") is not None
    view = registry.view(["forget"])  # a profile's list written with the former name
    assert view.names == ["memory_forget"] and [s.name for s in view.specs()] == ["memory_forget"]
    assert view.get("forget") is registry.get("memory_forget") and "forget" in view


async def test_a_reload_reserves_the_former_name() -> None:
    seen: list[frozenset[str]] = []

    class Loader:
        async def load(self, tools_dir: object, *, reserved: object = ()) -> LoadResult:
            seen.append(frozenset(reserved))  # type: ignore[arg-type]
            return LoadResult()

    registry = ToolRegistry(Loader())
    registry.register(ForgetTool(InMemoryMemoryStore()), builtin=True)
    registry.alias("forget", "memory_forget")
    await registry.reload_user_tools("unused")
    assert {"forget", "memory_forget"} <= seen[0]
