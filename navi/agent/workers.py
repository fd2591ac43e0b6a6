"""Post-turn workers: compression (the compressor is navi/agent/compression/), naming, warming.

Workers run one after another once a turn has ended (`stream_end` already sent). Each gets a
`WorkerContext` and returns events to send. A failing worker is logged and skipped: the turn is
already safe in the database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from navi.agent.compression.compressor import (
    ContextCompressor,
    Pass,
    condense_budget,
    summary_failed,
)
from navi.agent.compression.continued import ConversationPrompt
from navi.agent.events import AgentEvent
from navi.agent.naming import name_session
from navi.agent.run import RunState
from navi.llm.base import LLMBackend
from navi.llm.calls import CallStopped
from navi.llm.messages import Message
from navi.logging import get_logger
from navi.sessions.store import SessionStore

log = get_logger(__name__)


async def _nothing() -> None:
    return None


@dataclass
class WorkerContext:
    session_id: str
    llm: LLMBackend  # bound to the run: stopping the run abandons calls made through it
    detached_llm: LLMBackend  # for work that outlives the run (naming in the background)
    model: str
    window: int
    context: list[Message]
    context_tokens: int
    overhead_tokens: int
    persistent: bool
    needs_name: bool = False  # the session has no name yet (its first turn, or earlier ones failed)
    user_text: str = ""
    answer: str = ""
    compressed: bool = False  # the turn compressed its context already
    disclosed: list[str] = field(default_factory=list)  # the tools the context disclosed
    # The next answer's prompt as the model server holds it cached (None where nothing is cached).
    cached_prompt: Callable[[], Awaitable[ConversationPrompt | None]] = lambda: _nothing()
    # Schedule work that must not hold the run open (the run ends when the workers return).
    background: Callable[[Coroutine[Any, Any, Any]], object] = lambda coro: coro.close()


@dataclass
class WorkerResult:
    events: list[AgentEvent] = field(default_factory=list)
    context: list[Message] | None = None
    context_tokens: int | None = None


class Worker(Protocol):
    name: str

    async def run(self, wctx: WorkerContext) -> WorkerResult: ...


@dataclass(frozen=True, kw_only=True)
class EndedTurn:
    """What the engine knows of an ended turn beyond its run: a backend for work that outlives the
    run, the prompt's fixed overhead in tokens, whether the session still needs a name, what the
    user wrote, and where to schedule work that must not hold the run open."""

    detached_llm: LLMBackend
    overhead_tokens: int
    needs_name: bool
    user_text: str
    background: Callable[[Coroutine[Any, Any, Any]], object]


async def after_turn(
    workers: Sequence[Worker],
    run: RunState,
    turn: EndedTurn,
    *,
    warm: Callable[[RunState, bool], Awaitable[None]] | None = None,
    cached_prompt: Callable[[RunState], Awaitable[ConversationPrompt | None]] | None = None,
) -> AsyncIterator[AgentEvent]:
    """Run the workers in order once `run`'s turn has ended, each on the context the one before
    left (which becomes the run's). Then `warm` has the model server read the next answer's
    prompt ahead of it if it changed (`Loop.warm`; told whether the workers rewrote the context).
    `cached_prompt` tells a worker the prompt the server holds after the answer (`Loop.cached_prompt`).

    `stream_end` is already out; a new message from the user stops the run, which skips the rest
    (see RunManager.start). A worker abandoned on stop, or failing, is logged and the next one
    runs: post-turn work is best effort, the turn is saved.
    """
    context = run.context
    wctx = WorkerContext(
        session_id=run.ctx.session_id,
        llm=run.llm,
        detached_llm=turn.detached_llm,
        model=run.model,
        window=run.window,
        context=run.context,
        context_tokens=run.size,
        overhead_tokens=turn.overhead_tokens,
        persistent=run.persistent,
        needs_name=turn.needs_name,
        user_text=turn.user_text,
        answer=run.final_text,
        compressed=run.compressed,
        disclosed=run.disclosed(),
        background=turn.background,
    )
    if cached_prompt is not None:
        wctx.cached_prompt = lambda: cached_prompt(run)
    for worker in workers:
        if run.ctx.stopped:
            log.info("worker.skipped", worker=worker.name, reason="stopped")
            continue
        try:
            result = await worker.run(wctx)
        except CallStopped:
            log.info("worker.abandoned", worker=worker.name)
            continue
        except Exception as exc:
            log.warning("worker.failed", worker=worker.name, error=str(exc))
            continue
        if result.context is not None:
            wctx.context = run.context = result.context
        if result.context_tokens is not None:
            wctx.context_tokens = result.context_tokens
            run.counted(result.context_tokens)
        for event in result.events:
            yield event
    if warm is not None and not run.ctx.stopped:
        try:
            await warm(run, wctx.context is not context)
        except CallStopped:
            log.info("turn.warm_abandoned")
        except Exception as exc:  # best effort: the next turn reads the prompt itself
            log.warning("turn.warm_failed", error=str(exc))


class CompressionWorker:
    name = "compression"

    def __init__(self, compressor: ContextCompressor) -> None:
        self.compressor = compressor

    async def run(self, wctx: WorkerContext) -> WorkerResult:
        """Compress once the answer took the context past the threshold, unless the turn has
        compressed already (at most one `context_compressed` a turn: the next turn can).

        Keeps the configured number of turns, or only the turn just answered when that is not
        enough (or there are fewer turns than that, as in a small window): done here, while the
        user reads the answer, rather than at the start of the next turn, which would wait for it.
        Where the model server keeps the answer's prompt cached, the summary is asked for at its
        end (navi/agent/compression/continued.py): the server reads only the instruction.
        """
        if wctx.compressed or not self.compressor.needed(wctx.context_tokens, wctx.window):
            return WorkerResult()
        compressor, overhead, window = self.compressor, wctx.overhead_tokens, wctx.window
        condense = await compressor.unsummarisable(wctx.session_id, wctx.persistent)
        outcome = await compressor.run_pass(
            wctx.session_id,
            wctx.context,
            wctx.llm,
            wctx.model,
            overhead_tokens=overhead,
            persistent=wctx.persistent,
            plan=Pass(
                condense=condense,
                keeps=[compressor.settings.keep_recent, 1],
                budget_tokens=condense_budget(window),
                enough=lambda conversation: not compressor.needed(overhead + conversation, window),
                disclosed=wctx.disclosed,
                prompt=None if condense else await wctx.cached_prompt(),
            ),
        )
        events: list[AgentEvent] = [summary_failed(outcome.failure)] if outcome.failure else []
        if outcome.done is None:
            return WorkerResult(events=events)
        done = outcome.done
        return WorkerResult(events=[done.event, *events], context=done.context, context_tokens=done.tokens)


class NamingWorker:
    name = "naming"

    def __init__(self, sessions: SessionStore, max_tokens: int = 24) -> None:
        self.sessions = sessions
        self.max_tokens = max_tokens

    async def run(self, wctx: WorkerContext) -> WorkerResult:
        """Names the session in the background: the user can send the next message meanwhile.

        Runs after every successful turn of a session that has no name yet (a first turn that
        failed or was stopped names nothing), and names it after the conversation's first message:
        what it is about, whichever turn first answered.
        """
        if wctx.needs_name and wctx.persistent:
            wctx.background(self._name(wctx))
        return WorkerResult()

    async def _name(self, wctx: WorkerContext) -> None:
        first = next(
            (
                m.content
                for m in wctx.context
                if m.role == "user" and not (m.is_summary or m.metadata.synthetic)
            ),
            None,
        )
        # This turn's answer goes with its own question only.
        asked, answer = (first, "") if first and first != wctx.user_text else (wctx.user_text, wctx.answer)
        title = await name_session(wctx.detached_llm, wctx.model, asked, answer, max_tokens=self.max_tokens)
        # Only if still unnamed, in one step: the user may have named it while the title was written.
        await self.sessions.name_if_unnamed(wctx.session_id, title)
