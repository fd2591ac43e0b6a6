"""Building a real runtime around the scripted backend, and collecting a run's events."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from navi.agent.events import AgentEvent
from navi.compose import Runtime, build_runtime
from navi.config import load_settings
from navi.llm.registry import BackendRegistry
from navi.sessions.memory_store import InMemorySessionStore
from navi.telemetry import Telemetry
from navi.testing.agent_script import AgentScript
from navi.testing.scripted import ScriptedBackend

MODEL = "gemma4:e2b-it-q8_0"


# A 4,096-token window that compresses after a couple of turns, keeping only the latest one.
EARLY_COMPRESSION: dict[str, Any] = {
    "planning_enabled": False,
    "context_length": 4096,
    "context_keep_recent": 1,
    "context_compression_threshold": 0.3,
}


async def scripted_runtime(
    tmp_path: Path,
    script: AgentScript | None = None,
    *,
    sql: bool = False,
    telemetry: Telemetry | None = None,
    **settings: Any,
) -> tuple[Runtime, ScriptedBackend, AgentScript]:
    script = script or AgentScript()
    if "context_length" in settings:  # a model with a small window: Navi's window follows it
        settings.setdefault("ollama_num_ctx", settings["context_length"])
    backend = ScriptedBackend(script, context_length=settings.pop("context_length", 131072))
    registry = BackendRegistry()
    registry.register_instance("ollama", backend, default_model=MODEL)
    base: dict[str, Any] = {
        "db_path": str(tmp_path / "navi.db"),
        "session_files_dir": str(tmp_path / "files"),
        "tools_dir": str(tmp_path / "tools"),
        "skills_dir": str(tmp_path / "skills"),
        "navi_browser_profiles_dir": str(tmp_path / "browser_profiles"),
        # No person answers approvals in these tests; approval tests ask for their mode.
        "navi_approval_mode": "auto",
    }
    base.update(settings)
    rt = await build_runtime(
        load_settings(**base),
        backends=registry,
        sessions=None if sql else InMemorySessionStore(),
        telemetry=telemetry,
    )
    return rt, backend, script


async def collect(stream: Any) -> list[AgentEvent]:
    return [event async for event in stream]


def types(events: Sequence[AgentEvent], *, status: bool = False) -> list[str]:
    """Event types with runs of the same delta type collapsed to one entry.

    `status` events (what Navi is doing while no token flows) are left out unless asked for, so
    the reference sequences read as the reference writes them.
    """
    out: list[str] = []
    for e in events:
        if e.type == "status" and not status:
            continue
        if e.type in ("thinking_delta", "stream_delta") and out and out[-1] == e.type:
            continue
        out.append(e.type)
    return out
