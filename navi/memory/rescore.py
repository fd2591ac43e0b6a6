"""The rescoring step of a hybrid memory search: does the question ask for this kind of fact?

The fused ranking (words and meaning, `SqlMemoryStore._hybrid`) finds a fact that is *near* the
question: "what is my cat's name" finds `pets: dog_name = Rex` by the words "my" and "name" and by
meaning, since a dog's name is close to a cat's. A question nothing answers should come back
empty, so each candidate is scored once more, by what it is *about*: the question's vector against
the vectors of the fact's attribute without its value — its key ("dog name") and its category with
its key ("pets dog name") — averaged. A value says little about which question a fact answers
("Rex") and pulls the fact's own vector towards anything it happens to resemble. Candidates below
the embedder's `attribute_floor` are dropped, the order of the others is kept — unless the fact
itself (its vector, value included) is at least `strong` alike: a question that names the value
("where did I live before I moved to Porto") is about that fact whatever its attribute's score.

A former value is kept whenever the current value of its category and key is: "where did I live
before Porto" keeps Lisbon since it keeps Porto.

The mean of the two cosines is the cosine with the mean of the two attribute vectors, so one
vector per fact is enough: it is made when the fact's own vector is, and stored after it
(`with_attributes`; navi/storage/memory.py keeps it in memory beside the fact's own, read with it
from the database once). A candidate stored without it (never embedded) has its attribute embedded
at search time, kept in this process.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from navi.memory.base import Fact

CACHED = 8192  # attribute vectors kept; past it the cache starts over


def attribute_texts(fact: Fact) -> tuple[str, str]:
    """What a fact is about, in two wordings: its key, and its category and key."""
    key = fact.key.replace("_", " ")
    return key, f"{fact.category.replace('_', ' ')} {key}"


def unit(vector: Sequence[float] | NDArray[np.float32]) -> NDArray[np.float32]:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


class Rescorer:
    """Drops candidates whose attribute is less alike the question than `floor` (cosine, mean of
    the two wordings). `embed` is the search's embedder: the question's vector is comparable."""

    def __init__(
        self, embed: Callable[[list[str]], Awaitable[list[list[float]]]], floor: float, strong: float
    ) -> None:
        self.embed = embed
        self.floor = floor
        self.strong = strong
        self._vectors: dict[str, NDArray[np.float32]] = {}

    async def vectors(self, texts: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        missing = sorted({t for t in texts if t not in self._vectors})
        if missing:
            made = await self.embed(missing)
            if len(self._vectors) + len(missing) > CACHED:
                self._vectors.clear()
            for text, vector in zip(missing, made, strict=True):
                self._vectors[text] = unit(vector)
        return {t: self._vectors[t] for t in texts if t in self._vectors}

    async def with_attributes(self, facts: Sequence[Fact], texts: Sequence[str]) -> list[list[float]]:
        """For each fact, the vector of its text (`texts`) followed by its attribute's vector (the
        mean of its two wordings' unit vectors): what the memory store keeps. One model call."""
        pairs = [attribute_texts(f) for f in facts]
        made = await self.embed([*texts, *(t for pair in pairs for t in pair)])
        out = []
        for n, vector in enumerate(made[: len(texts)]):
            first, second = (unit(made[len(texts) + 2 * n + i]) for i in (0, 1))
            out.append([*vector, *((first + second) / 2).tolist()])
        return out

    async def scores(
        self,
        query: NDArray[np.float32],
        facts: Sequence[Fact],
        about: Mapping[int, NDArray[np.float32]] | None = None,
    ) -> list[float]:
        """Each fact's attribute score for the question whose vector is `query`; `about`: attribute
        vectors already at hand, by fact id (the others are embedded)."""
        query = unit(query)
        stored = {i: v for i, v in (about or {}).items() if v.shape == query.shape}
        missing = [attribute_texts(f) for f in facts if f.id not in stored]
        found = await self.vectors([t for pair in missing for t in pair])
        scores = []
        for fact in facts:
            if fact.id in stored:
                scores.append(float(stored[fact.id] @ query))
            else:
                a, b = attribute_texts(fact)
                scores.append(float((found[a] + found[b]) @ query) / 2)
        return scores

    async def keep(
        self,
        query: NDArray[np.float32],
        facts: Sequence[Fact],
        limit: int,
        similarity: Mapping[int, float] | None = None,
        about: Mapping[int, NDArray[np.float32]] | None = None,
    ) -> list[Fact]:
        """The facts (in their order) that are about what the question asks, at most `limit`.
        `similarity`: each fact's own cosine with the question, where known; `about`: their stored
        attribute vectors."""
        if not facts:
            return []
        similarity = similarity or {}
        scores = await self.scores(query, facts, about)
        kept = {
            f.id
            for f, s in zip(facts, scores, strict=True)
            if s >= self.floor or similarity.get(f.id, 0.0) >= self.strong
        }
        attributes = {(f.category, f.key) for f in facts if f.id in kept and f.retired_at is None}
        return [
            f
            for f in facts
            if f.id in kept or (f.retired_at is not None and (f.category, f.key) in attributes)
        ][:limit]
