"""A run's state, made and bound to a profile: its backend (guarded, bound to the run's stop
event), model, context window, tools, and what the system prompt and tool schemas take.

A tool may switch the run to another profile (`switch_profile`): the run is bound again, and the
next model call uses the new backend, model and tools.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Protocol

from navi import runctx
from navi.agent.budget import Budget
from navi.agent.disclosure import disclose
from navi.agent.run import RunState
from navi.agent.windows import ContextWindows
from navi.llm.base import LLMBackend
from navi.llm.calls import CallLimits, GuardedBackend, stoppable
from navi.llm.messages import Message
from navi.llm.registry import BackendRegistry
from navi.profiles.base import AgentProfile
from navi.profiles.registry import ProfileRegistry
from navi.tools.registry import ToolRegistry, ToolView

REWRITE_WAIT = 120.0  # seconds a turn's read-ahead waits for the memory summary's rewrite
FROZEN_SESSIONS = 2_000  # sessions whose memory snapshot is kept (the least recently used go)


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
        windows: ContextWindows,
        budget: Budget,
        tool_names: Callable[[AgentProfile], list[str]],
        memory: Callable[[str], Awaitable[str | None]],
    ) -> None:
        self.config = config
        self.backends = backends
        self.profiles = profiles
        self.tools = tools
        self.windows = windows
        self.budget = budget
        self.tool_names = tool_names  # the tools a profile's model is offered, by name
        self.memory = memory  # the memory summary of an owner
        # The memory summary each session's system message carries, taken at its first turn here
        # and kept for the session, so later turns send the same prompt prefix (most recent last).
        # With it, how many memory-writing calls the session had made then.
        self.frozen: OrderedDict[str, tuple[str | None, int]] = OrderedDict()
        self.rewrites: dict[str, asyncio.Task[None]] = {}  # memory summaries being rewritten, by owner

    def tool_view(self, profile: AgentProfile) -> ToolView:
        return self.tools.view(self.tool_names(profile))

    def backend(self, profile: AgentProfile, stop: asyncio.Event | None) -> LLMBackend:
        """The profile's backend with the call limits, abandoning its calls on `stop` (never: None)."""
        return GuardedBackend(
            self.backends.observed(self.profiles.backend_of(profile)), self.config.limits, stop
        )

    async def bind(self, run: RunState, profile: AgentProfile) -> None:
        run.profile = profile
        run.llm = self.backend(profile, run.ctx.stop_event)
        run.model = self.profiles.model_of(profile)
        run.window = await self.windows.window(run.llm, run.model)
        view = self.tool_view(profile)
        run.disclosure = disclose(view, profile.core_tools if self.config.tool_disclosure else view.names)
        run.tools = run.disclosure.view
        run.ctx.profile_id = profile.id
        run.tool_costs = {}  # another backend or model may price tools differently
        run.refixed(self.budget.overhead(run))

    async def rebind(self, run: RunState, profile_id: str) -> None:
        await self.bind(run, self.profiles.get(profile_id).for_session(run.profile.session_prompt))

    async def session_memory(
        self, ctx: runctx.RunContext, persistent: bool, context: list[Message]
    ) -> str | None:
        """The memory summary for a run. A stored session's is frozen at its first turn, so memory
        rewritten elsewhere meanwhile (extraction) waits for the next session; it is read again when
        this session changed memory itself (a call to a memory-writing tool since). A subagent's is
        read fresh."""
        if not persistent:
            return await self._read(ctx)
        key = ctx.session_id
        writes = memory_writes(context)
        if key in self.frozen and self.frozen[key][1] == writes:
            self.frozen.move_to_end(key)
            return self.frozen[key][0]
        memory = await self._read(ctx)
        self.frozen[key] = (memory, writes)
        self.frozen.move_to_end(key)
        while len(self.frozen) > FROZEN_SESSIONS:
            self.frozen.popitem(last=False)
        return memory

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
        key = run.ctx.session_id
        frozen = self.frozen.get(key)
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
