"""One memory contract, three stores: in memory, SQLite (FTS5) and PostgreSQL (tsvector)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from navi.memory.base import MemoryStore
from navi.memory.in_memory import InMemoryMemoryStore
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.memory import SqlMemoryStore

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryStore]:
    if request.param == "memory":
        s: MemoryStore = InMemoryMemoryStore()
    elif request.param == "sqlite":
        s = SqlMemoryStore.at(sqlite_url(tmp_path / "m.db"))
    else:
        s = SqlMemoryStore.at(postgres_url(request.getfixturevalue("pg_url")))
    await s.open()
    try:
        yield s
    finally:
        await s.aclose()


async def test_upsert_creates_updates_and_confirms(store: MemoryStore) -> None:
    fact, outcome = await store.upsert_fact("Location", "Home City", " Oslo ", session_id="s1")
    assert outcome == "created"
    assert (fact.category, fact.key, fact.value, fact.confirmations, fact.session_id) == (
        "location",
        "home_city",
        "Oslo",
        1,
        "s1",
    )
    again, outcome = await store.upsert_fact("location", "home city", "Oslo", session_id="s2")
    assert outcome == "confirmed" and again.id == fact.id and again.confirmations == 2
    assert again.session_id == "s2" and again.updated_at >= fact.updated_at
    moved, outcome = await store.upsert_fact("location", "home_city", "Bergen")
    assert (
        outcome == "updated" and moved.id == fact.id and moved.value == "Bergen" and moved.confirmations == 1
    )
    assert [f.value for f in await store.get_all_facts()] == ["Bergen"]


async def test_facts_are_unique_per_owner(store: MemoryStore) -> None:
    await store.upsert_fact("pets", "cat", "Miso", owner="alice")
    await store.upsert_fact("pets", "cat", "Felix", owner="bob")
    assert [f.value for f in await store.get_all_facts(owner="alice")] == ["Miso"]
    assert [f.value for f in await store.get_all_facts(owner="bob")] == ["Felix"]
    assert [f.value for f in await store.search_facts("cat", owner="bob")] == ["Felix"]
    alice = (await store.get_all_facts(owner="alice"))[0]
    assert await store.get_fact(alice.id, owner="bob") is None
    assert await store.delete_fact_by_id(alice.id, owner="bob") is False
    assert await store.delete_fact("cat", owner="bob") == 1
    assert [f.value for f in await store.get_all_facts(owner="alice")] == ["Miso"]


async def test_search_ranks_and_matches_any_term(store: MemoryStore) -> None:
    facts = [
        ("location", "home_city", "Oslo, Norway"),
        ("work", "employer", "Acme Robotics in Oslo"),
        ("pets", "cat", "Miso, a grey tabby cat"),
        ("devices", "nas", "Synology DS920+ at 192.168.1.10"),
        ("preferences", "coffee", "Flat white, no sugar"),
    ]
    for category, key, value in facts:
        await store.upsert_fact(category, key, value)
    oslo = await store.search_facts("Oslo")
    assert {f.key for f in oslo} == {"home_city", "employer"}
    either = await store.search_facts("coffee synology")
    assert {f.key for f in either} == {"coffee", "nas"}
    cat = await store.search_facts("tabby cat")
    assert cat[0].key == "cat"  # the fact matching both words ranks first
    assert (
        await store.search_facts("cats") and (await store.search_facts("cats"))[0].key == "cat"
    )  # prefix/stem
    assert await store.search_facts("bicycle") == []
    assert len(await store.search_facts("oslo", limit=1)) == 1


@pytest.mark.parametrize(
    "query", ['"', "cat AND", "NEAR(a b)", "*", "-cat", "cat OR", "x:y", "()", "'; DROP", ""]
)
async def test_odd_queries_never_break_search(store: MemoryStore, query: str) -> None:
    await store.upsert_fact("pets", "cat", "Miso")
    found = await store.search_facts(query)
    assert isinstance(found, list)


async def test_delete_and_listing(store: MemoryStore) -> None:
    await store.upsert_fact("b_category", "x", "1")
    await asyncio.sleep(0.01)
    await store.upsert_fact("a_category", "y", "2")
    await asyncio.sleep(0.01)
    await store.upsert_fact("a_category", "z", "3")
    await store.upsert_fact("other", "x", "4")
    listed = await store.get_all_facts()
    assert [(f.category, f.key) for f in listed] == [
        ("a_category", "z"),
        ("a_category", "y"),
        ("b_category", "x"),
        ("other", "x"),
    ]
    assert await store.delete_fact("x", category="b category") == 1
    assert await store.delete_fact("x") == 1
    assert await store.delete_fact("x") == 0
    z = next(f for f in await store.get_all_facts() if f.key == "z")
    assert (await store.get_fact(z.id)) is not None
    assert await store.delete_fact_by_id(z.id) is True
    assert await store.get_fact(z.id) is None
    assert [f.key for f in await store.search_facts("3")] == []
    assert len(await store.get_all_facts(limit=1)) == 1


async def test_summary_and_extraction_state(store: MemoryStore) -> None:
    assert await store.get_summary() is None
    await store.set_summary("Lives in Oslo.")
    await store.set_summary("Lives in Bergen.")
    await store.set_summary("Someone else.", owner="bob")
    assert await store.get_summary() == "Lives in Bergen."
    assert await store.get_summary(owner="bob") == "Someone else."
    assert await store.get_extracted_at("s1") is None
    await store.mark_session_extracted("s1")
    first = await store.get_extracted_at("s1")
    assert first is not None and first.tzinfo is not None
    await asyncio.sleep(0.01)
    await store.mark_session_extracted("s1")
    second = await store.get_extracted_at("s1")
    assert second is not None and second > first


async def test_empty_values_are_refused(store: MemoryStore) -> None:
    for category, key, value in (("pets", "cat", "   "), ("", "cat", "x"), ("pets", "!!!", "x")):
        with pytest.raises(ValueError):
            await store.upsert_fact(category, key, value)
    assert await store.get_all_facts() == []


CONCEPTS = {"animal": ("cat", "kitten", "feline", "pet", "miso"), "place": ("oslo", "city", "town", "norway")}


async def concept_embed(texts: list[str]) -> list[list[float]]:
    """A tiny stand-in embedding model: one dimension per concept, synonyms share it."""
    out = []
    for text_ in texts:
        words = text_.lower().replace(",", " ").split()
        out.append(
            [1.0 if any(w.startswith(s) for w in words for s in syn) else 0.0 for syn in CONCEPTS.values()]
        )
    return out


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_vectors_blend_in_when_an_embedder_is_set(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        sqlite_url(tmp_path / "v.db") if kind == "sqlite" else postgres_url(request.getfixturevalue("pg_url"))
    )
    store = SqlMemoryStore.at(url, embed=concept_embed)
    await store.open()
    try:
        await store.upsert_fact("pets", "cat", "Miso")
        await store.upsert_fact("location", "home", "Oslo")
        await store.upsert_fact("preferences", "coffee", "flat white")
        by_meaning = await store.search_facts("feline friend")  # no word in common with any fact
        assert by_meaning and by_meaning[0].key == "cat"
        by_words = await store.search_facts("coffee")
        assert by_words[0].key == "coffee"
    finally:
        await store.aclose()
