"""Moving a session to another branch of its tree, and the context buffer of that branch.

The context buffer belongs to the active path. When the active leaf moves (a switch, an edit, a
regeneration), the context of the new path is built from the old one where that is sound:

- the old context up to the branch point (the last message both paths share) is kept, with its
  compression summary, when that summary covers only messages before the branch point — known
  because a message the summary kept (not summarised) lies before the branch point;
- then the new path's messages after the branch point follow, as the context holds them (long tool
  results clipped, recallable in full, as a turn stores them).

Otherwise (the summary covers messages past the branch point) the context is the new path's
conversation as a whole, and the next turn compresses it as usual when it is over the threshold.
"""

from __future__ import annotations

from collections.abc import Sequence

from navi.agent.compression.shorten import head_and_tail
from navi.llm.messages import Message
from navi.llm.tokens import estimate_messages_tokens
from navi.sessions.keys import recall_key
from navi.sessions.models import Session, display_only, new_session_id
from navi.sessions.store import SessionNotFound, SessionStore

TOOL_RESULT_MAX_CHARS = 16_000  # the engine's default (`AgentConfig.tool_result_max_chars`)


def as_context(msg: Message, tool_chars: int) -> Message:
    """A display message as a turn puts it in the context."""
    content = msg.content or ""
    if msg.role != "tool" or len(content) <= tool_chars:
        return msg
    key = recall_key(msg.id)
    clipped = msg.model_copy(update={"content": head_and_tail(content, tool_chars, key)})
    clipped.metadata = msg.metadata.but(truncated_from=len(content), recall_key=key)
    return clipped


def branch_context(
    old_context: Sequence[Message],
    old_path: Sequence[str],
    new_path: Sequence[Message],
    *,
    answering: bool = False,
    tool_chars: int = TOOL_RESULT_MAX_CHARS,
) -> list[Message]:
    """The context of `new_path`, given the context of the path `old_path` (display ids).

    `answering`: a new answer to the new path's last message comes next (regenerate), so what the
    old context said after that message (a stopped question's marker) is left out."""
    new_ids = [m.id for m in new_path]
    shared = 0
    while shared < min(len(old_path), len(new_ids)) and old_path[shared] == new_ids[shared]:
        shared += 1
    before, after = set(old_path[:shared]), set(old_path[shared:])
    cut = next((i for i, m in enumerate(old_context) if m.id in after), len(old_context))
    head = list(old_context[:cut])
    if answering or shared < len(new_ids):
        # context-only messages after the branch point's own message (a stopped question's marker)
        # stay only when a new question follows the branch point
        last = max((i for i, m in enumerate(head) if m.id in before), default=-1)
        if answering or new_path[shared].role != "user":
            head = head[: last + 1]
    summaries = [i for i, m in enumerate(head) if m.is_summary]
    sound = not summaries or any(m.id in before for m in head[summaries[-1] + 1 :])
    if not sound or (shared and not any(m.id in before for m in head)):
        head, shared = [], 0  # compressed past the branch point: the whole path again
    return head + [as_context(m, tool_chars) for m in new_path[shared:] if not display_only(m)]


async def _moved(
    store: SessionStore, before: Session, owner: str | None, answering: bool, tool_chars: int
) -> None:
    after = await store.get(before.id, owner=owner)
    if after is None:
        raise SessionNotFound(before.id)
    context = branch_context(
        before.context,
        [m.id for m in before.messages],
        after.messages,
        answering=answering,
        tool_chars=tool_chars,
    )
    if [m.id for m in context] != [m.id for m in before.context]:
        await store.replace_context(before.id, context, context_token_count=switched_size(before, context))


def switched_size(before: Session, context: list[Message]) -> int:
    """The context size after a branch change, as a turn counts it: the last turn's count held the
    system message and the tools besides the messages; that part stays, the messages' part is the
    new path's (else the gauge would drop to the messages alone, and jump back at the next turn)."""
    overhead = max(0, before.context_token_count - estimate_messages_tokens(before.context))
    return overhead + estimate_messages_tokens(context)


async def switch(
    store: SessionStore,
    session_id: str,
    message_id: str,
    *,
    owner: str | None = None,
    tool_chars: int = TOOL_RESULT_MAX_CHARS,
) -> str:
    """Make the newest leaf below `message_id` active, its path's context the context; returns
    the leaf. `SessionNotFound`, `BranchNotFound`."""
    before = await store.get(session_id, owner=owner)
    if before is None:
        raise SessionNotFound(session_id)
    leaf = await store.set_leaf(session_id, message_id, owner=owner)
    await _moved(store, before, owner, False, tool_chars)
    return leaf


async def branch_at(
    store: SessionStore,
    session_id: str,
    parent: str | None,
    *,
    owner: str | None = None,
    answering: bool = False,
    tool_chars: int = TOOL_RESULT_MAX_CHARS,
) -> None:
    """Make `parent` itself the active leaf (None: before the first message), so the next message
    appended starts a new branch there, with the context of the path to it."""
    before = await store.get(session_id, owner=owner)
    if before is None:
        raise SessionNotFound(session_id)
    await store.branch_at(session_id, parent, owner=owner)
    await _moved(store, before, owner, answering, tool_chars)


async def fork(
    store: SessionStore,
    session_id: str,
    message_id: str,
    *,
    owner: str | None = None,
    tool_chars: int = TOOL_RESULT_MAX_CHARS,
) -> Session:
    """A new session (of the same owner and profile) holding the path of `session_id` up to
    `message_id`, its context that path's conversation. `SessionNotFound`, `BranchNotFound`."""
    source = await store.get(session_id, owner=owner, branch=message_id)
    if source is None:
        raise SessionNotFound(session_id)
    path = [m.model_copy() for m in source.messages[: [m.id for m in source.messages].index(message_id) + 1]]
    context = [as_context(m, tool_chars) for m in path if not display_only(m)]
    name = f"{source.name or 'Session'} (fork)"[:200]
    copy = Session(
        id=new_session_id(),
        owner=source.owner,
        profile_id=source.profile_id,
        name=name,
        messages=path,
        context=context,
        context_token_count=estimate_messages_tokens(context),
        system_prompt=source.system_prompt,  # the conversation's own instructions go along
        model=source.model,
    )
    await store.insert(copy)
    return copy
