"""Driving one turn: the agent's events published as the run's frames, from its announcement to the
moment the run lets go of its session.

`Driver.drive` runs in the run's own task (a client never owns it). It announces the turn as its
kind is announced (`stream_start`), waits for the answered run it replaces, streams the agent's
events into the run, tells the observers (notifications) each of them, and ends however the turn
ends — with its answer, stopped, or with an `error` frame: then the run is gone from the slots,
its last frame out to other workers, its lease released, and what waits in the session's queue
runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any

import structlog

from navi.agent.engine import Agent
from navi.agent.events import ErrorEvent, StreamEnd, StreamStopped
from navi.agent.said import signed
from navi.agent.turns import Continue, NewMessage, Research, Retry, RunControl, Turn, TurnOptions
from navi.llm.attached import stored
from navi.llm.errors import LLMError
from navi.llm.messages import Message
from navi.llm.meta import MessageMeta
from navi.protocol import RunEvent, StreamStart
from navi.runs import rows
from navi.runs.bus import Bus
from navi.runs.queue import MessageQueue
from navi.runs.run import AgentRun, user_message
from navi.runs.slots import Slots
from navi.sessions.store import SessionNotFound
from navi.telemetry import Telemetry

log = structlog.stdlib.get_logger(__name__)

Observer = Callable[[str, str, RunEvent], None]


@dataclass
class Driver:
    """`next`: told when a session's turn has answered or ended (what waits there runs);
    `background`: where work the turn does not wait for goes; `observers`: told (session id, the
    run's purpose, event) of every event (notifications: navi/push/notifier.py); an observer
    returns at once and never raises."""

    agent: Agent
    slots: Slots
    bus: Bus
    queue: MessageQueue
    telemetry: Telemetry
    next: Callable[[str], None]
    background: Callable[[Coroutine[Any, Any, None]], None]
    observers: list[Observer]

    async def drive(self, run: AgentRun, turn: Turn, options: TurnOptions, previous: AgentRun | None) -> None:
        """The turn, counted as running and traced as one turn."""
        with self.telemetry.turn(run.session_id, run.run_id) as span:
            await self._drive(run, turn, options, previous)
            self.telemetry.turn_ended(span, run.result)

    async def _drive(
        self, run: AgentRun, turn: Turn, options: TurnOptions, previous: AgentRun | None
    ) -> None:
        """Drive the engine's turn, announcing it first as its kind is announced."""
        try:
            on_stored = None
            match turn:
                case NewMessage() | Research():  # published once the message is committed
                    start = StreamStart(message=user_message(_asked(turn)), parent_id=run.branch)

                    def on_stored() -> None:
                        run.publish(start)

                case Retry():
                    failed = await rows.retried_message(self.agent.sessions, run.session_id)
                    run.publish(StreamStart(retry=True, message=failed, parent_id=run.branch))
                case Continue(answer_id=answer_id):  # nothing to store first: acknowledged at once
                    run.publish(StreamStart(message=None, continues=answer_id))
            if previous is not None:
                await previous.finished.wait()
            control = RunControl(
                stop_event=run.stop_event,
                on_stored=on_stored,
                steering=partial(self.queue.take_steering, run.session_id),  # holds no run
            )
            stream = self.agent.run_stream(run.session_id, turn, options, control)
            async for unstamped in stream:
                event = run.publish(unstamped)
                if isinstance(event, StreamEnd) or (isinstance(event, ErrorEvent) and run.result is None):
                    run.result = event
                over = isinstance(event, StreamEnd | StreamStopped)
                if over:  # for the user: a new message stops what is left (post-turn work, a
                    run.answered = True  # stopped turn's last writes) and starts once it is done
                self._observe(run, event)
                if over:
                    self.background(self.slots.answered(run))  # the turn goes on meanwhile
                    self.next(run.session_id)  # what waits runs now
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
            # Gone from the slots at once; the lease follows, after the run's last frame is out to
            # other workers. A start meanwhile takes it over (a lease of this worker that no run of
            # it holds).
            self.slots.ended(run)
            run.close()
            if run.sink is not None:
                with contextlib.suppress(Exception):  # followers elsewhere: the lease's expiry ends it
                    await self.bus.ended(run)
            await self.slots.release(run)
            if not run.answered:  # ended without an answer: what waits runs all the same
                self.next(run.session_id)

    def _observe(self, run: AgentRun, event: RunEvent) -> None:
        for observer in self.observers:
            try:
                observer(run.session_id, run.purpose, event)
            except Exception:
                log.exception("runs.observer_failed", session_id=run.session_id)

    def _end_with(self, run: AgentRun, error: ErrorEvent) -> None:
        """A run that ended on an exception: its error is its result too (a REST caller waiting
        for the answer gets the error, not an empty "stopped")."""
        event = run.publish(error)
        self._observe(run, event)
        if run.result is None:
            run.result = event


def _asked(turn: NewMessage | Research) -> Message:
    """The user's message a turn stores, as `stream_start` announces it (a question to research is
    stored as a message is)."""
    if isinstance(turn, Research):
        user = Message.user(turn.content)
    else:
        meta = MessageMeta(files=stored(turn.files))  # as the stored message holds them
        user = signed(Message.user(turn.content, images=list(turn.images), metadata=meta), turn.sender)
    user.id = turn.message_id
    return user
