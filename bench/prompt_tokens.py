"""What Navi's fixed prompt costs: the system prompt plus every tool schema, on every model call.

A CPU model reads this prefix cold before the first token of every new conversation, so its size is
latency the user waits through. The prompt is built by Navi's own code — the profile registry, the
persona, `build_context`, the built-in tools registered as `navi/compose/runtime.py` registers them and the
seeded user tools loaded from a fresh temporary tools folder — so what is measured is what is sent.

Characters are always reported (deterministic: the test budget uses them). Tokens need the real
tokenizer and chat template, so they come from a llama-server started with `--jinja` and a
tools-capable template: the prompt is rendered by `/apply-template` with and without the fixed
part and the difference is counted with `/tokenize`.

    .venv/bin/python bench/prompt_tokens.py [--profile secretary] [--url http://127.0.0.1:8080] [--json]

with, for tokens, a server such as

    llama-server -m SmolLM2-135M-Instruct.Q4_1.gguf --jinja --port 8080 \\
        --chat-template-file navi/testing/templates/chatml-tools.jinja

`fixed_prompt()` and `count_tokens()` are importable (`bench/real_model.py` uses them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from navi.agent.context import SystemParts, build_context
from navi.agent.disclosure import disclose
from navi.compose.models import build_profiles
from navi.compose.parts import build_sandbox, builtin_settings
from navi.config import Settings, load_settings
from navi.documents.retrieval import Retrieval
from navi.jobs import InMemoryJobStore
from navi.jobs.service import JobService
from navi.llm.messages import ToolSpec
from navi.llm.openai_backend import to_openai_tools
from navi.llm.registry import BackendRegistry
from navi.logging import configure_logging
from navi.memory.in_memory import InMemoryMemoryStore
from navi.schedules import InMemoryScheduleStore
from navi.schedules.service import ScheduleService
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.state import SessionState
from navi.storage.database import Database
from navi.storage.documents import SqlDocumentStore
from navi.tools.builtin import BuiltinDeps, register_builtins
from navi.tools.host.client import ToolHost
from navi.tools.loader import LoadResult
from navi.tools.registry import ToolRegistry
from navi.tools.seeding import ensure_tools_dir
from navi.tools.user_config import read_enabled

USER_PROBE = "Hello!"  # the short user message both renderings share, so only the fixed part differs


def _settings(workdir: Path) -> Settings:
    """Default settings, with every path Navi writes to inside `workdir`."""
    return load_settings(
        db_path=str(workdir / "navi.db"),
        tools_dir=str(workdir / "tools"),
        manuals_dir=str(workdir / "manuals"),
        session_files_dir=str(workdir / "session_files"),
    )


def fixed_prompts(
    settings: Settings | None = None, *, disclosure: bool = True
) -> dict[str, tuple[str, list[ToolSpec]]]:
    """`{profile id: (system text, tool specs)}` for every built-in profile, default profile first.

    Tools are registered as `build_runtime` does (built-ins, then the user tools of a freshly seeded
    tools folder) and offered as `Agent.tool_specs` does: the profile's list plus the user tools
    named in `enabled.json`. With `disclosure` (what a session's first call sends), the profile's
    likely tools go with schemas and the rest are listed in the system text
    (navi/agent/disclosure.py); without it, every tool's schema and no listing.
    """
    with tempfile.TemporaryDirectory(prefix="navi-prompt-") as tmp:
        settings = settings or _settings(Path(tmp))
        profiles = build_profiles(settings, BackendRegistry())
        sandbox = build_sandbox(settings)
        host = ToolHost(sandbox)
        registry = ToolRegistry(user_tools=host)
        deps = BuiltinDeps(
            state=SessionState(),
            profiles=profiles,
            sessions=InMemorySessionStore(),
            memory=InMemoryMemoryStore(),
            sandbox=sandbox,
            schedules=ScheduleService(
                InMemoryScheduleStore(), sessions=InMemorySessionStore(), profiles=profiles, zone_name="UTC"
            ),
            # As on a runtime with its database (never opened here: only the tool's schema is read).
            documents=Retrieval(SqlDocumentStore(Database(f"sqlite:///{tmp}/navi.db"))),
            jobs=JobService(InMemoryJobStore(), InMemorySessionStore(), profiles),
        )
        register_builtins(registry, builtin_settings(settings, sandbox), deps)
        ensure_tools_dir(settings.tools_dir)
        loaded = asyncio.run(_load_user_tools(registry, host, settings.tools_dir))
        if loaded.errors:
            raise RuntimeError(f"seed tools failed to load: {loaded.errors}")
        user_tools = read_enabled(settings.tools_dir)
        out: dict[str, tuple[str, list[ToolSpec]]] = {}
        for profile in profiles.all():
            view = registry.view([*profile.enabled_tools, *user_tools])
            split = disclose(view, profile.core_tools) if disclosure else None
            index = split.index_text if split is not None else None
            head = build_context(SystemParts(settings.navi_persona, profile, tool_index=index), [])
            system = [m.content or "" for m in head if m.role == "system"]
            specs = split.specs([]) if split is not None else view.specs()
            out[profile.id] = ("\n\n".join(system), specs)
        return out


async def _load_user_tools(registry: ToolRegistry, host: ToolHost, tools_dir: str) -> LoadResult:
    """Load the user tools through the tool host, as the runtime does; only their specs are kept."""
    try:
        return await registry.reload_user_tools(tools_dir)
    finally:
        await host.aclose()


def fixed_prompt(profile_id: str | None = None, *, disclosure: bool = True) -> tuple[str, list[ToolSpec]]:
    """The system text and tool specs one profile (default: the default profile) sends every call."""
    prompts = fixed_prompts(disclosure=disclosure)
    return prompts[profile_id or next(iter(prompts))]


def tool_json(spec: ToolSpec) -> str:
    """A tool as the OpenAI-compatible backend sends it, serialised the way templates print it."""
    return json.dumps(to_openai_tools([spec])[0], ensure_ascii=False)


def count_chars(system_text: str, tool_specs: Sequence[ToolSpec]) -> dict[str, Any]:
    """Characters of the fixed prompt: the system text plus each tool's JSON, with a breakdown."""
    tools = {spec.name: len(tool_json(spec)) for spec in tool_specs}
    return {"total": len(system_text) + sum(tools.values()), "system": len(system_text), "tools": tools}


def _messages(system_text: str | None) -> list[dict[str, str]]:
    head = [{"role": "system", "content": system_text}] if system_text is not None else []
    return [*head, {"role": "user", "content": USER_PROBE}]


class _Counter:
    """Renders a request with the server's chat template and counts the result's tokens."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def __call__(self, system_text: str | None, tools: list[dict[str, Any]]) -> int:
        body: dict[str, Any] = {"messages": _messages(system_text)}
        if tools:
            body["tools"] = tools
        rendered = self.client.post("/apply-template", json=body)
        rendered.raise_for_status()
        prompt = rendered.json()["prompt"]
        tokens = self.client.post("/tokenize", json={"content": prompt, "add_special": True})
        tokens.raise_for_status()
        return len(tokens.json()["tokens"])


def count_tokens(base_url: str, system_text: str, tool_specs: Sequence[ToolSpec]) -> dict[str, Any]:
    """Tokens the fixed prompt adds to a request, by the server's own template and tokenizer.

    `base_url` is llama-server's root (a trailing `/v1` is ignored). `total` is the request with the
    system prompt and tools minus the same request without them. `system` is what the system
    message alone adds; each tool's figure is what leaving that one tool out saves; `tool_framing`
    is the rest of the tools' cost (the template's tool instructions and separators).
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    tools = to_openai_tools(tool_specs)
    with httpx.Client(base_url=root, timeout=60.0) as client:
        count = _Counter(client)
        bare = count(None, [])
        with_all_tools = count(None, tools)
        if tools and with_all_tools == bare:
            raise RuntimeError(
                "the server's chat template ignores tools: start llama-server with --jinja and a "
                "tools-capable --chat-template-file"
            )
        per_tool = {
            spec.name: with_all_tools - count(None, tools[:i] + tools[i + 1 :])
            for i, spec in enumerate(tool_specs)
        }
        full = count(system_text, tools)
        system = count(system_text, []) - bare
    tools_total = with_all_tools - bare
    return {
        "total": full - bare,
        "system": system,
        "tools_total": tools_total,
        "tool_framing": tools_total - sum(per_tool.values()),
        "tools": per_tool,
    }


def report(profile_id: str, system_text: str, specs: Sequence[ToolSpec], url: str | None) -> str:
    """A table: characters (and tokens, when `url` is given) of the whole, the system text, each tool."""
    chars = count_chars(system_text, specs)
    tokens = count_tokens(url, system_text, specs) if url else None
    rows: list[tuple[str, int | str, int | str]] = [
        ("total", chars["total"], tokens["total"] if tokens else f"~{chars['total'] * 2 // 7}"),
        ("system prompt", chars["system"], tokens["system"] if tokens else ""),
    ]
    if tokens:
        rows.append(("all tools", sum(chars["tools"].values()), tokens["tools_total"]))
        rows.append(("tool framing", "", tokens["tool_framing"]))
    rows += [(name, n, tokens["tools"][name] if tokens else "") for name, n in chars["tools"].items()]
    lines = [f"profile {profile_id}: {len(specs)} tools", f"  {'part':<22} {'chars':>7} {'tokens':>7}"]
    lines += [f"  {name:<22} {c:>7} {t:>7}" for name, c, t in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", help="one profile id (default: every built-in profile)")
    parser.add_argument("--url", help="llama-server root URL, for token counts (default: characters only)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--all-schemas", action="store_true", help="every tool with its schema (no progressive disclosure)"
    )
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    prompts = fixed_prompts(disclosure=not args.all_schemas)
    ids = [args.profile] if args.profile else list(prompts)
    if args.json:
        data = {}
        for pid in ids:
            system_text, specs = prompts[pid]
            entry: dict[str, Any] = {"chars": count_chars(system_text, specs)}
            if args.url:
                entry["tokens"] = count_tokens(args.url, system_text, specs)
            data[pid] = entry
        print(json.dumps(data, indent=2))
        return 0
    print("\n\n".join(report(pid, *prompts[pid], args.url) for pid in ids))
    return 0


if __name__ == "__main__":
    sys.exit(main())
