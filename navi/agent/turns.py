"""What a turn is, built once at the edge that received it.

Every edge — the WebSocket, REST, the OpenAI-compatible API, MCP, channels, schedules, background
jobs, the tree's edit and regenerate — turns what it received into one `Turn` and hands it to the
run manager (navi/runs/manager.py), which hands it to the agent (navi/agent/engine.py); each picks
its kind with one `match`. How the turn runs (planning, who may be asked, the branch it starts, what
it is for) travels beside it in `TurnOptions`; what the run manager lends the agent for the run
(its stop, the moment the message is stored, the steering messages) in `RunControl`.

Adding a kind of turn (docs/architecture.md has the recipe): a class here and in the `Turn` union,
its parser at the edge that receives it, and one arm in `Agent._turn_of` (or in the run manager, for
a turn resolved before the agent sees it, as `FromQueue`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import MISSING

from navi.agent.said import user_message
from navi.llm.attached import AttachedFile
from navi.llm.messages import new_id
from navi.protocol import Sender
from navi.runctx import Unattended


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to answer: stored first (under `message_id`), then answered."""

    content: str
    images: Sequence[str] = ()
    files: Sequence[AttachedFile] = ()  # uploads of the session (navi/llm/attached.py)
    sender: Sender | None = None  # who sent it, from where (stored with it, never sent to the model)
    message_id: str = field(default_factory=new_id)


@dataclass(frozen=True, slots=True)
class Retry:
    """The session's latest failed turn again, on its stored message (nothing stored twice)."""


@dataclass(frozen=True, slots=True)
class Continue:
    """Go on with the answer `answer_id`, which the token cap cut off (no message is stored)."""

    answer_id: str


@dataclass(frozen=True, slots=True)
class FromQueue:
    """The first message waiting in the session's queue, taken once the session is the run's (the
    run manager makes it a `NewMessage` before the agent sees it)."""


@dataclass(frozen=True, slots=True)
class Research:
    """A question to research (a background job's `research` mode, navi/agent/research/): stored as
    the user's message, then answered by the research loop — plan, read, notes, a cited report —
    instead of the tool loop."""

    content: str
    message_id: str = field(default_factory=new_id)


Turn = NewMessage | Retry | Continue | FromQueue | Research


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """How a turn runs, chosen by the edge that received it."""

    planning: bool = True  # False: no planning phase (the REST endpoint's non-streaming turns)
    unattended: Unattended | None = None  # nobody can be asked: approvals settled at once
    # The branch point an edit or a regeneration moved the session to (navi/runs/branching.py),
    # named in `stream_start`; MISSING for a turn on the active branch.
    branch: str | MISSING | None = MISSING
    purpose: str = "answer"  # what the run is for, told to its observers (`AgentRun.purpose`)


DEFAULT_OPTIONS = TurnOptions()  # a turn as a person's message runs: planned, approvals asked


class Steering(Protocol):
    """A message the user sent to steer a running turn (navi/runs/queue.py keeps them)."""

    @property
    def message_id(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def images(self) -> list[str]: ...
    @property
    def files(self) -> Sequence[AttachedFile]: ...
    @property
    def sender(self) -> Sender | None: ...


@dataclass(slots=True)
class RunControl:
    """What the run manager lends the agent for one run."""

    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    # Called once the user's message is committed, before any event: the server acknowledges the
    # message (`stream_start`) only then, so an acknowledged message survives a crash.
    on_stored: Callable[[], None] | None = None
    # The messages sent to steer this turn since it was last called (each once); they join the turn
    # before its next model call.
    steering: Callable[[], Awaitable[Sequence[Steering]]] | None = None


def steered(source: Callable[[], Awaitable[Sequence[Steering]]]) -> Callable[[], Awaitable[list[Any]]]:
    """The run's steering messages as user messages, marked `steered`, for its next model call."""

    async def messages() -> list[Any]:
        said = []
        for item in await source():
            user = user_message(item.content, item.images, item.files, item.message_id, item.sender)
            user.metadata.steered = True
            said.append(user)
        return said

    return messages


def as_turn(turn: Turn | str) -> Turn:
    """A plain string is a new message: the shorthand of scripts and tests."""
    return NewMessage(turn) if isinstance(turn, str) else turn
