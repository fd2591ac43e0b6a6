"""Write-behind persistence for a run: every message is saved as soon as it is complete, in order.

A save may finish while the run goes on (`behind=True`); the next save, or the end of the run,
waits for it. (The user's message is never saved that way: it is committed before the server
acknowledges it, see `Agent._turn`.) What a stopped or failed call produced is kept too, with the
token count it reached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from navi.agent.run import RunState
from navi.llm.chunks import CompletionBuilder
from navi.llm.messages import Message
from navi.llm.tokens import estimate_message_tokens
from navi.sessions.store import SessionStore


class RunWriter:
    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions

    async def save(
        self,
        run: RunState,
        *,
        display: Sequence[Message] = (),
        context: Sequence[Message] = (),
        tokens: int | None = None,
        behind: bool = False,
    ) -> None:
        """Save messages to the run's context and (for stored sessions) the database, in order.

        `behind=True` lets the write finish while the caller goes on; the next save, or the end of
        the run, waits for it.
        """
        run.context.extend(context)
        await self.flush(run)
        if run.persistent and behind:
            run.write = asyncio.create_task(
                self.sessions.append(
                    run.ctx.session_id, display=display, context=context, context_token_count=tokens
                )
            )
        elif run.persistent:
            await self.sessions.append(
                run.ctx.session_id, display=display, context=context, context_token_count=tokens
            )

    @staticmethod
    async def flush(run: RunState) -> None:
        if run.write is not None:
            write, run.write = run.write, None
            await write

    async def save_partial(
        self, run: RunState, builder: CompletionBuilder, *, stopped: bool = False, error: str | None = None
    ) -> None:
        """Keep what a stopped or failed call produced, and the token count it reached.

        The count matters: a long broken answer that is not counted leaves compression asleep and
        the next prompt overflowing.
        """
        text, thinking = "".join(builder.text), "".join(builder.thinking)
        if not text and not thinking:
            await self.flush(run)
            if run.persistent:
                await self.sessions.set_context_tokens(run.ctx.session_id, run.size)
            return
        partial = Message.assistant(text, thinking=thinking or None, stopped=stopped)
        if error:
            partial.metadata.interrupted = error
        if run.continues is not None:  # the rest of a cut-off answer, shown joined to it
            partial.metadata.continues = run.continues
        run.grew(estimate_message_tokens(partial))
        await self.save(run, display=[partial], context=[partial], tokens=run.size)
