"""The memory store on SQLite (FTS5) or PostgreSQL (tsvector + GIN), through `Database`.

Search is the database's full-text search: any query term may match, best matches first (BM25 on
SQLite, over the user's newest matches, ranked in `navi.storage.fact_rank`; `ts_rank` on
PostgreSQL); current facts only, unless history is asked for, and then every current fact ranks
above every retired one.

With an embedding model (`navi.memory.embedders`), every fact also gets a vector when it is stored or
changed (and `backfill_embeddings` gives one to those without), and search is hybrid: the full-text
ranking and the ranking by vector similarity (a scan in memory, `navi.storage.vectors`; only facts at
least MIN_SIMILARITY alike) are fused by reciprocal rank, current facts still before retired ones.
A query with no word in common with a fact can so find it by meaning. An embedder with an
`attribute_floor` (the built-in sentence encoder) adds a rescoring step over the fused candidates
(`navi.memory.rescore`): facts not about what the question asks are dropped, so a question nothing
answers comes back empty.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Connection, bindparam, delete, func, insert, select, update

from navi.llm.messages import utcnow
from navi.logging import get_logger
from navi.memory.base import (
    MAX_QUERY_CHARS,
    Fact,
    MemoryStore,
    Source,
    UpsertOutcome,
    clean_fact,
    normalise,
    query_terms,
)
from navi.memory.rescore import Rescorer
from navi.sessions.models import DEFAULT_OWNER, as_utc
from navi.storage import migrate
from navi.storage.database import Database
from navi.storage.memory_sql import (
    CANDIDATES,
    CURRENT,
    FACTS_BY_ID,
    MIN_SIMILARITY,
    POSTGRES_SEARCH,
    RRF_K,
    Embed,
    all_rows,
    edit_row,
    embed_text,
    execute_many,
    fact_states,
    new_counts,
    retire_rows,
    sqlite_ranked,
    to_fact,
    upsert_row,
)
from navi.storage.schema import memory_facts, memory_summary, session_memory_state
from navi.storage.vectors import VectorIndex, decode, encode

log = get_logger(__name__)

Scan = Future[list[tuple[int, float]]]  # a vector scan running on its own thread
RESCORED = 3  # times the facts asked for: the fused candidates the rescoring step judges
ABOUT = "+about"  # the name's suffix of stored vectors that carry the attribute's vector too

# Statements of every hybrid search, built once (building one costs about as much as running it).
EMBEDDINGS_BY_ID = select(memory_facts.c.id, memory_facts.c.embedding).where(
    memory_facts.c.id.in_(bindparam("ids", expanding=True))
)
_SINCE = select(memory_facts.c.id, memory_facts.c.owner, memory_facts.c.embedding).where(
    (memory_facts.c.id > bindparam("after")) & memory_facts.c.embedding.like(bindparam("tag"))
)


class SqlMemoryStore(MemoryStore):
    """Facts in `db`. As with `SqlSessionStore`: a database handed in is migrated and disposed by
    whoever opened it; `at(url)` makes a store that owns its database."""

    def __init__(self, db: Database, *, embed: Embed | None = None) -> None:
        self.db = db
        self.embed = embed
        # Stored vectors carry the model's name; a plain function without one gets a generic name.
        self.embed_name: str = getattr(embed, "name", "") or "embed"
        self.min_similarity: float = getattr(embed, "min_similarity", MIN_SIMILARITY)
        # The rescoring step (navi/memory/rescore.py), for an embedder that has a floor for it.
        floor = getattr(embed, "attribute_floor", None)
        strong = getattr(embed, "strong_similarity", 1.0)
        self.rescorer = Rescorer(embed, floor, strong) if embed is not None and floor is not None else None
        if self.rescorer is not None:
            # Each stored vector is the fact's, then its attribute's (`Rescorer.with_attributes`): another
            # name, so that vectors stored without the second half are made again by the backfill.
            self.embed_name += ABOUT
        self.vectors = VectorIndex()
        self._scans: ThreadPoolExecutor | None = None  # the vector scans, started on first use
        self._counts = new_counts()  # users' and words' fact counts (`sqlite_ranked`)
        self._owns_db = False

    @classmethod
    def at(cls, url: str, *, embed: Embed | None = None) -> SqlMemoryStore:
        store = cls(Database(url), embed=embed)
        store._owns_db = True
        return store

    async def open(self) -> None:
        if self._owns_db:
            await migrate.upgrade(self.db)

    async def aclose(self) -> None:
        if self._scans is not None:
            self._scans.shutdown(wait=False)
            self._scans = None
        if self._owns_db:
            await self.db.dispose()

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
        fact, outcome = await self.db.write(
            lambda conn: upsert_row(conn, owner, category, key, value, session_id, source)
        )
        if self.embed is not None and outcome != "confirmed":
            await self._store_embedding(fact)
        return fact, outcome

    async def edit_fact(
        self, fact_id: int, value: str, *, owner: str, source: Source = "edited"
    ) -> tuple[Fact, UpsertOutcome] | None:
        value = clean_fact("x", "x", value)[2]
        done = await self.db.write(lambda conn: edit_row(conn, fact_id, owner, value, source))
        if done is not None and self.embed is not None and done[1] != "confirmed":
            await self._store_embedding(done[0])
        return done

    async def _store_embedding(self, fact: Fact) -> None:
        try:
            (vector,) = await self._vectors([fact])
        except Exception as exc:  # full-text search still works without it
            log.warning("memory.embed_failed", error=str(exc))
            return
        raw = encode(self.embed_name, vector)
        stmt = update(memory_facts).where(memory_facts.c.id == fact.id).values(embedding=raw)
        await self.db.write(lambda conn: conn.execute(stmt))
        mine, about = self._halves(raw)
        if mine is not None:
            self.vectors.put(fact.owner, fact.id, mine, about)

    async def _vectors(self, facts: list[Fact]) -> list[list[float]]:
        """What is stored for each fact: its vector, and with rescoring its attribute's after it."""
        assert self.embed is not None
        if self.rescorer is None:
            return await self.embed([embed_text(f) for f in facts])
        return await self.rescorer.with_attributes(facts, [embed_text(f) for f in facts])

    def _halves(self, raw: str | None) -> tuple[NDArray[np.float32] | None, NDArray[np.float32] | None]:
        """A stored vector of this model: the fact's, and with rescoring its attribute's."""
        vector = decode(self.embed_name, raw)
        if vector is None or self.rescorer is None:
            return vector, None
        size = vector.size // 2
        return (vector[:size], vector[size:]) if size else (None, None)

    async def search_facts(
        self, query: str, *, owner: str = DEFAULT_OWNER, limit: int = 15, history: bool = False
    ) -> list[Fact]:
        words = query_terms(query)
        if not words:
            return []
        if self.embed is not None:
            try:
                (qvec,) = await self.embed([query[:MAX_QUERY_CHARS]])
            except Exception as exc:  # the words alone, as without a model
                log.warning("memory.embed_failed", error=str(exc))
            else:
                vector = np.asarray(qvec, dtype=np.float32)
                # Rescored, the fusion's best three times `limit` are candidates.
                wide = limit * RESCORED if self.rescorer is not None else limit
                scan = self._scan(vector, owner, near_k(wide, history))
                # One transaction, one trip to the database's thread: both rankings and the fusion.
                hybrid = partial(
                    self._hybrid, words, vector, owner=owner, limit=wide, history=history, scan=scan
                )
                if self.rescorer is None:
                    return await self.db.read(hybrid)
                found, about = await self.db.read(partial(self._with_attributes, hybrid, owner))
                vectors = self.vectors.get(owner)
                near = vectors.similarities([f.id for f in found], vector) if vectors is not None else {}
                try:
                    return await self.rescorer.keep(vector, found, limit, near, about)
                except Exception as exc:  # the fused ranking, unrescored
                    log.warning("memory.embed_failed", error=str(exc))
                    return found[:limit]
        return await self.db.read(partial(self._keyword, words, owner=owner, limit=limit, history=history))

    def _with_attributes(
        self, hybrid: Callable[[Connection], list[Fact]], owner: str, conn: Connection
    ) -> tuple[list[Fact], dict[int, NDArray[np.float32]]]:
        """The fused candidates and the attribute vectors stored with them: those in memory, and
        any other read in the same transaction."""
        found = hybrid(conn)
        vectors = self.vectors.get(owner)
        about = vectors.attributes([f.id for f in found]) if vectors is not None else {}
        unread = [f.id for f in found if f.id not in about]
        if unread:
            for fact_id, raw in conn.execute(EMBEDDINGS_BY_ID, {"ids": unread}):
                vector = self._halves(raw)[1]
                if vector is not None:
                    about[fact_id] = vector
        return found, about

    def _scan(self, vector: NDArray[np.float32], owner: str, k: int) -> Scan | None:
        """The owner's vectors already in memory scanned on a thread of their own, while the database's
        thread runs the full-text ranking (numpy and SQLite both release the GIL). None on the owner's
        first search: their vectors are read inside the search's transaction first."""
        vectors = self.vectors.get(owner)
        if vectors is None or vectors.dim != vector.size:
            return None
        if self._scans is None:
            self._scans = ThreadPoolExecutor(max_workers=1, thread_name_prefix="navi-vectors")
        return self._scans.submit(vectors.nearest, vector, k)

    def _keyword(
        self, words: list[str], conn: Connection, *, owner: str, limit: int, history: bool
    ) -> list[Fact]:
        ranked = self._ranked(words, conn, owner=owner, limit=limit, history=history)
        # Text relevance normalised to 0..1, best = 1.
        top = max((rank for _, rank in ranked), default=1.0) or 1.0
        return [to_fact(r, rank / top if top > 0 else 1.0) for r, rank in ranked]

    def _ranked(
        self, words: list[str], conn: Connection, *, owner: str, limit: int, history: bool
    ) -> list[tuple[Any, float]]:
        """The best facts for `words` with their text relevance (higher is better). Words are
        matched by stem (porter on SQLite, english on PostgreSQL): "cats" finds "cat"."""
        if self.db.is_sqlite:
            return sqlite_ranked(conn, words, owner=owner, limit=limit, history=history, counts=self._counts)
        params = {"query": " | ".join(words), "owner": owner, "limit": limit, "history": history}
        return [(r, float(r.rank)) for r in conn.execute(POSTGRES_SEARCH, params)]

    def _hybrid(
        self,
        words: list[str],
        query: NDArray[np.float32],
        conn: Connection,
        *,
        owner: str,
        limit: int,
        history: bool,
        scan: Scan | None = None,
    ) -> list[Fact]:
        """Reciprocal rank fusion of the full-text and the vector ranking; every current fact before
        every retired one. Only the facts returned are read whole. `scan`: the vector scan, already
        running (`_scan`)."""
        keyword = [
            r
            for r, _ in self._ranked(words, conn, owner=owner, limit=max(limit, CANDIDATES), history=history)
        ]
        near = self._nearest(conn, query, owner, near_k(limit, history), scan)
        current = {r.id: r.retired_at is None for r in keyword}
        missing = [i for i, _ in near if i not in current]
        if missing:
            # By primary key only, owner and retirement checked here: with `owner = ?` in the query
            # SQLite may walk the owner's index, every fact of the owner (100 ms at 100,000).
            current.update(
                (fact_id, not retired)
                for fact_id, fact_owner, retired in fact_states(conn, missing)
                if fact_owner == owner and (history or not retired)
            )
        scores: dict[int, float] = {}
        for rank, row in enumerate(keyword):
            scores[row.id] = 1 / (RRF_K + rank + 1)
        for rank, fact_id in enumerate(i for i, _ in near if i in current):
            scores[fact_id] = scores.get(fact_id, 0.0) + 1 / (RRF_K + rank + 1)
        chosen = sorted(scores, key=lambda i: (not current[i], -scores[i]))[:limit]
        rows = {r.id: r for r in keyword}
        unread = [i for i in chosen if i not in rows]
        if unread:
            rows.update((r.id, r) for r in conn.execute(FACTS_BY_ID, {"ids": unread}))
        return [to_fact(rows[i], scores[i]) for i in chosen if i in rows]

    def _nearest(
        self,
        conn: Connection,
        query: NDArray[np.float32],
        owner: str,
        k: int,
        scan: Scan | None = None,
    ) -> list[tuple[int, float]]:
        """The owner's facts (current and retired) closest to `query`, at least `min_similarity`.
        `scan` is the scan of the vectors in memory, started before: used unless rows were added
        since (by another process), which it could not see."""
        name = self.embed_name
        vectors = self.vectors.get(owner)
        fresh = vectors is None or vectors.dim != query.size
        after = 0 if fresh or vectors is None else vectors.max_id
        tag = name.replace("%", "_") + "|%"
        found: list[Any]
        if fresh:  # every vector of the owner, once
            stmt = select(memory_facts.c.id, memory_facts.c.embedding).where(
                (memory_facts.c.owner == owner) & memory_facts.c.embedding.like(tag)
            )
            found = list(conn.execute(stmt))
        else:  # rows added since, by any process: a range of the primary key (not the owner index,
            # which would visit every fact of the owner), the owner checked here
            found = [r for r in conn.execute(_SINCE, {"after": after, "tag": tag}) if r.owner == owner]
        decoded = [(r.id, v, a) for r in found for v, a in (self._halves(r.embedding),) if v is not None]
        if fresh or decoded:
            if fresh:
                self.vectors.owners.pop(owner, None)
            vectors = self.vectors.load(owner, decoded, query.size)
            scan = None
        assert vectors is not None
        near = scan.result() if scan is not None else vectors.nearest(query, k)
        return [(i, s) for i, s in near if s >= self.min_similarity]

    async def backfill_embeddings(self, *, batch: int = 64) -> int:
        """Embed every fact (current or history) without a vector from this model; returns how many.
        Progress is logged (`memory.backfill`) after each batch; a failing batch stops the pass."""
        if self.embed is None:
            return 0
        name = self.embed_name
        stale = memory_facts.c.embedding.is_(None) | ~memory_facts.c.embedding.like(
            name.replace("%", "_") + "|%"
        )
        total = await self.db.read(
            lambda conn: conn.execute(
                select(func.count()).select_from(memory_facts).where(stale)
            ).scalar_one()
        )
        if not total:
            return 0
        log.info("memory.backfill_started", facts=total, model=name)
        done, after = 0, 0
        while True:
            stmt = (
                select(memory_facts)
                .where(stale & (memory_facts.c.id > after))
                .order_by(memory_facts.c.id)
                .limit(batch)
            )
            rows = await self.db.read(partial(all_rows, stmt))
            if not rows:
                break
            facts = [to_fact(r) for r in rows]
            try:
                vectors = await self._vectors(facts)
            except Exception as exc:
                log.warning("memory.backfill_failed", error=str(exc), done=done, facts=total)
                return done
            raws = [encode(name, v) for v in vectors]
            values = [{"fid": f.id, "raw": raw} for f, raw in zip(facts, raws, strict=True)]
            store = (
                update(memory_facts)
                .where(memory_facts.c.id == bindparam("fid"))
                .values(embedding=bindparam("raw"))
            )
            await self.db.write(partial(execute_many, store, values))
            for fact, raw in zip(facts, raws, strict=True):
                vector, about = self._halves(raw)
                if vector is not None:
                    self.vectors.put(fact.owner, fact.id, vector, about)
            done += len(facts)
            after = facts[-1].id
            log.info("memory.backfill", done=done, facts=total, model=name)
        return done

    async def get_all_facts(self, *, owner: str = DEFAULT_OWNER, limit: int | None = None) -> list[Fact]:
        query = (
            select(memory_facts)
            .where((memory_facts.c.owner == owner) & CURRENT)
            .order_by(memory_facts.c.category, memory_facts.c.updated_at.desc())
            .limit(limit)
        )
        return await self.db.read(lambda conn: [to_fact(r) for r in conn.execute(query)])

    async def get_fact(self, fact_id: int, *, owner: str | None = None) -> Fact | None:
        query = select(memory_facts).where(memory_facts.c.id == fact_id)
        if owner is not None:
            query = query.where(memory_facts.c.owner == owner)
        row = await self.db.read(lambda conn: conn.execute(query).first())
        return to_fact(row) if row is not None else None

    async def fact_history(self, fact_id: int, *, owner: str) -> list[Fact]:
        query = (
            select(memory_facts)
            .where((memory_facts.c.replaced_by == fact_id) & (memory_facts.c.owner == owner))
            .order_by(memory_facts.c.retired_at.desc(), memory_facts.c.id.desc())
        )
        return await self.db.read(lambda conn: [to_fact(r) for r in conn.execute(query)])

    async def retire_facts(
        self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER
    ) -> list[Fact]:
        cat = normalise(category) if category else None
        return await self.db.write(lambda conn: retire_rows(conn, owner, normalise(key), cat))

    async def delete_fact_by_id(self, fact_id: int, *, owner: str | None = None) -> bool:
        def write(conn: Connection) -> bool:
            where = memory_facts.c.id == fact_id
            if owner is not None:
                where &= memory_facts.c.owner == owner
            if not conn.execute(delete(memory_facts).where(where)).rowcount:
                return False
            conn.execute(delete(memory_facts).where(memory_facts.c.replaced_by == fact_id))
            return True

        return await self.db.write(write)

    async def delete_fact(self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER) -> int:
        where = (memory_facts.c.owner == owner) & (memory_facts.c.key == normalise(key))
        if category:
            where &= memory_facts.c.category == normalise(category)

        def write(conn: Connection) -> int:
            current = len(conn.execute(select(memory_facts.c.id).where(where & CURRENT)).all())
            conn.execute(delete(memory_facts).where(where))  # with their history
            return current

        return await self.db.write(write)

    async def get_summary(self, *, owner: str = DEFAULT_OWNER) -> str | None:
        query = select(memory_summary.c.content).where(memory_summary.c.owner == owner)
        return await self.db.read(lambda conn: conn.execute(query).scalar())

    async def set_summary(self, content: str, *, owner: str = DEFAULT_OWNER) -> None:
        def write(conn: Connection) -> None:
            now = utcnow()
            changed = conn.execute(
                update(memory_summary)
                .where(memory_summary.c.owner == owner)
                .values(content=content, updated_at=now)
            ).rowcount
            if not changed:
                conn.execute(insert(memory_summary).values(owner=owner, content=content, updated_at=now))

        await self.db.write(write)

    async def mark_session_extracted(self, session_id: str, at: datetime | None = None) -> None:
        when = at or utcnow()

        def write(conn: Connection) -> None:
            changed = conn.execute(
                update(session_memory_state)
                .where(session_memory_state.c.session_id == session_id)
                .values(extracted_at=when)
            ).rowcount
            if not changed:
                conn.execute(insert(session_memory_state).values(session_id=session_id, extracted_at=when))

        await self.db.write(write)

    async def get_extracted_at(self, session_id: str) -> datetime | None:
        query = select(session_memory_state.c.extracted_at).where(
            session_memory_state.c.session_id == session_id
        )
        value = await self.db.read(lambda conn: conn.execute(query).scalar())
        return as_utc(value) if value is not None else None


def near_k(limit: int, history: bool) -> int:
    """How many nearest vectors a search of `limit` facts fuses: retired facts are among the nearest
    too, so it looks further when they will be dropped."""
    return limit * 2 if history else limit * 3
