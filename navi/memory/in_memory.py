"""A memory store in a dict, for tests and as the reference behaviour of the contract."""

from __future__ import annotations

from datetime import datetime

from navi.llm.messages import utcnow
from navi.memory.base import Fact, MemoryStore, UpsertOutcome, clean_fact, normalise, terms
from navi.sessions.models import DEFAULT_OWNER


class InMemoryMemoryStore(MemoryStore):
    def __init__(self) -> None:
        self._facts: dict[int, Fact] = {}
        self._next = 1
        self._summaries: dict[str, str] = {}
        self._extracted: dict[str, datetime] = {}

    async def upsert_fact(
        self,
        category: str,
        key: str,
        value: str,
        *,
        owner: str = DEFAULT_OWNER,
        session_id: str | None = None,
    ) -> tuple[Fact, UpsertOutcome]:
        category, key, value = clean_fact(category, key, value)
        for fact in self._facts.values():
            if (fact.owner, fact.category, fact.key) == (owner, category, key):
                fact.updated_at = utcnow()
                fact.session_id = session_id or fact.session_id
                if fact.value == value:
                    fact.confirmations += 1
                    return fact.model_copy(), "confirmed"
                fact.value = value
                fact.confirmations = 1
                return fact.model_copy(), "updated"
        fact = Fact(
            id=self._next, owner=owner, category=category, key=key, value=value, session_id=session_id
        )
        self._facts[fact.id] = fact
        self._next += 1
        return fact.model_copy(), "created"

    async def search_facts(self, query: str, *, owner: str = DEFAULT_OWNER, limit: int = 15) -> list[Fact]:
        wanted = terms(query)
        scored = []
        for fact in self._facts.values():
            if fact.owner != owner:
                continue
            haystack = terms(f"{fact.category} {fact.key} {fact.value}")
            # Prefix matching both ways stands in for the SQL stores' prefix queries and stemming.
            score = sum(
                1 for t in wanted for h in haystack if h.startswith(t) or (len(h) >= 3 and t.startswith(h))
            )
            if score:
                scored.append(fact.model_copy(update={"score": float(score)}))
        scored.sort(key=lambda f: (-f.score, -f.updated_at.timestamp()))
        return scored[:limit]

    async def get_all_facts(self, *, owner: str = DEFAULT_OWNER, limit: int | None = None) -> list[Fact]:
        found = sorted(
            (f for f in self._facts.values() if f.owner == owner),
            key=lambda f: (f.category, -f.updated_at.timestamp()),
        )
        return [f.model_copy() for f in found[:limit]]

    async def get_fact(self, fact_id: int, *, owner: str | None = None) -> Fact | None:
        fact = self._facts.get(fact_id)
        if fact is None or (owner is not None and fact.owner != owner):
            return None
        return fact.model_copy()

    async def delete_fact_by_id(self, fact_id: int, *, owner: str | None = None) -> bool:
        if await self.get_fact(fact_id, owner=owner) is None:
            return False
        del self._facts[fact_id]
        return True

    async def delete_fact(self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER) -> int:
        key, cat = normalise(key), normalise(category) if category else None
        doomed = [
            f.id
            for f in self._facts.values()
            if f.owner == owner and f.key == key and (cat is None or f.category == cat)
        ]
        for fact_id in doomed:
            del self._facts[fact_id]
        return len(doomed)

    async def get_summary(self, *, owner: str = DEFAULT_OWNER) -> str | None:
        return self._summaries.get(owner)

    async def set_summary(self, content: str, *, owner: str = DEFAULT_OWNER) -> None:
        self._summaries[owner] = content

    async def mark_session_extracted(self, session_id: str, at: datetime | None = None) -> None:
        self._extracted[session_id] = at or utcnow()

    async def get_extracted_at(self, session_id: str) -> datetime | None:
        return self._extracted.get(session_id)
