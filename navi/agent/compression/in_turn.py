"""Compression inside a turn: before a model call, when the context passed the threshold (at the
start of a turn, only when the answer would not fit: `before_answer`).

The model summarises; for a session whose model wrote no usable summary, or when the prompt no
longer fits the window after a failed summary (`overflowing`), Navi condenses the earlier
conversation itself (`navi.agent.compression.condense`) rather than refusing the message. Past the threshold a
turn compresses once; only a prompt that no longer fits makes it compress again. After the turn,
`CompressionWorker` may compress once more (navi/agent/workers.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from navi.agent.budget import Budget
from navi.agent.compression.compressor import ContextCompressor, Pass, condense_budget, summary_failed
from navi.agent.compression.transcript import partition
from navi.agent.events import AgentEvent, Notice, Status
from navi.agent.persistence import RunWriter
from navi.agent.run import RunState

CONDENSED_NOTICE = (
    "The model could not summarise the earlier conversation, so Navi kept your earlier messages in "
    "short form; every message is still in the history."
)


class TurnCompression:
    def __init__(self, compressor: ContextCompressor, budget: Budget, writer: RunWriter) -> None:
        self.compressor = compressor
        self.budget = budget
        self.writer = writer

    async def _due(self, run: RunState, overflowing: bool) -> bool:
        if not self.compressor.settings.enabled:
            return False
        if not overflowing and (
            run.compression_failed or run.compressed or not self.compressor.needed(run.size, run.window)
        ):
            return False
        # Nothing before the latest request, or nothing a pass could shrink: the fit check decides.
        if not partition(run.context, 0)[0]:
            return False
        return await self.compressor.may_run(run.ctx.session_id, run.context, run.persistent)

    async def before_answer(self, run: RunState) -> AsyncIterator[AgentEvent]:
        """At the start of a turn: compress only a context the answer would not fit in (with all its
        tools and the reply's room). One past the threshold that still fits is answered first and
        compressed after the answer (`CompressionWorker`), while the user reads: the answer reads
        only the new message from the model's cache instead of waiting for a summary and then
        reading the rewritten context (on a CPU, tens of seconds). Raises `CallStopped` on stop."""
        if run.size + self.budget.reserve(run) <= run.window:
            return
        async for event in self.maybe(run):
            yield event

    async def maybe(self, run: RunState, *, overflowing: bool = False) -> AsyncIterator[AgentEvent]:
        """Compress `run`'s context if it is due. Raises `CallStopped` on stop."""
        if not await self._due(run, overflowing):
            return
        condense = overflowing or await self.compressor.unsummarisable(run.ctx.session_id, run.persistent)
        detail = "condensing" if condense else "summarising"
        yield Status(phase="compressing", detail=f"{detail} the earlier conversation")
        await self.writer.flush(run)  # compression rewrites stored rows: earlier writes must be in
        overhead, room = self.budget.overhead(run), run.window - self.budget.reserve(run)
        bare = self.budget.overhead(run, [])  # the fit check may leave every tool out

        def enough(conversation: int) -> bool:  # below the threshold, and (overflowing) fitting
            fits = not overflowing or conversation + bare <= room
            return fits and not self.compressor.needed(overhead + conversation, run.window)

        # Keep the configured number of turns; if that is still too much, one turn; in the end only
        # the latest instruction and its newest tool results.
        outcome = await self.compressor.run_pass(
            run.ctx.session_id,
            run.context,
            run.llm,
            run.model,
            overhead_tokens=overhead,
            persistent=run.persistent,
            plan=Pass(
                condense=condense,
                keeps=[self.compressor.settings.keep_recent, 1, 0],
                budget_tokens=condense_budget(run.window),
                enough=enough,
                disclosed=run.disclosed(),
            ),
        )
        if outcome.done is not None:
            run.context = outcome.done.context
            run.counted(outcome.done.tokens, fixed=self.budget.overhead(run))
            run.compressed = True
            yield outcome.done.event
            if condense:
                yield Notice(message=CONDENSED_NOTICE)
        if outcome.failure is not None:
            run.compression_failed = True  # carry on with the context as it is
            yield summary_failed(outcome.failure)
