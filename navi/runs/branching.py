"""Edit, regenerate, switch and continue: turns and moves on another branch of a session's tree.

Each moves the session's active leaf while holding the session's slot (no turn runs meanwhile,
`RunManager.holding`), rebuilding the context of the new path (navi/agent/branches.py), and then,
for an edit or a regeneration, starts the turn as any message does: its frames, its approvals, its
stop are those of every turn. `stream_start` names the branch point (`parent_id`).
"""

from __future__ import annotations

from navi.agent import branches
from navi.agent.turns import Continue, NewMessage, Retry, TurnOptions
from navi.llm.attached import attached
from navi.llm.messages import Message
from navi.runs.manager import RunManager
from navi.runs.run import AgentRun
from navi.sessions.continuations import NOTHING_TO_CONTINUE, continuable
from navi.sessions.models import Session, display_only
from navi.sessions.store import SessionNotFound
from navi.sessions.tree import BranchNotFound


class NothingToContinue(ValueError):
    """A continue of a message that is not the latest answer, or was not cut off by the token cap."""


class NotBranchable(ValueError):
    """A message that cannot be edited (not the user's) or answered again (no question above it)."""


async def _message(
    runs: RunManager, session_id: str, message_id: str, owner: str | None
) -> tuple[Session, Message]:
    session = await runs.agent.sessions.get(session_id, owner=owner, branch=message_id)
    if session is None:
        raise SessionNotFound(session_id)
    found = next((m for m in session.messages if m.id == message_id), None)
    if found is None:
        raise BranchNotFound(message_id)
    return session, found


def _asked(msg: Message) -> bool:
    """A question the user asked (not a summary, a synthetic image message or a record)."""
    return (
        msg.role == "user"
        and not msg.is_summary
        and not msg.metadata.get("synthetic")
        and not display_only(msg)
    )


async def edit(
    runs: RunManager,
    session_id: str,
    message_id: str,
    content: str,
    *,
    owner: str | None = None,
    planning: bool = True,
) -> AgentRun:
    """A new branch from the user message's parent with `content` (its images and files kept), run
    at once. `SessionNotFound`, `BranchNotFound`, `NotBranchable`, `RunActive`."""
    session, msg = await _message(runs, session_id, message_id, owner)
    if not _asked(msg):
        raise NotBranchable("only a message the user wrote can be edited")
    parent = session.parents.get(message_id)
    sessions = runs.agent.sessions
    await runs.holding(session_id, lambda: branches.branch_at(sessions, session_id, parent, owner=owner))
    message = NewMessage(content, list(msg.images), attached(msg.metadata.files))
    return await runs.start(session_id, message, TurnOptions(planning=planning, branch=parent))


async def regenerate(
    runs: RunManager, session_id: str, message_id: str, *, owner: str | None = None, planning: bool = True
) -> AgentRun:
    """A new answer to the question of `message_id` (an answer's message, or the question itself),
    a sibling of the old answer. `SessionNotFound`, `BranchNotFound`, `NotBranchable`, `RunActive`."""
    session, msg = await _message(runs, session_id, message_id, owner)
    path = session.messages[: session.messages.index(msg) + 1]
    question = next((m for m in reversed(path) if _asked(m)), None)
    if question is None:
        raise NotBranchable("there is no question above this message to answer again")
    sessions = runs.agent.sessions
    await runs.holding(
        session_id,
        lambda: branches.branch_at(sessions, session_id, question.id, owner=owner, answering=True),
    )
    return await runs.start(session_id, Retry(), TurnOptions(planning=planning, branch=question.id))


async def continue_answer(
    runs: RunManager, session_id: str, message_id: str, *, owner: str | None = None, planning: bool = False
) -> AgentRun:
    """Go on with the latest answer of the active path, which the token cap cut off: `message_id`
    names it (or the first part of it as shown, navi/sessions/continuations.py). Nothing is stored
    unless the model answers. `SessionNotFound`, `BranchNotFound`, `NothingToContinue`, `RunActive`."""
    found: list[Message] = []

    async def check() -> None:  # while no turn runs (a running one: `RunActive`, busy)
        session = await runs.agent.sessions.get(session_id, owner=owner)
        if session is None:
            raise SessionNotFound(session_id)
        if not any(m.id == message_id for m in session.messages):
            if message_id not in session.parents:
                raise BranchNotFound(message_id)
            raise NothingToContinue(NOTHING_TO_CONTINUE)  # a message of another branch
        last = continuable(session.messages, message_id)
        if last is None:
            raise NothingToContinue(NOTHING_TO_CONTINUE)
        found.append(last)

    await runs.holding(session_id, check)
    return await runs.start(session_id, Continue(found[0].id), TurnOptions(planning=planning))


async def switch(runs: RunManager, session_id: str, message_id: str, *, owner: str | None = None) -> str:
    """Make the newest leaf below `message_id` the active one; returns it. `SessionNotFound`,
    `BranchNotFound`, `RunActive`."""
    await _message(runs, session_id, message_id, owner)
    leaf: list[str] = []

    async def move() -> None:
        leaf.append(await branches.switch(runs.agent.sessions, session_id, message_id, owner=owner))

    await runs.holding(session_id, move)
    return leaf[0]
