"""How runs reach other processes: their frames, their starts, and the control messages sent to them.

`RunManager` runs turns and delivers their frames to this process's followers itself; a `Bus`
carries what must cross processes:

- `LocalBus` carries nothing. With SQLite (one `navi serve`, maybe a `navi mcp` beside it) a run
  is followed only through the process that runs it; the session's lease, a database row, is what
  the processes share (`leases.py`).
- `PgBus` (`pg.py`) appends every frame to the `run_events` table and announces it with NOTIFY,
  so a connection on any worker follows any run live and replays it after a reconnect; control
  messages (stop, an approval's answer, "an answer to a question is stored") go by NOTIFY to the
  worker that runs the turn; waiting approvals and MCP servers' questions are rows any worker can
  answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from navi.runs.leases import Lease
from navi.runs.run import AgentRun


class Handlers(Protocol):
    """What a bus tells the run manager of this process."""

    def remote_started(self, session_id: str, run_id: str, worker: str) -> None: ...

    def remote_frame(self, run_id: str, seq: int, frame: dict[str, Any] | None, end: bool) -> None: ...

    def control(self, message: dict[str, Any]) -> None: ...

    def feed_note(self, note: dict[str, Any]) -> None:
        """A session change or an owner's frame another worker broadcast (`SessionFeed.remote`)."""
        ...

    def resync(self) -> None:
        """Announcements may have been missed (the bus reconnected): read what was missed."""
        ...


@dataclass(frozen=True)
class Control:
    """A control message for the run of `session_id` with `run_id`, wherever it runs."""

    kind: str  # "stop", "approve", or "elicit" (an answer to an MCP server's question is stored)
    session_id: str
    run_id: str = ""
    call_id: str = ""
    decision: str = ""

    def payload(self) -> dict[str, Any]:
        return {"k": self.kind, "s": self.session_id, "r": self.run_id, "c": self.call_id, "d": self.decision}


class Bus(Protocol):
    shared: bool  # whether frames and control messages reach other processes

    async def open(self, handlers: Handlers) -> None: ...

    async def close(self) -> None: ...

    def published(self, run: AgentRun, frame: dict[str, Any]) -> None:
        """A frame of a run of this process, stamped with `run_id` and `seq`."""
        ...

    def started(self, run: AgentRun) -> None: ...

    async def ended(self, run: AgentRun) -> None:
        """The run's frames are over; returns once every frame of it is out."""
        ...

    def feed(self, note: dict[str, Any]) -> None:
        """Broadcast `note` to the feeds of the other workers."""
        ...

    async def watch(self, session_id: str) -> None:
        """Runs of this session, wherever they run, are announced to this process from now on."""
        ...

    async def unwatch(self, session_id: str) -> None: ...

    async def follow(self, run_id: str) -> None:
        """The frames of this run of another worker are announced to this process from now on."""
        ...

    async def unfollow(self, run_id: str) -> None: ...

    async def send(self, worker: str, control: Control) -> bool:
        """Deliver `control` to `worker`; False when this bus cannot reach other processes."""
        ...

    async def waiting(self, session_id: str) -> list[dict[str, Any]]:
        """The approvals a run of this session waits for, whichever worker runs it."""
        ...

    async def claim(self, session_id: str, call_id: str) -> str | None:
        """Take the approval `call_id` of the session (once): the worker whose run waits for it."""
        ...

    async def questions(self, session_id: str) -> list[dict[str, Any]]:
        """The MCP servers' questions a run of this session waits on, whichever worker runs it."""
        ...

    async def question(self, session_id: str, elicitation_id: str) -> dict[str, Any] | None:
        """One of them, as `elicitation_required` describes it, while it waits for an answer."""
        ...

    async def answer_question(
        self, session_id: str, elicitation_id: str, answer: dict[str, Any]
    ) -> str | None:
        """Store the answer to the question (once: the first answer counts): the worker whose run
        waits on it, None when nothing waits."""
        ...

    async def take_answer(self, session_id: str, elicitation_id: str) -> dict[str, Any] | None:
        """The answer stored for the question, taken (its row is gone after)."""
        ...

    async def lost(self, lease: Lease, frame: dict[str, Any] | None) -> None:
        """End the run of a worker that is gone (with `frame` last), for whoever follows it."""
        ...

    async def prune(self) -> None:
        """Forget the frames of runs that ended long enough ago."""
        ...

    async def fetch(self, run_id: str, after: int) -> list[tuple[int, dict[str, Any] | None]]:
        """A run's frames after sequence number `after`, from where the bus keeps them (None: the
        run ended there)."""
        ...

    async def kept(self, run_id: str) -> str | None:
        """The session of run `run_id` when the bus still keeps its frames (an ended run's too,
        until they are pruned), else None."""
        ...


class LocalBus:
    """Nothing crosses processes: runs are followed where they run."""

    shared = False

    async def open(self, handlers: Handlers) -> None:
        return None

    async def close(self) -> None:
        return None

    def published(self, run: AgentRun, frame: dict[str, Any]) -> None:
        return None

    def started(self, run: AgentRun) -> None:
        return None

    async def ended(self, run: AgentRun) -> None:
        return None

    def feed(self, note: dict[str, Any]) -> None:
        return None

    async def watch(self, session_id: str) -> None:
        return None

    async def unwatch(self, session_id: str) -> None:
        return None

    async def follow(self, run_id: str) -> None:
        return None

    async def unfollow(self, run_id: str) -> None:
        return None

    async def send(self, worker: str, control: Control) -> bool:
        return False

    async def waiting(self, session_id: str) -> list[dict[str, Any]]:
        return []

    async def claim(self, session_id: str, call_id: str) -> str | None:
        return None

    async def questions(self, session_id: str) -> list[dict[str, Any]]:
        return []

    async def question(self, session_id: str, elicitation_id: str) -> dict[str, Any] | None:
        return None

    async def answer_question(
        self, session_id: str, elicitation_id: str, answer: dict[str, Any]
    ) -> str | None:
        return None

    async def take_answer(self, session_id: str, elicitation_id: str) -> dict[str, Any] | None:
        return None

    async def lost(self, lease: Lease, frame: dict[str, Any] | None) -> None:
        return None

    async def prune(self) -> None:
        return None

    async def fetch(self, run_id: str, after: int) -> list[tuple[int, dict[str, Any] | None]]:
        return []

    async def kept(self, run_id: str) -> str | None:
        return None
