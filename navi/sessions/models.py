"""The session: two message buffers and the facts about them.

`messages` is the display history, complete and never compressed. `context` is what the model sees;
compression replaces part of it with a summary. System prompts live in neither: they are built
fresh on every model call from the current profile.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from navi.llm.messages import Message, utcnow

DEFAULT_OWNER = "local"
# The analytics a session-archive/v1 session may carry, generated on demand through the model.
ANALYSIS_PARTS = ("summary", "assessment", "facts")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def new_session_id() -> str:
    return str(uuid.uuid4())


def is_session_id(value: str) -> bool:
    """Session ids are lowercase UUIDs; anything else is refused before it reaches a path or query."""
    return bool(_UUID.match(value))


def as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def display_only(msg: Message) -> bool:
    """Whether `msg` is in the display history only and never reaches the model: a compression
    marker, or the error record of a failed turn (kept for the page's Retry)."""
    return msg.is_compression or msg.metadata.is_failure_record


class SessionInfo(BaseModel):
    """A session without its buffers: what a sidebar lists."""

    id: str
    owner: str = DEFAULT_OWNER
    profile_id: str
    name: str | None = None
    pinned: bool = False
    context_token_count: int = 0
    message_count: int = 0
    # The messages a person wrote or read as text (their own and the answers'): no tool results,
    # summaries or markers. Filled by `list()` (0 elsewhere).
    text_message_count: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    last_active: datetime = Field(default_factory=utcnow)
    # Where it sits: the folder it was put in (None: none), archived (left out of the list until
    # brought back), temporary (deleted when closed, never read for memory).
    folder: str | None = None
    archived: bool = False
    temporary: bool = False


class Session(SessionInfo):
    # The display path: from the first message down to the active leaf (or the branch asked for).
    messages: list[Message] = Field(default_factory=list)
    # Every display message's parent, branches off the path included, in the order written
    # (navi/sessions/tree.py); empty when the display buffer was not read.
    parents: dict[str, str | None] = Field(default_factory=dict)
    # The leaf the next turn appends below (None: the newest message).
    active_leaf: str | None = None
    # The display messages off the path (other branches), in the order written; what an archive
    # needs to carry the whole tree.
    others: list[Message] = Field(default_factory=list)
    context: list[Message] = Field(default_factory=list)
    planning_logs: list[dict[str, Any]] = Field(default_factory=list)
    # Archive analytics generated on demand or imported: "summary", "assessment", "facts", each a
    # JSON object shaped as session-archive/v1 defines it (navi/sessions/archive.py).
    analysis: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # Session fields of an imported archive that Navi has no use for, kept to be exported again.
    custom: dict[str, Any] = Field(default_factory=dict)
    # An imported archive's own system prompt: the session's layer of the system prompt, after
    # the persona and the profile's (navi/profiles/persona.py). None for sessions begun here.
    system_prompt: str | None = None
    # The model picked for this conversation, "backend:model" (None: its profile's).
    model: str | None = None

    def info(self) -> SessionInfo:
        return SessionInfo(**self.model_dump(include=set(SessionInfo.model_fields)))

    @property
    def conversation(self) -> list[Message]:
        """The display history without what only the display shows (`display_only`)."""
        return [m for m in self.messages if not display_only(m)]

    @property
    def summary_message(self) -> Message | None:
        """The newest compression summary in the context, if any."""
        for msg in reversed(self.context):
            if msg.is_summary:
                return msg
        return None
