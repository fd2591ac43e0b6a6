"""A run's state, made and bound to a profile: its backend (guarded, bound to the run's stop
event), model, context window, tools, and what the system prompt and tool schemas take.

A tool may switch the run to another profile (`switch_profile`): the run is bound again, and the
next model call uses the new backend, model and tools.

A stored session's memory snapshot — the memory summary its system message carries — is taken once
and stored with the session (navi/sessions/state.py), not read afresh each turn: the prompt's
bytes stay the same from turn to turn, on whichever worker the turn runs, so the model server's
prompt cache keeps serving it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Protocol

from navi import runctx
from navi.agent.budget import Budget
from navi.agent.disclosure import Disclosure, disclose
from navi.agent.run import RunState
from navi.agent.windows import ContextWindows
from navi.llm.base import LLMBackend
from navi.llm.calls import CallLimits, bound, stoppable
from navi.llm.messages import Message
from navi.llm.registry import BackendRegistry
from navi.logging import get_logger
from navi.profiles.base import AgentProfile
from navi.profiles.registry import ProfileRegistry
from navi.sessions.models import DEFAULT_OWNER
from navi.sessions.state import MEMORY, InMemorySessionStateStore, SessionStateStore
from navi.tools.registry import ToolRegistry, ToolView

log = get_logger(__name__)

USE_SKILL = "use_skill"  # the tool the skills listing points to (navi/tools/builtin/skills.py)

REWRITE_WAIT = 120.0  # seconds a turn's read-ahead waits for the memory summary's rewrite


def writes_memory(tool: str) -> bool:
    """Whether a tool changes long-term memory (`memory_forget`, `remember`, any `memory_*` but search)."""
    return tool in ("remember", "forget") or (tool.startswith("memory_") and tool != "memory_search")


def memory_writes(context: list[Message]) -> int:
    return sum(1 for m in context for c in m.tool_calls or () if writes_memory(c.name))


class BindingConfig(Protocol):
    num_ctx: int
    limits: CallLimits
    tool_disclosure: bool


class RunBinder:
    def __init__(
        self,
        config: BindingConfig,
        *,
        backends: BackendRegistry,
        profiles: ProfileRegistry,
        tools: ToolRegistry,
        budget: Budget,
        tool_names: Callable[[AgentProfile], list[str]],
        memory: Callable[[str], Awaitable[str | None]],
        state: SessionStateStore | None = None,
    ) -> None:
        """`budget` brings the context windows (`budget.windows`) the runs are bound to."""
        self.config = config
        self.backends = backends
        self.profiles = profiles
        self.tools = tools
        self.budget = budget
        self.windows: ContextWindows = budget.windows
        self.tool_names = tool_names  # the tools a profile's model is offered, by name
        # An owner's skills listing (navi/skills/): none until the composition root sets the library's.
        self.skills: Callable[[str], str | None] = lambda _owner: None
        self.memory = memory  # the memory summary of an owner
        # The model an owner picked for a built-in profile, by (owner, profile id): set by the agent.
        self.picked_model: Callable[[str, str], Awaitable[str]] | None = None
        # Where stored sessions keep their memory snapshot (`MEMORY`): the memory summary their
        # system message carries, taken at their first turn and kept, so later turns send the same
        # prompt prefix, and how many memory-writing calls the session had made then.
        self.state = state if state is not None else InMemorySessionStateStore()
        self.rewrites: dict[str, asyncio.Task[None]] = {}  # memory summaries being rewritten, by owner

    def tool_view(self, profile: AgentProfile) -> ToolView:
        return self.tools.view(self.tool_names(profile))

    def backend(self, profile: AgentProfile, stop: asyncio.Event | None) -> LLMBackend:
        """The profile's backend with the call limits, abandoning its calls on `stop` (never: None)."""
        return bound(self.backends.observed(self.profiles.backend_of(profile)), self.config.limits, stop)

    async def bind(self, run: RunState, profile: AgentProfile) -> None:
        run.profile = profile
        run.llm = self.backend(profile, run.ctx.stop_event)
        run.model = self.profiles.model_of(profile)
        run.window = await self.windows.window(run.llm, run.model)
        view = self.tool_view(profile)
        run.disclosure = disclose(view, profile.core_tools if self.config.tool_disclosure else view.names)
        run.tools = run.disclosure.view
        run.skills = self.skills(run.ctx.owner) if USE_SKILL in view else None
        run.ctx.profile_id = profile.id
        run.ctx.browser_profile = profile.browser_profile
        run.tool_costs = {}  # another backend or model may price tools differently
        run.refixed(self.budget.overhead(run))

    def tool_index(self, split: Disclosure, owner: str) -> str | None:
        """The listing of tools sent without schemas, then `owner`'s skills (empty: the owner's)."""
        skills = self.skills(owner or DEFAULT_OWNER) if USE_SKILL in split.view else None
        return "\n\n".join(p for p in (split.index_text, skills) if p) or None

    async def owners_model(self, owner: str, profile: AgentProfile) -> str:
        """The model `owner` picked for a built-in `profile` ("backend:model"; "": none). A profile of
        one's own has its model in itself."""
        if self.picked_model is None or profile.owner is not None:
            return ""
        return await self.picked_model(owner or DEFAULT_OWNER, profile.id)

    async def rebind(self, run: RunState, profile_id: str) -> None:
        """`run` switched to another profile: its model, the one the run's owner picked for it if any."""
        profile = self.profiles.get(profile_id)
        picked = profile.with_model(await self.owners_model(run.ctx.owner, profile))
        await self.bind(run, picked.with_layers_of(run.profile))

    async def session_memory(
        self, ctx: runctx.RunContext, persistent: bool, context: list[Message]
    ) -> str | None:
        """The memory summary for a run. A stored session's is frozen at its first turn, so memory
        rewritten elsewhere meanwhile (extraction) waits for the next session; it is read again when
        this session changed memory itself (a call to a memory-writing tool since). A subagent's is
        read fresh."""
        if not persistent:
            return await self._read(ctx)
        writes = memory_writes(context)
        frozen = await self.frozen(ctx.session_id)
        if frozen is not None and frozen[1] == writes:
            return frozen[0]
        memory = await self._read(ctx)
        try:
            await self.state.put(ctx.session_id, MEMORY, {"summary": memory, "writes": writes})
        except Exception as exc:  # the session was deleted meanwhile: the turn goes on without it
            log.warning("memory.snapshot_not_stored", session_id=ctx.session_id, error=str(exc))
        return memory

    async def frozen(self, session_id: str) -> tuple[str | None, int] | None:
        """The stored session's memory snapshot: the summary, and the memory writes counted then."""
        snapshot = await self.state.get(session_id, MEMORY)
        return None if snapshot is None else (snapshot["summary"], snapshot["writes"])

    async def _read(self, ctx: runctx.RunContext) -> str | None:
        """The owner's memory summary, once a rewrite under way (after `remember` or `memory_forget`) is
        done: read before it, the old summary would be frozen into the session with the write
        already counted, and a forgotten fact would stay in its prompt (a stop abandons the wait,
        not the rewrite)."""
        pending = self.rewrites.get(ctx.owner)
        if pending is not None:
            with contextlib.suppress(TimeoutError):  # then whatever is there is read
                await stoppable(asyncio.shield(pending), ctx.stop_event, REWRITE_WAIT)
        return await self.memory(ctx.owner)

    def rewriting(self, owner: str, task: asyncio.Task[None]) -> None:
        """`task` rewrites `owner`'s memory summary (after `remember` or `memory_forget`)."""
        self.rewrites[owner] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self.rewrites.get(owner) is finished:
                del self.rewrites[owner]

        task.add_done_callback(done)

    async def next_memory(self, run: RunState) -> bool:
        """After a turn: the memory summary the session's next turn will read, into `run.memory`
        (True when it changed). When the session changed memory itself, its next turn reads the
        summary again, once rewritten (`_read`), so the prompt read ahead (`Loop.warm`) is the one
        the next turn sends."""
        if not run.persistent:
            return False
        frozen = await self.frozen(run.ctx.session_id)
        if frozen is not None and frozen[1] == memory_writes(run.context):
            return False
        memory = await self.session_memory(run.ctx, run.persistent, run.context)
        changed, run.memory = memory != run.memory, memory
        return changed

    async def new_run(
        self,
        ctx: runctx.RunContext,
        profile: AgentProfile,
        context: list[Message],
        *,
        persistent: bool,
        stream: bool,
    ) -> RunState:
        memory = await self.session_memory(ctx, persistent, context)
        run = RunState(
            ctx=ctx,
            profile=profile,
            llm=self.backend(profile, ctx.stop_event),
            model="",
            window=self.config.num_ctx,
            tools=ToolView([]),
            context=context,
            persistent=persistent,
            stream=stream,
            memory=memory,
        )
        await self.bind(run, profile)
        return run
