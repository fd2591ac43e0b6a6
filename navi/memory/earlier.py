"""Earlier sessions as memory, and where a fact came from.

Beside the fact stores (whose search this module does not touch), two readings of the session
store:

- `search_summaries`: the compression summaries of the owner's other sessions, searched by words
  (any word may match; the share of the query's words found ranks them). A hit names the session,
  a day and a message to open: the person's own message that best matches the query in that
  session's display history (which compression never shortens), quoted as what they said, else
  the compression marker. The day is that message's stored time, never the clock's.
- `fact_source`: the message a fact came from — in the fact's session, the person's first message
  that holds every word of the value (the rule by which the fact was stored at all).

Both act for one owner: another owner's sessions are never read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel

from navi.llm.messages import Message, without_files
from navi.memory.base import Fact
from navi.memory.extractor import is_persons, stated, words
from navi.sessions.models import Session
from navi.sessions.store import SessionStore

MAX_SESSIONS = 500  # the most recently active sessions searched for summaries
SNIPPET_CHARS = 240
# Words too common to make a summary relevant on their own.
_COMMON_WORDS = (
    "a an the of in at on and or to is are was were be my i me you your user with for from by as it "
    "that this what where when who how which do does did have has had about"
)
_COMMON = frozenset(_COMMON_WORDS.split(" "))


class FactSource(BaseModel):
    """Where a fact came from: its session, and the message in it (None when none is found)."""

    session_id: str
    session_name: str | None = None
    message_id: str | None = None
    created_at: datetime | None = None
    text: str | None = None


@dataclass(frozen=True)
class SessionRecollection:
    """A summary of an earlier session that matches a query."""

    session_id: str
    session_name: str | None
    message_id: str  # "" when the session has neither a matching message nor a compression marker
    day: datetime
    snippet: str  # of the summary
    score: float
    said: str | None = None  # the person's own matching message, shortened; None when none matches

    def line(self) -> str:
        """ "You said" quotes only the person's own words; the summary, written by the model from the
        whole conversation (tool results too), is given as the summary."""
        name = self.session_name or "an unnamed conversation"
        when = f"{self.day.day} {self.day:%B %Y}"
        link = f"session {self.session_id}"
        if self.message_id:
            link += f", message {self.message_id}; recall key msg_{self.message_id}"
        link += f"; the whole summary: recall key {summary_key(self.session_id)}"
        if self.said:
            head = f"- in the session '{name}' on {when} you said: “{self.said}” — its summary"
        else:
            head = f"- in the session '{name}' (summarised on {when}), its summary"
        return f"{head}: {self.snippet} ({link})"


def _query_terms(query: str) -> set[str]:
    found = {t for t in words(query) if t not in _COMMON}
    return found or set(words(query))


def _score(text: str, wanted: set[str]) -> float:
    seen = words(text)
    if not seen or not wanted:
        return 0.0
    present = wanted & set(seen)
    if not present:
        return 0.0
    return len(present) / len(wanted) + len(present) / (10 * math.sqrt(len(seen)))


def _snippet(text: str, wanted: set[str]) -> str:
    body = " ".join(text.split())
    if len(body) <= SNIPPET_CHARS:
        return body
    lower = body.lower()
    first = min((i for i in (lower.find(t) for t in wanted) if i >= 0), default=0)
    start = max(0, first - SNIPPET_CHARS // 3)
    start = body.rfind(" ", 0, start) + 1 if start else 0
    end = body.rfind(" ", start, start + SNIPPET_CHARS)
    end = end if end > start else start + SNIPPET_CHARS
    return f"{'…' if start else ''}{body[start:end]}…"


def _summary_text(summary: Message) -> str:
    text = (summary.content or "").strip()
    first, _, rest = text.partition("\n")
    if first.startswith("[") and first.endswith("]"):  # the "[Summary of …]" heading
        text = rest.strip()
    return text


def _anchor(session: Session, wanted: set[str]) -> Message | None:
    """The person's message in the display history that best matches, else the newest compression
    marker: what a link to this recollection opens."""
    best: tuple[float, Message] | None = None
    for msg in session.messages:
        if not is_persons(msg):
            continue
        found = _score(without_files(msg), wanted)
        if found > 0 and (best is None or found > best[0]):
            best = (found, msg)
    if best is not None:
        return best[1]
    return next((m for m in reversed(session.messages) if m.is_compression), None)


async def search_summaries(
    sessions: SessionStore, query: str, *, owner: str, limit: int = 5, exclude: str | None = None
) -> list[SessionRecollection]:
    """The summaries of `owner`'s sessions (but `exclude`, the current one) matching `query`,
    best first."""
    wanted = _query_terms(query)
    if not wanted:
        return []
    scored: list[tuple[float, str, str, datetime]] = []
    for info, summary in await sessions.summaries(owner=owner, limit=MAX_SESSIONS):
        if info.id == exclude:
            continue
        text = _summary_text(summary)
        found = _score(text, wanted)
        if found > 0:
            scored.append((found, info.id, text, summary.created_at))
    scored.sort(key=lambda s: -s[0])
    hits: list[SessionRecollection] = []
    for found, session_id, text, summarised in scored[:limit]:
        session = await sessions.get(session_id, owner=owner)
        if session is None:  # deleted meanwhile
            continue
        anchor = _anchor(session, wanted)
        day = anchor.created_at if anchor is not None else summarised
        hits.append(
            SessionRecollection(
                session_id=session.id,
                session_name=session.name,
                message_id=anchor.id if anchor is not None else "",
                day=day,
                snippet=_snippet(text, wanted),
                score=found,
                said=_snippet(without_files(anchor), wanted)
                if anchor is not None and is_persons(anchor)
                else None,
            )
        )
    return hits


SESSION_KEY = "session_"  # a recall key naming a session's summary: `session_<session id>`


def summary_key(session_id: str) -> str:
    return f"{SESSION_KEY}{session_id}"


def recollection(session: Session) -> str | None:
    """A session's newest summary introduced by its name and dates, as `recall` reads it by
    `summary_key`; None when the session was never compressed."""
    summary = session.summary_message
    if summary is None:
        return None
    name = session.name or "an unnamed conversation"
    start, end = session.created_at, summary.created_at
    when = f"{start.day} {start:%B %Y}"
    if end.date() != start.date():
        when += f" to {end.day} {end:%B %Y}"
    return f"In the session '{name}' ({when}), what was said, summarised:\n{_summary_text(summary)}"


async def fact_source(sessions: SessionStore, fact: Fact, *, owner: str) -> FactSource | None:
    """The session and message `fact` came from; None for a fact without a session (added by hand)
    or whose session is gone."""
    if not fact.session_id:
        return None
    session = await sessions.get(fact.session_id, owner=owner)
    if session is None:
        return None
    source = FactSource(session_id=session.id, session_name=session.name)
    for msg in session.messages:
        if is_persons(msg):
            text = without_files(msg)
            if stated(fact.value, text):
                source.message_id, source.created_at = msg.id, msg.created_at
                source.text = text if len(text) <= SNIPPET_CHARS else f"{text[:SNIPPET_CHARS]}…"
                break
    return source
