"""A search with the rescoring step (the built-in sentence encoder) takes each candidate's attribute
vector from the owner's vectors in memory, never by reading the stored vectors back from the
database; a fact stored by another process since is read with its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import event

from navi.memory.minilm import MiniLMEmbedder
from navi.storage.database import sqlite_url
from navi.storage.memory import SqlMemoryStore

MODEL = MiniLMEmbedder()  # the default built-in encoder: it rescores, so attribute vectors are kept


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[tuple[SqlMemoryStore, SqlMemoryStore]]:
    """Two stores on one file: this process's, and another process's (its own memory)."""
    url = sqlite_url(tmp_path / "m.db")
    mine, other = SqlMemoryStore.at(url, embed=MODEL), SqlMemoryStore.at(url, embed=MODEL)
    await mine.open()
    try:
        yield mine, other
    finally:
        await mine.aclose()
        await other.aclose()


def stored_vector_reads(store: SqlMemoryStore) -> list[str]:
    """The statements that read the stored vectors of a list of facts (as a search did for its
    candidates)."""
    reads: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        head = statement.split("FROM")[0]
        if "embedding" in head and "memory_facts.id IN (" in statement:
            reads.append(statement)

    event.listen(store.db.sync_engine, "before_cursor_execute", seen)
    return reads


async def test_the_attribute_vectors_come_from_memory(
    stores: tuple[SqlMemoryStore, SqlMemoryStore],
) -> None:
    mine, other = stores
    await mine.upsert_fact("pets", "dog_name", "Rex")
    await mine.upsert_fact("location", "home_city", "Porto")
    await mine.upsert_fact("preferences", "coffee", "flat white")
    first = await mine.search_facts("what is my puppy called")  # loads the owner's vectors
    vectors = mine.vectors.get("local")
    assert vectors is not None and len(vectors.attributes([1, 2, 3])) == 3
    reads = stored_vector_reads(mine)
    assert [f.value for f in await mine.search_facts("what is my puppy called")] == [f.value for f in first]
    assert first[0].value == "Rex"
    # The rescoring step still drops what the question is not about.
    assert await mine.search_facts("what is my sister's name") == []
    await mine.upsert_fact("pets", "cat_name", "Mia")  # stored by this process: in memory at once
    assert "Mia" in [f.value for f in await mine.search_facts("what is my kitten called")]
    await other.upsert_fact("family", "sister_name", "Ana")  # by another: read with its vectors
    assert [f.value for f in await mine.search_facts("what is my sister's name")] == ["Ana"]
    assert reads == [] and len(vectors.attributes([1, 2, 3, 4, 5])) == 5
