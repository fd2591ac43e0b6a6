"""A memory store in a dict, for tests and as the reference behaviour of the contract."""

from __future__ import annotations

from datetime import datetime

from navi.llm.messages import utcnow
from navi.memory.base import (
    OUTCOMES,
    Fact,
    MemoryStore,
    Source,
    UpsertOutcome,
    clean_fact,
    decide,
    log_decision,
    normalise,
    query_terms,
    terms,
)
from navi.sessions.models import DEFAULT_OWNER


class InMemoryMemoryStore(MemoryStore):
    def __init__(self) -> None:
        self._facts: dict[int, Fact] = {}
        self._next = 1
        self._summaries: dict[str, str] = {}
        self._extracted: dict[str, datetime] = {}

    def _current(self, owner: str, category: str, key: str) -> Fact | None:
        for fact in self._facts.values():
            if fact.current and (fact.owner, fact.category, fact.key) == (owner, category, key):
                return fact
        return None

    def _insert(self, fact: Fact) -> Fact:
        fact.id = self._next
        self._next += 1
        self._facts[fact.id] = fact
        return fact

    def _apply(
        self,
        fact: Fact | None,
        owner: str,
        category: str,
        key: str,
        value: str,
        session_id: str | None,
        source: Source,
    ) -> tuple[Fact, UpsertOutcome]:
        decision = decide(fact, value)
        now = utcnow()
        previous = None
        if fact is None:
            fact = self._insert(
                Fact(
                    id=0,
                    owner=owner,
                    category=category,
                    key=key,
                    value=value,
                    session_id=session_id,
                    source=source,
                )
            )
        elif decision == "ignore":
            fact.updated_at = now
            fact.session_id = session_id or fact.session_id
            fact.confirmations += 1
        else:
            old = self._insert(fact.model_copy(update={"retired_at": now, "replaced_by": fact.id}))
            previous = old.id
            fact.value, fact.source, fact.confirmations = value, source, 1
            fact.created_at = fact.updated_at = now
            fact.session_id = session_id  # where the new value came from (None: no conversation)
        log_decision(decision, fact, source=source, previous=previous)
        return fact.model_copy(), OUTCOMES[decision]

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
        category, key, value = clean_fact(category, key, value)
        return self._apply(
            self._current(owner, category, key), owner, category, key, value, session_id, source
        )

    async def edit_fact(
        self, fact_id: int, value: str, *, owner: str, source: Source = "edited"
    ) -> tuple[Fact, UpsertOutcome] | None:
        fact = self._facts.get(fact_id)
        if fact is None or fact.owner != owner or not fact.current:
            return None
        category, key, value = clean_fact(fact.category, fact.key, value)
        return self._apply(fact, owner, category, key, value, None, source)

    async def search_facts(
        self, query: str, *, owner: str = DEFAULT_OWNER, limit: int = 15, history: bool = False
    ) -> list[Fact]:
        wanted = query_terms(query)
        scored = []
        for fact in self._facts.values():
            if fact.owner != owner or not (history or fact.current):
                continue
            haystack = terms(f"{fact.category} {fact.key} {fact.value}")
            # Prefix matching both ways stands in for the SQL stores' prefix queries and stemming.
            score = sum(
                1 for t in wanted for h in haystack if h.startswith(t) or (len(h) >= 3 and t.startswith(h))
            )
            if score:
                scored.append(fact.model_copy(update={"score": float(score)}))
        scored.sort(key=lambda f: (not f.current, -f.score, -f.updated_at.timestamp()))
        return scored[:limit]

    async def get_all_facts(self, *, owner: str = DEFAULT_OWNER, limit: int | None = None) -> list[Fact]:
        found = sorted(
            (f for f in self._facts.values() if f.owner == owner and f.current),
            key=lambda f: (f.category, -f.updated_at.timestamp()),
        )
        return [f.model_copy() for f in found[:limit]]

    async def get_fact(self, fact_id: int, *, owner: str | None = None) -> Fact | None:
        fact = self._facts.get(fact_id)
        if fact is None or (owner is not None and fact.owner != owner):
            return None
        return fact.model_copy()

    async def fact_history(self, fact_id: int, *, owner: str) -> list[Fact]:
        found = [f for f in self._facts.values() if f.owner == owner and f.replaced_by == fact_id]
        found.sort(key=lambda f: (f.retired_at or f.updated_at, f.id), reverse=True)
        return [f.model_copy() for f in found]

    async def retire_facts(
        self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER
    ) -> list[Fact]:
        key, cat = normalise(key), normalise(category) if category else None
        retired = []
        for fact in self._facts.values():
            if fact.owner == owner and fact.current and fact.key == key and cat in (None, fact.category):
                fact.retired_at = utcnow()
                log_decision("retire", fact, source="forget")
                retired.append(fact.model_copy())
        return retired

    async def delete_fact_by_id(self, fact_id: int, *, owner: str | None = None) -> bool:
        fact = await self.get_fact(fact_id, owner=owner)
        if fact is None:
            return False
        for doomed in [f.id for f in self._facts.values() if f.id == fact_id or f.replaced_by == fact_id]:
            del self._facts[doomed]
        return True

    async def delete_fact(self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER) -> int:
        key, cat = normalise(key), normalise(category) if category else None
        doomed = [
            f for f in self._facts.values() if f.owner == owner and f.key == key and cat in (None, f.category)
        ]
        for fact in doomed:
            del self._facts[fact.id]
        return sum(1 for f in doomed if f.current)

    async def get_summary(self, *, owner: str = DEFAULT_OWNER) -> str | None:
        return self._summaries.get(owner)

    async def set_summary(self, content: str, *, owner: str = DEFAULT_OWNER) -> None:
        self._summaries[owner] = content

    async def mark_session_extracted(self, session_id: str, at: datetime | None = None) -> None:
        self._extracted[session_id] = at or utcnow()

    async def get_extracted_at(self, session_id: str) -> datetime | None:
        return self._extracted.get(session_id)
