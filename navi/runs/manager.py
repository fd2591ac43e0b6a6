"""The run manager: at most one agent run per session, broadcast to every connected client.

`stream_start` carries the user's message, so every window on the session can draw it, and
acknowledges it: it goes out only once the engine has committed the message, so a message a client
saw acknowledged survives a crash (kill -9, power loss) of the server. Each frame is kept until the
run ends (`run.py`), so a client that connects mid-run replays it. A run does not depend on any client: it
goes on when all of them leave, and its messages are saved as they complete. Stop is the run's
stop event; a run task is never cancelled. When a run ends it is removed, with its frames.

Once a run has answered (`stream_end`), what is left is post-turn work (a summary, naming). A new
message does not wait for it: starting the next run stops the answered one, whose post-turn work
is abandoned at once, and the new run begins when the old one has let go of the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import structlog

from navi.agent.approvals import Decision
from navi.agent.engine import Agent
from navi.agent.events import ErrorEvent, StreamEnd
from navi.agent.gate import ApprovalNotFound
from navi.llm.errors import LLMError
from navi.llm.messages import Message, new_id
from navi.llm.tokens import estimate_messages_tokens
from navi.runctx import Unattended
from navi.runs.feed import SessionFeed
from navi.runs.leases import Lease, LeaseKind, Leases, MemoryLeases, sleep_beat
from navi.runs.lost import record_lost
from navi.runs.run import AgentRun, RunActive, user_message
from navi.sessions.store import SessionNotFound

log = structlog.stdlib.get_logger(__name__)


class RunManager:
    """`leases`: where a session's lease is taken before a run starts in it — a database row
    (`SqlLeases`) every process on the database sees, or this process's memory (the default)."""

    def __init__(self, agent: Agent, leases: Leases | None = None) -> None:
        self.agent = agent
        self.leases: Leases = leases or MemoryLeases()
        self.feed = SessionFeed(agent.sessions)  # session_updated frames for every connection
        self._runs: dict[str, AgentRun] = {}
        self._watchers: dict[str, set[Callable[[AgentRun], None]]] = {}
        self._keeper: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Look after this worker's leases from now on: renew them, and clean up after workers
        that are gone (their unanswered turns fail with `worker_lost`). Once at once, so a Navi
        started again after a crash finds the sessions its predecessor held free."""
        await self._tend()
        self._keeper = asyncio.create_task(self._keep())

    async def _keep(self) -> None:
        while True:
            await sleep_beat(self.leases)
            await self._tend()

    async def _tend(self) -> None:
        try:
            await self.leases.renew()
            for lease in await self.leases.expired():
                await self._recover(lease)
        except Exception as exc:  # a database hiccup: the next beat tries again
            log.warning("runs.leases_unreachable", error=str(exc))

    async def _recover(self, lease: Lease) -> bool:
        """Free the session of a run whose worker is gone (once, whoever gets there first); a
        turn it had not answered is recorded as failed with `worker_lost`, so Retry offers it."""
        if not await self.leases.take(lease):
            return False
        log.warning("runs.worker_lost", session_id=lease.session_id, run_id=lease.run_id, worker=lease.worker)
        if lease.kind == "turn" and not lease.answered:
            with contextlib.suppress(SessionNotFound):
                await record_lost(self.agent.sessions, lease.session_id)
        return True

    async def _take(
        self, session_id: str, run_id: str, kind: LeaseKind, replacing: str | None = None
    ) -> None:
        """Take the session's lease for `run_id`, or raise `RunActive`. A lease left by a worker
        that is gone is recovered first."""
        if await self.leases.acquire(session_id, run_id, kind, replacing=replacing) is not None:
            return
        holder = await self.leases.holder(session_id)
        if (
            holder is not None
            and holder.worker != self.leases.worker
            and await self._recover(holder)
            and await self.leases.acquire(session_id, run_id, kind) is not None
        ):
            return
        raise RunActive(session_id)

    def watch(self, session_id: str, callback: Callable[[AgentRun], None]) -> None:
        """Call `callback(run)` whenever a run starts in this session (each connected client)."""
        self._watchers.setdefault(session_id, set()).add(callback)

    def unwatch(self, session_id: str, callback: Callable[[AgentRun], None]) -> None:
        watchers = self._watchers.get(session_id)
        if watchers is not None:
            watchers.discard(callback)
            if not watchers:
                del self._watchers[session_id]

    def watchers(self, session_id: str) -> int:
        """How many clients watch this session: each open connection once, none after it closed."""
        return len(self._watchers.get(session_id, ()))

    def get(self, session_id: str) -> AgentRun | None:
        return self._runs.get(session_id)

    def active(self) -> list[str]:
        return list(self._runs)

    async def start(
        self,
        session_id: str,
        content: str,
        images: Sequence[str] = (),
        files: Sequence[dict[str, str]] = (),
        *,
        planning: bool = True,
        retry: bool = False,
        unattended: Unattended | None = None,
    ) -> AgentRun:
        """Start a run (raises `RunActive` if the session has one). Returns immediately.

        A run that has already answered does not count as busy: it is stopped, and the new run
        starts once it has finished. `retry=True` runs the session's latest failed turn again
        without storing its message twice (`content` is ignored); its `stream_start` names the
        stored message and carries `retry: true`. `unattended`: nobody can answer approvals
        during this run ("deny" or "allow" them at once).
        """
        previous = self._runs.get(session_id)
        if previous is not None and not previous.answered:
            raise RunActive(session_id)
        run = AgentRun(session_id=session_id)
        self._runs[session_id] = run  # held here while the lease is taken: a second start is busy
        try:
            await self._take(session_id, run.run_id, "turn", previous.run_id if previous else None)
        except BaseException:
            self._give_back(session_id, run, previous)
            raise
        if previous is not None:
            previous.stop_event.set()
        message_id = new_id()
        start: dict[str, Any] | None = None
        if not retry:  # published by the engine's `on_stored`, once the message is committed
            user = Message.user(content, images=list(images), metadata={"files": list(files)})
            user.id = message_id
            start = {"type": "stream_start", "message": user_message(user)}
        run.task = asyncio.create_task(
            self._drive(
                run, content, list(images), list(files), planning, previous, message_id, start, unattended
            )
        )
        for callback in list(self._watchers.get(session_id, ())):
            callback(run)
        return run

    async def append(self, session_id: str, messages: Sequence[Message]) -> None:
        """Store messages in the session without answering them (`"respond": false`).

        Refused with `RunActive` while a turn is answering: rows written mid-turn would land between
        the turn's own (a tool call and its result). An answered run's post-turn work is stopped
        first, as a new message does, since a summary rewrites the context it read before. While the
        messages are written, the session's slot is held, so no turn starts in between.
        """
        previous = self._runs.get(session_id)
        if previous is not None and not previous.answered:
            raise RunActive(session_id)
        holder = AgentRun(session_id=session_id)
        self._runs[session_id] = holder
        try:
            await self._take(session_id, holder.run_id, "store", previous.run_id if previous else None)
        except BaseException:
            self._give_back(session_id, holder, previous)
            raise
        try:
            if previous is not None:
                previous.stop_event.set()
                await previous.finished.wait()
            session = await self.agent.sessions.get(session_id, display=False)
            if session is None:
                raise SessionNotFound(session_id)
            # A count the engine trusts must include what is added; none yet: the engine estimates.
            tokens = session.context_token_count
            counted = tokens + estimate_messages_tokens(messages) if tokens else None
            await self.agent.sessions.append(
                session_id, display=messages, context=messages, context_token_count=counted
            )
        finally:
            await self._release(holder)
            if self._runs.get(session_id) is holder:
                del self._runs[session_id]
            holder.finished.set()
            holder.settled.set()

    def _give_back(self, session_id: str, run: AgentRun, previous: AgentRun | None) -> None:
        """A start that could not take the lease leaves the session as it found it."""
        if self._runs.get(session_id) is run:
            if previous is not None and not previous.finished.is_set():
                self._runs[session_id] = previous
            else:
                del self._runs[session_id]

    async def _release(self, run: AgentRun) -> None:
        try:
            await self.leases.release(run.session_id, run.run_id)
        except Exception as exc:  # it expires on its own once this worker stops renewing it
            log.warning("runs.lease_not_released", session_id=run.session_id, error=str(exc))

    def approve(self, session_id: str, call_id: str, decision: Decision) -> None:
        """Answer the approval a run of this session waits on (`approval_resolved` follows as a
        run frame, so every client sees it answered); `ApprovalNotFound` when none waits."""
        if self.agent.approvals is None:
            raise ApprovalNotFound(session_id, call_id)
        self.agent.approvals.answer(session_id, call_id, decision)

    def waiting(self, session_id: str) -> list[dict[str, Any]]:
        """The approvals a run of this session waits on, as `approval_required` describes them."""
        if self.agent.approvals is None:
            return []
        return [p.view() for p in self.agent.approvals.waiting(session_id)]

    def stop(self, session_id: str) -> bool:
        run = self._runs.get(session_id)
        if run is None:
            return False
        run.stop_event.set()
        return True

    async def _drive(
        self,
        run: AgentRun,
        content: str,
        images: list[str],
        files: list[dict[str, str]],
        planning: bool,
        previous: AgentRun | None = None,
        message_id: str | None = None,
        start: dict[str, Any] | None = None,
        unattended: Unattended | None = None,
    ) -> None:
        """Drive the engine's turn. `start` is the new message's `stream_start` (None: a retry,
        whose message is stored already)."""
        retry = start is None
        try:
            if retry:
                run.publish({"type": "stream_start", "retry": True, "message": await self._failed(run)})
            if previous is not None:
                await previous.finished.wait()
            stream = self.agent.run_stream(
                run.session_id,
                content,
                images,
                files,
                stop_event=run.stop_event,
                planning=planning,
                message_id=message_id,
                retry=retry,
                on_stored=None if start is None else (lambda: run.publish(start)),
                unattended=unattended,
            )
            async for event in stream:
                frame = event.frame()
                if isinstance(event, StreamEnd) or (isinstance(event, ErrorEvent) and run.result is None):
                    run.result = frame
                run.publish(frame)
                if isinstance(event, StreamEnd):
                    run.answered = True
                    await self._answered(run)
                if run.result is not None:
                    run.settled.set()
        except SessionNotFound:
            self._end_with(
                run,
                ErrorEvent(message=f"session {run.session_id} no longer exists", code="session_not_found"),
            )
        except LLMError as exc:
            self._end_with(run, ErrorEvent.of(exc))
        except Exception as exc:  # the run must always end with a frame and free its slot
            log.exception("run.crashed", session_id=run.session_id)
            self._end_with(run, ErrorEvent(message=f"internal error: {type(exc).__name__}: {exc}"))
        finally:
            await self._release(run)
            if self._runs.get(run.session_id) is run:
                del self._runs[run.session_id]
            run.close()

    async def _answered(self, run: AgentRun) -> None:
        try:
            await self.leases.answered(run.session_id, run.run_id)
        except Exception as exc:  # other workers take it as still answering: busy a little longer
            log.warning("runs.lease_not_marked", session_id=run.session_id, error=str(exc))

    @staticmethod
    def _end_with(run: AgentRun, error: ErrorEvent) -> None:
        """A run that ended on an exception: its error is its result too (a REST caller waiting
        for the answer gets the error, not an empty "stopped")."""
        frame = error.frame()
        run.publish(frame)
        if run.result is None:
            run.result = frame

    async def _failed(self, run: AgentRun) -> dict[str, Any] | None:
        """The user message of the session's latest failed turn (None if there is none: the
        engine then says there is nothing to retry)."""
        session = await self.agent.sessions.get(run.session_id)
        if session is None or not session.messages or not session.messages[-1].metadata.get("error"):
            return None
        wanted = session.messages[-1].metadata.get("failed_turn")
        for message in reversed(session.messages):
            if message.role == "user" and (message.id == wanted or wanted is None):
                return user_message(message)
        return None

    async def wait(self, session_id: str, limit: float | None = None) -> None:
        run = self._runs.get(session_id)
        if run is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.finished.wait(), limit)

    async def shutdown(self, grace: float = 10.0) -> None:
        """Stop every run cooperatively and wait for them to save what they have (each lets go of
        its lease as it ends); stop looking after the leases."""
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
            self._keeper = None
        for run in list(self._runs.values()):
            run.stop_event.set()
        tasks = [r.task for r in self._runs.values() if r.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
