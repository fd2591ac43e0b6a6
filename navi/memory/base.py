"""The memory store interface, shared by the in-memory, SQLite and PostgreSQL stores.

A current fact is unique per (owner, category, key): the subject and what about it. Every new
value goes through one decision, made by rules (`decide`), and is logged (`log_decision`):

- no current fact with that category and key → **add**;
- the same value (case, spacing and end punctuation aside) → **ignore**: a confirmation, merged;
- another value → **update**: the fact keeps its id and takes the new value, and the old value
  becomes a retired row (history) with its own dates, source and session, `replaced_by` the fact.

Forgetting **retires** a fact (it stays in the history); deleting removes it and its history.
No model is asked: these rules decide every case the stores meet. Categories and keys are
normalised (trimmed, lower-case, inner whitespace as `_`) so "Home Town" and "home_town" are one.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from navi.llm.messages import utcnow
from navi.logging import get_logger
from navi.sessions.models import DEFAULT_OWNER

log = get_logger(__name__)

UpsertOutcome = Literal["created", "updated", "confirmed"]
Decision = Literal["add", "update", "ignore", "retire"]
# extracted: read from an idle session; remembered: the model's `remember` tool; added/edited: a
# person through the API or the CLI.
Source = Literal["extracted", "remembered", "added", "edited"]
OUTCOMES: dict[Decision, UpsertOutcome] = {"add": "created", "update": "updated", "ignore": "confirmed"}


MAX_CATEGORY, MAX_KEY = 64, 128  # the columns' sizes


def normalise(label: str) -> str:
    label = re.sub(r"[^\w\s-]", "", label.strip().lower())
    return re.sub(r"[\s-]+", "_", label).strip("_")


def clean_fact(category: str, key: str, value: str) -> tuple[str, str, str]:
    """A fact's parts as every store keeps them; ValueError when one is empty."""
    category, key, value = normalise(category), normalise(key), value.strip()
    if not category or not key or not value:
        raise ValueError("a fact needs a category, a key and a value")
    if len(category) > MAX_CATEGORY or len(key) > MAX_KEY:
        raise ValueError(f"a fact's category is at most {MAX_CATEGORY} characters, its key {MAX_KEY}")
    return category, key, value


def same_value(a: str, b: str) -> bool:
    """Whether two values say the same (case, inner spacing and end punctuation aside)."""

    def canon(value: str) -> str:
        return " ".join(value.split()).rstrip(".!;,").casefold()

    return canon(a) == canon(b)


def decide(current: Fact | None, value: str) -> Decision:
    """What a new value for a fact's category and key does, given the current fact (if any)."""
    if current is None:
        return "add"
    return "ignore" if same_value(current.value, value) else "update"


def log_decision(decision: Decision, fact: Fact, *, source: str, previous: int | None = None) -> None:
    """Every memory decision is logged: which fact, why and from where (never the value itself)."""
    log.info(
        "memory.decision",
        decision=decision,
        fact_id=fact.id,
        owner=fact.owner,
        category=fact.category,
        key=fact.key,
        source=source,
        session_id=fact.session_id,
        history_id=previous,
    )


def terms(query: str) -> list[str]:
    return [t for t in re.findall(r"[^\W_]+", query.lower()) if len(t) > 1 or t.isdigit()]


MAX_QUERY_CHARS = 2_000  # of a search's query: what is read for its words and embedded
MAX_QUERY_TERMS = 32  # distinct words a search looks for


def query_terms(query: str) -> list[str]:
    """The distinct words a search looks for, in the query's order: at most MAX_QUERY_TERMS from
    its first MAX_QUERY_CHARS. A model may paste a whole document into `memory_search`; before
    this cap a 160 kB query held the database's thread for 2.3 s over 200 facts."""
    return list(dict.fromkeys(terms(query[:MAX_QUERY_CHARS])))[:MAX_QUERY_TERMS]


def one_line(text: str) -> str:
    """`text` on one line: every run of whitespace (line breaks of any kind among them) one space.
    A fact's parts are shown this way wherever they go into a prompt, so a value cannot start a
    line of its own there (a heading, a section of instructions)."""
    return " ".join(text.split())


class Fact(BaseModel):
    id: int
    owner: str = DEFAULT_OWNER
    category: str
    key: str
    value: str
    session_id: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    confirmations: int = 1
    source: str = "extracted"
    # Set on history: when the value stopped being current, and the fact that replaced it (None
    # when it was forgotten rather than replaced).
    retired_at: datetime | None = None
    replaced_by: int | None = None
    score: float = 0.0

    @property
    def current(self) -> bool:
        return self.retired_at is None

    def line(self) -> str:
        """The fact on one line (`one_line`): what prompts and tools' results show of it."""
        return f"{one_line(self.category)}: {one_line(self.key)} = {one_line(self.value)}"


class MemoryStore(ABC):
    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare storage (migrations). Called once before use."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""

    @abstractmethod
    async def upsert_fact(
        self,
        category: str,
        key: str,
        value: str,
        *,
        owner: str = DEFAULT_OWNER,
        session_id: str | None = None,
        source: Source = "extracted",
    ) -> tuple[Fact, UpsertOutcome]:
        """Add, update (the old value to history) or confirm, as `decide` says; logged."""

    @abstractmethod
    async def edit_fact(
        self, fact_id: int, value: str, *, owner: str, source: Source = "edited"
    ) -> tuple[Fact, UpsertOutcome] | None:
        """Give a current fact a new value (the old one to history); None if there is no such
        current fact of `owner`. ValueError for an empty value."""

    @abstractmethod
    async def search_facts(
        self, query: str, *, owner: str = DEFAULT_OWNER, limit: int = 15, history: bool = False
    ) -> list[Fact]:
        """Ranked full-text search over current facts; any term may match, best matches first.
        With `history`, retired values match too, ranked after every current one."""

    @abstractmethod
    async def get_all_facts(self, *, owner: str = DEFAULT_OWNER, limit: int | None = None) -> list[Fact]:
        """All current facts ordered by category, then most recently updated."""

    @abstractmethod
    async def get_fact(self, fact_id: int, *, owner: str | None = None) -> Fact | None:
        """A fact by id, current or retired."""

    @abstractmethod
    async def fact_history(self, fact_id: int, *, owner: str) -> list[Fact]:
        """The values the fact had before, newest first (empty for a fact never changed)."""

    @abstractmethod
    async def retire_facts(
        self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER
    ) -> list[Fact]:
        """Forget the current facts with this key (in this category, if given): they become history.
        Returns them, retired."""

    @abstractmethod
    async def delete_fact_by_id(self, fact_id: int, *, owner: str | None = None) -> bool:
        """Delete a fact and its history for good."""

    @abstractmethod
    async def delete_fact(self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER) -> int:
        """Delete facts with this key (in this category, if given) and their history for good;
        returns how many current facts went."""

    @abstractmethod
    async def get_summary(self, *, owner: str = DEFAULT_OWNER) -> str | None: ...

    @abstractmethod
    async def set_summary(self, content: str, *, owner: str = DEFAULT_OWNER) -> None: ...

    @abstractmethod
    async def mark_session_extracted(self, session_id: str, at: datetime | None = None) -> None: ...

    @abstractmethod
    async def get_extracted_at(self, session_id: str) -> datetime | None: ...
