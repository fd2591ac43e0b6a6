"""Finding passages in a person's documents for the agent: the `search_documents` tool, the
excerpts put before a turn's answer, and the MCP server's tool all search through `Retrieval`.

A search is hybrid when an embedder is wired (the one memory uses and the indexer embeds chunks
with, so the query vector is comparable): the store fuses keyword and vector ranks
(`DocumentStore.search`). Every search is one owner's; a collection or a document named by
another owner's id or name is as unknown as one that does not exist.

The excerpts before a turn (`for_turn`) are held to a stricter standard than a search the model
asked for, since nobody asked for them: the question's function words are left out of the keyword
query (a greeting matches no passage), a passage found by meaning alone must be at least as close
as the embedder's `min_similarity`, in each ranking only the passages scoring at least half the
best one's are kept (`leading`), and the passages kept fit a token budget.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol

from navi.documents.base import Collection, Document, DocumentStore, Hit

RRF_K = 60  # reciprocal rank fusion, as the store's own
LEADING = 0.5  # of the best score of a ranking: what a passage before a turn must reach
_MARKER = re.compile(r"<\s*/?\s*documents\s*>", re.IGNORECASE)
CHUNK_ID = re.compile(r"^doc_(\d{1,18})$")
# Words that say nothing about which passage is meant (English; other languages' function words are
# rarer in passages of another language, and BM25 weighs common words down anyway).
_FUNCTION = """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each else few for from
    further had has have having he her here hers him his how i if in into is it its just me more
    most my no nor not now of off on once only or other our out over own please same say says
    she should so some such tell than thank thanks that the their them then there these they this
    those through to too under until up very was we were what when where which while who whom
    why will with would you your yours hello hi hey ok okay yes"""
FUNCTION_WORDS = frozenset(_FUNCTION.split())


class Embed(Protocol):
    """Memory's embedder, as far as search needs it (navi/memory/embedders.py)."""

    name: str
    min_similarity: float

    def __call__(self, texts: list[str]) -> Awaitable[list[list[float]]]: ...


def recall_key(chunk_id: int) -> str:
    """The key `recall` reads a hit's whole passage with."""
    return f"doc_{chunk_id}"


def chunk_of(key: str) -> int | None:
    """The chunk id a recall key names, or None when it names none."""
    found = CHUNK_ID.match(key.strip().strip("\"'`"))
    return int(found.group(1)) if found else None


def quoted(text: str) -> str:
    """`text` as a `<documents>` block quotes it (navi/agent/quoting.py): its markers taken out, so a
    document cannot close the block."""
    return _MARKER.sub("(documents)", text)


def short_citation(hit: Hit) -> str:
    """How an answer cites the passage: "(contract.pdf, p. 12)", "(deck.pptx, slide 3)"."""
    place = hit.place
    where = (
        f"p. {place.page}"
        if place.page is not None
        else f"slide {place.slide}"
        if place.slide is not None
        else f"sheet {place.sheet}"
        if place.sheet is not None
        else ""
    )
    name = quoted(" ".join(hit.document_name.split()))
    return f"({name}, {where})" if where else f"({name})"


def content_words(text: str) -> str:
    """`text` without its function words (for the keyword half of a search nobody asked for)."""
    return " ".join(w for w in re.findall(r"[^\W_]+", text) if w.lower() not in FUNCTION_WORDS)


@dataclass
class Retrieval:
    """Search over `store` for one owner at a time; `embed` (None: keyword-only) makes it hybrid."""

    store: DocumentStore
    embed: Embed | None = None

    async def _vector(self, query: str) -> list[float] | None:
        if self.embed is None or not query.strip():
            return None
        return (await self.embed([query]))[0]

    async def search(
        self,
        owner: str,
        query: str,
        *,
        collections: Sequence[str] | None = None,
        documents: Sequence[str] | None = None,
        limit: int = 5,
    ) -> list[Hit]:
        """The owner's best passages for `query`, best first (see `DocumentStore.search`); its
        function words are left out of the keyword half unless it has no other words."""
        vector = await self._vector(query)
        return await self.store.search(
            owner,
            content_words(query) or query,  # "what does it say about X": X's words, not "it"'s
            collections=None if collections is None else list(collections),
            documents=None if documents is None else list(documents),
            limit=limit,
            query_vector=vector,
            embedder=self.embed.name if self.embed is not None and vector is not None else None,
        )

    async def passage(self, owner: str, chunk_id: int) -> tuple[Hit, str] | None:
        return await self.store.passage(owner, chunk_id)

    async def collection(self, owner: str, ref: str) -> Collection | None:
        """The owner's collection with this id, else with this name (case-insensitive)."""
        ref = ref.strip()
        found = await self.store.get_collection(owner, ref)
        if found is not None:
            return found
        named = [c for c in await self.store.list_collections(owner) if c.name.casefold() == ref.casefold()]
        exact = [c for c in named if c.name == ref]
        return (exact or named)[0] if named else None

    async def document(self, owner: str, ref: str, collection: str | None = None) -> Document | None:
        """The owner's document with this id, else with this name (in `collection`, if given)."""
        ref = ref.strip()
        found = await self.store.get_document(owner, ref)
        if found is not None and collection in (None, found.collection_id):
            return found
        named = [
            d
            for d in await self.store.list_documents(owner, collection)
            if d.name.casefold() == ref.casefold()
        ]
        exact = [d for d in named if d.name == ref]
        return (exact or named)[0] if named else None

    async def for_turn(
        self, owner: str, collections: Sequence[str], question: str, limit: int = 4
    ) -> list[Hit]:
        """The passages of `collections` worth showing the model before it answers `question`,
        best first: found by its content words, or by meaning at least `min_similarity` close."""
        if not collections or not question.strip():
            return []
        scope = list(collections)
        words = content_words(question)
        by_words = await self.store.search(owner, words, collections=scope, limit=limit) if words else []
        by_meaning: list[Hit] = []
        vector = await self._vector(question)
        if vector is not None and self.embed is not None:
            near = await self.store.search(
                owner, "", collections=scope, limit=limit, query_vector=vector, embedder=self.embed.name
            )
            by_meaning = [h for h in near if h.score >= self.embed.min_similarity]
        return fused([leading(by_words), leading(by_meaning)], limit)

    async def for_session(
        self, owner: str, session_id: str, question: str, also: Sequence[str] = ()
    ) -> list[Hit]:
        """`for_turn` over the collections the conversation reads (`DocumentStore.attached`) and
        `also` (collection ids the message itself names)."""
        ids = [c.id for c in await self.store.attached(owner, session_id)]
        return await self.for_turn(owner, [*ids, *(i for i in also if i not in ids)], question)


def leading(ranking: Sequence[Hit]) -> list[Hit]:
    """The hits of a ranking (best first) that score at least `LEADING` of the best one's: a
    passage that shares one common word with the question, beside one that shares all of them,
    is not worth the small window's room."""
    if not ranking:
        return []
    best = ranking[0].score
    return [h for h in ranking if h.score >= best * LEADING]


def fused(rankings: Sequence[Sequence[Hit]], limit: int) -> list[Hit]:
    """Reciprocal rank fusion of rankings of hits (each best first)."""
    scores: dict[int, float] = {}
    first: dict[int, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (RRF_K + rank)
            first.setdefault(hit.chunk_id, hit)
    order = sorted(scores, key=lambda i: -scores[i])[:limit]
    return [first[i] for i in order]
