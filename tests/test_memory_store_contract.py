"""One memory contract, three stores: in memory, SQLite (FTS5) and PostgreSQL (tsvector)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from structlog.testing import capture_logs

from navi.memory.base import MAX_QUERY_TERMS, MemoryStore, query_terms
from navi.memory.in_memory import InMemoryMemoryStore
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
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
    for category, key, value in (
        ("pets", "cat", "   "),
        ("", "cat", "x"),
        ("pets", "!!!", "x"),
        ("c" * 65, "k", "x"),
        ("c", "k" * 129, "x"),
    ):
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


async def test_a_changed_value_updates_and_keeps_the_old_one_as_history(store: MemoryStore) -> None:
    lisbon, outcome = await store.upsert_fact("location", "home_city", "Lisbon", session_id="s1")
    assert outcome == "created" and lisbon.source == "extracted" and lisbon.current
    porto, outcome = await store.upsert_fact(
        "Location", "Home City", "Porto", session_id="s2", source="remembered"
    )
    assert outcome == "updated" and porto.id == lisbon.id
    assert (porto.value, porto.source, porto.session_id, porto.retired_at) == (
        "Porto",
        "remembered",
        "s2",
        None,
    )
    # One current fact, no contradiction: listing and default search know only Porto.
    assert [f.value for f in await store.get_all_facts()] == ["Porto"]
    assert [f.value for f in await store.search_facts("home city")] == ["Porto"]
    assert await store.search_facts("Lisbon") == []
    # The old value is history, with its own dates and source.
    (old,) = await store.fact_history(porto.id, owner="local")
    assert (old.value, old.session_id, old.source, old.replaced_by) == ("Lisbon", "s1", "extracted", porto.id)
    assert old.created_at == lisbon.created_at and old.retired_at is not None
    assert old.retired_at >= old.updated_at and not old.current
    assert (await store.get_fact(old.id)) == old
    # History on request, ranked below every current fact even when it matches better.
    found = await store.search_facts("home city Lisbon", history=True)
    assert [(f.value, f.current) for f in found] == [("Porto", True), ("Lisbon", False)]
    # Back to Lisbon: a second step of history, newest first.
    await store.upsert_fact("location", "home_city", "Lisbon")
    assert [f.value for f in await store.fact_history(porto.id, owner="local")] == ["Porto", "Lisbon"]
    assert await store.fact_history(porto.id, owner="bob") == []


async def test_the_same_value_merges_as_a_confirmation(store: MemoryStore) -> None:
    fact, _ = await store.upsert_fact("pets", "cat", "Miso, a grey tabby")
    for said in ("miso,  a grey tabby.", "MISO, A GREY TABBY"):
        again, outcome = await store.upsert_fact("pets", "cat", said)
        assert outcome == "confirmed" and again.id == fact.id and again.value == "Miso, a grey tabby"
    assert (await store.get_fact(fact.id)).confirmations == 3  # type: ignore[union-attr]
    assert await store.fact_history(fact.id, owner="local") == []
    assert len(await store.search_facts("miso", history=True)) == 1


async def test_forgetting_retires_and_deleting_removes_the_history(store: MemoryStore) -> None:
    cat, _ = await store.upsert_fact("pets", "cat", "Miso")
    await store.upsert_fact("pets", "cat", "Felix")
    await store.upsert_fact("pets", "cat", "Tom", owner="bob")
    assert await store.retire_facts("cat", "animals") == []
    (retired,) = await store.retire_facts("Cat")
    assert (retired.id, retired.value, retired.current) == (cat.id, "Felix", False)
    assert await store.get_all_facts() == [] and await store.search_facts("felix") == []
    assert {f.value for f in await store.search_facts("cat", history=True)} == {"Miso", "Felix"}
    assert [f.value for f in await store.get_all_facts(owner="bob")] == ["Tom"]
    assert await store.edit_fact(cat.id, "Garfield", owner="local") is None  # retired: not editable
    # Told again later: a new fact, the forgotten one is not brought back.
    new, outcome = await store.upsert_fact("pets", "cat", "Garfield")
    assert outcome == "created" and new.id != cat.id
    assert await store.fact_history(new.id, owner="local") == []
    # Deleting a fact deletes its history with it.
    assert await store.delete_fact_by_id(cat.id) is True
    assert {f.value for f in await store.search_facts("cat", history=True)} == {"Garfield"}
    await store.upsert_fact("pets", "cat", "Odie")
    assert await store.delete_fact("cat") == 1
    assert await store.search_facts("cat", history=True) == []


async def test_editing_a_fact_keeps_the_old_value(store: MemoryStore) -> None:
    fact, _ = await store.upsert_fact("work", "employer", "Acme", owner="alice", session_id="s1")
    assert await store.edit_fact(fact.id, "Initech", owner="bob") is None  # not bob's
    assert await store.edit_fact(fact.id + 1000, "Initech", owner="alice") is None
    with pytest.raises(ValueError):
        await store.edit_fact(fact.id, "   ", owner="alice")
    edited = await store.edit_fact(fact.id, "Initech", owner="alice")
    assert edited is not None
    assert (edited[0].id, edited[0].value, edited[0].source, edited[1]) == (
        fact.id,
        "Initech",
        "edited",
        "updated",
    )
    assert edited[0].session_id is None  # the new value came from no conversation
    (old,) = await store.fact_history(fact.id, owner="alice")
    assert (old.value, old.session_id) == ("Acme", "s1")
    same = await store.edit_fact(fact.id, "initech", owner="alice")
    assert same is not None and same[1] == "confirmed"


async def test_every_decision_is_logged(store: MemoryStore) -> None:
    with capture_logs() as logs:
        fact, _ = await store.upsert_fact("location", "home_city", "Lisbon", session_id="s1")
        await store.upsert_fact("location", "home_city", "lisbon")
        await store.upsert_fact("location", "home_city", "Porto", source="remembered")
        await store.retire_facts("home_city")
    decisions = [e for e in logs if e["event"] == "memory.decision"]
    assert [(e["decision"], e["fact_id"], e["source"]) for e in decisions] == [
        ("add", fact.id, "extracted"),
        ("ignore", fact.id, "extracted"),
        ("update", fact.id, "remembered"),
        ("retire", fact.id, "forget"),
    ]
    assert decisions[2]["history_id"] is not None and decisions[0]["session_id"] == "s1"
    assert not any("Lisbon" in str(e) or "Porto" in str(e) for e in decisions)  # values stay out of logs


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_facts_written_before_0014_survive_it(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A database from before fact history: its facts and their full-text index carry over."""
    url = (
        sqlite_url(tmp_path / "old.db")
        if kind == "sqlite"
        else postgres_url(request.getfixturevalue("pg_empty_url"))
    )
    db = Database(url)
    await migrate.upgrade(db, "0013")
    old = text(
        "INSERT INTO memory_facts (owner, category, key, value, created_at, updated_at, confirmations) "
        "VALUES ('local', 'location', 'home_city', 'Lisbon', :at, :at, 2)"
    )
    at = datetime(2026, 1, 2, 10, tzinfo=UTC)
    await db.write(lambda conn: conn.execute(old, {"at": at}))
    await migrate.upgrade(db, "0014")
    assert await migrate.current_revision(db) == "0014"
    await migrate.upgrade(db)  # and the migrations since, which the store's statements use
    store = SqlMemoryStore(db)
    try:
        (fact,) = await store.search_facts("lisbon")
        assert (fact.value, fact.confirmations, fact.source, fact.current) == ("Lisbon", 2, "extracted", True)
        assert fact.created_at == at
        moved, outcome = await store.upsert_fact("location", "home_city", "Porto")
        assert outcome == "updated" and moved.id == fact.id
        found = await store.search_facts("lisbon porto", history=True)
        assert [f.value for f in found] == ["Porto", "Lisbon"]
        # Only one current fact per category and key, even for a writer that skips the store's checks.
        with pytest.raises(IntegrityError):
            await db.write(
                lambda conn: conn.execute(
                    text(
                        "INSERT INTO memory_facts (owner, category, key, value, created_at, updated_at) "
                        "VALUES ('local', 'location', 'home_city', 'Braga', :at, :at)"
                    ),
                    {"at": at},
                )
            )
    finally:
        await db.dispose()


async def test_other_users_facts_never_push_mine_out_of_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite ranks the newest WINDOW matches; they are the searching user's own current ones, so a
    busier user's newer facts (or my retired ones) never leave my search empty."""
    from navi.storage import memory_sql

    monkeypatch.setattr(memory_sql, "WINDOW", 2)
    s = SqlMemoryStore.at(sqlite_url(tmp_path / "m.db"))
    await s.open()
    try:
        await s.upsert_fact("food", "fruit", "kiwi", owner="alice")
        await s.upsert_fact("food", "snack", "dried kiwi", owner="alice")
        await s.upsert_fact("food", "snack", "fresh kiwi", owner="alice")  # the old value is retired
        for n in range(3):
            await s.upsert_fact("food", f"fruit_{n}", f"kiwi {n}", owner="bob")
        found = await s.search_facts("kiwi", owner="alice")
        assert sorted(f.value for f in found) == ["fresh kiwi", "kiwi"]
        assert len(await s.search_facts("kiwi", owner="bob")) == 2  # the window: bob's newest two
    finally:
        await s.aclose()


async def test_a_search_reads_only_the_first_words_of_a_huge_query(store: MemoryStore) -> None:
    """A model may paste a whole document into `memory_search`: only the first MAX_QUERY_TERMS
    distinct words of its first MAX_QUERY_CHARS are looked for (a 160 kB query held SQLite's
    thread for 2.3 s before)."""
    await store.upsert_fact("location", "home_city", "Lisbon")
    filler = [f"filler{i}" for i in range(5_000)]
    assert len(query_terms(" ".join(filler))) == MAX_QUERY_TERMS
    found = await store.search_facts(" ".join(["lisbon", *filler]))
    assert [f.value for f in found] == ["Lisbon"]
    assert await store.search_facts(" ".join([*filler[:MAX_QUERY_TERMS], "lisbon"])) == []
    # Repeated words count once: the word after them is still looked for.
    assert [f.value for f in await store.search_facts("city " * 500 + "lisbon")] == ["Lisbon"]


async def test_other_users_facts_never_move_my_ranking(store: MemoryStore) -> None:
    """A word weighs by the searching user's own facts only: bob's facts full of "apple" change
    neither what alice finds for "apple banana", nor its order, nor the scores. Counted over
    everyone's facts (as FTS5's bm25 counts), apple would weigh next to nothing against banana,
    and alice's apple would fall from first to last on SQLite."""
    mine = [
        ("food", "fruit", "apple"),
        ("food", "snack", "banana"),
        ("food", "bread", "banana bread"),
        ("food", "dessert", "banana split"),
        ("drinks", "tea", "green tea"),
        ("drinks", "coffee", "flat white"),
        ("home", "city", "Oslo"),
        ("pets", "cat", "Miso"),
    ]
    for category, key, value in mine:
        await store.upsert_fact(category, key, value, owner="alice")

    async def found() -> list[tuple[int, str, float]]:
        # On SQL, a store made afresh on the same database: nothing counted before is kept.
        fresh = SqlMemoryStore(store.db) if isinstance(store, SqlMemoryStore) else store
        return [(f.id, f.value, f.score) for f in await fresh.search_facts("apple banana", owner="alice")]

    alone = await found()
    assert sorted(value for _, value, _ in alone) == ["apple", "banana", "banana bread", "banana split"]
    if isinstance(store, SqlMemoryStore) and store.db.is_sqlite:
        # BM25 among her facts: apple is in one of them, banana in three, so apple weighs more.
        assert [value for _, value, _ in alone] == ["apple", "banana", "banana split", "banana bread"]
    for n in range(30):
        await store.upsert_fact("food", f"pie_{n}", f"apple pie number {n}", owner="bob")
    await store.upsert_fact("food", "fruit", "apple", owner="bob")
    await store.upsert_fact("food", "fruit", "green apple", owner="bob")  # the apple retired: history
    assert await found() == alone
    assert len(await store.search_facts("apple", owner="bob", limit=50)) == 31


async def test_a_common_word_is_estimated_from_my_facts_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite a word in more of a user's facts than COUNT_CAP is estimated from how far back
    its newest COUNT_CAP reach among that user's facts: bob's facts written between alice's (which
    spread her ids apart) leave her scores as they are in a database of her own."""
    from navi.storage import fact_rank

    monkeypatch.setattr(fact_rank, "COUNT_CAP", 2)
    values = ["apple tart", "apple", "plum", "apple jam", "banana", "pear", "apple cider", "banana"]
    values += ["fig", "apple pie", "kiwi", "banana bread"]

    async def scores(with_bob: bool) -> list[tuple[str, str, float]]:
        s = SqlMemoryStore.at(sqlite_url(tmp_path / f"{with_bob}.db"))
        await s.open()
        try:
            for n, value in enumerate(values):
                await s.upsert_fact("food", f"item_{n}", value, owner="alice")
                for m in range(8 if with_bob and n < 4 else 0):  # many early on, none later
                    await s.upsert_fact("notes", f"note_{n}_{m}", "lunch at noon", owner="bob")
            found = await s.search_facts("apple banana", owner="alice")
            return [(f.key, f.value, f.score) for f in found]
        finally:
            await s.aclose()

    alone = await scores(with_bob=False)
    assert len(alone) == 8
    assert await scores(with_bob=True) == alone
