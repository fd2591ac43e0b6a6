"""Hybrid memory search (full-text + vectors, fused by reciprocal rank) on SQLite and PostgreSQL,
with the real built-in embedding model (WordLlama from its wheel) and with a served one."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from structlog.testing import capture_logs

from navi.cli.doctor import run_checks
from navi.compose.models import build_backends, embedder
from navi.config import Settings
from navi.memory import minilm
from navi.memory.embedders import BUILTIN_DIM, BUILTIN_NAME, BuiltinEmbedder
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.memory import SqlMemoryStore
from navi.storage.schema import memory_facts
from navi.storage.vectors import decode
from navi.testing.fake_server import FakeModelServer, fake_embedding

KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
BUILTIN = BuiltinEmbedder()  # loaded once for the module (about a second)


def url_for(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return sqlite_url(tmp_path / "h.db")
    return postgres_url(request.getfixturevalue("pg_url"))


@pytest.fixture(params=KINDS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return url_for(request.param, tmp_path, request)


@pytest.fixture
async def hybrid(url: str) -> AsyncIterator[SqlMemoryStore]:
    store = SqlMemoryStore.at(url, embed=BUILTIN)
    await store.open()
    try:
        yield store
    finally:
        await store.aclose()


async def plant(store: SqlMemoryStore) -> None:
    await store.upsert_fact("location", "home_city", "Porto")
    await store.upsert_fact("pets", "dog_name", "Rex")
    await store.upsert_fact("family", "sister_name", "Ana")
    await store.upsert_fact("preferences", "coffee", "flat white")


async def test_a_paraphrase_is_found_by_meaning_where_keywords_miss(url: str, hybrid: SqlMemoryStore) -> None:
    await plant(hybrid)
    keyword_only = SqlMemoryStore.at(url)
    await keyword_only.open()
    try:
        # No word of these questions is in the facts: full-text search finds nothing …
        assert await keyword_only.search_facts("what is my puppy called") == []
        assert await keyword_only.search_facts("what is my sibling called") == []
    finally:
        await keyword_only.aclose()
    # … and the same store with the embedding model answers by meaning.
    assert (await hybrid.search_facts("what is my puppy called"))[0].value == "Rex"
    assert (await hybrid.search_facts("what is my sibling called"))[0].value == "Ana"
    # Words still count: an exact word ranks its fact first.
    assert (await hybrid.search_facts("coffee"))[0].key == "coffee"


async def test_a_question_with_no_answer_in_memory_finds_nothing(hybrid: SqlMemoryStore) -> None:
    await plant(hybrid)
    assert await hybrid.search_facts("when is my birthday") == []


async def test_the_current_value_ranks_above_the_retired_one(hybrid: SqlMemoryStore) -> None:
    await hybrid.upsert_fact("location", "home_city", "Lisbon")
    await hybrid.upsert_fact("pets", "dog_name", "Rex")
    await hybrid.upsert_fact("location", "home_city", "Porto")  # moved: Lisbon becomes history
    # Without history only Porto, even asked for Lisbon by name.
    found = await hybrid.search_facts("Lisbon home city")
    assert [f.value for f in found] == ["Porto"]
    # With history, Lisbon matches the words better, and still comes after every current fact.
    found = await hybrid.search_facts("Lisbon home city", history=True)
    values = [(f.value, f.current) for f in found]
    assert values[0] == ("Porto", True) and ("Lisbon", False) in values
    assert values.index(("Lisbon", False)) > max(i for i, (_, cur) in enumerate(values) if cur)
    # The new value was embedded (not the old one's vector kept).
    vectors = hybrid.vectors.get("local")
    assert vectors is not None
    porto = found[0]
    row = await hybrid.db.read(
        lambda c: c.execute(select(memory_facts.c.embedding).where(memory_facts.c.id == porto.id)).scalar()
    )
    assert row is not None and row.startswith(BUILTIN_NAME + "|")
    (expected,) = await BUILTIN(["location home city Porto"])
    stored = decode(BUILTIN_NAME, row)
    assert stored is not None and abs(float(stored[0]) - expected[0]) < 1e-6


async def test_facts_are_per_owner_by_meaning_too(hybrid: SqlMemoryStore) -> None:
    await hybrid.upsert_fact("pets", "dog_name", "Rex", owner="alice")
    assert await hybrid.search_facts("what is my puppy called", owner="bob") == []
    assert [f.value for f in await hybrid.search_facts("what is my puppy called", owner="alice")] == ["Rex"]


async def test_backfill_embeds_facts_stored_before_the_model(url: str) -> None:
    plain = SqlMemoryStore.at(url)
    await plain.open()
    try:
        await plant(plain)
        await plain.upsert_fact("location", "home_city", "Braga")  # one retired value too
        # One fact carries a vector from another model: it is re-embedded, never compared.
        await plain.db.write(
            lambda c: c.execute(
                update(memory_facts).where(memory_facts.c.key == "dog_name").values(embedding="other|AAAA")
            )
        )
    finally:
        await plain.aclose()
    store = SqlMemoryStore.at(url, embed=BUILTIN)
    await store.open()
    try:
        assert await store.search_facts("what is my puppy called") == []  # no vectors yet
        with capture_logs() as logs:
            done = await store.backfill_embeddings(batch=2)
        assert done == 5
        progress = [e for e in logs if e["event"] == "memory.backfill"]
        assert [e["done"] for e in progress] == [2, 4, 5] and progress[-1]["facts"] == 5
        assert (await store.search_facts("what is my puppy called"))[0].value == "Rex"
        assert await store.backfill_embeddings() == 0  # nothing left
        raws = await store.db.read(lambda c: c.execute(select(memory_facts.c.embedding)).scalars().all())
        assert all(r and r.startswith(BUILTIN_NAME + "|") for r in raws)
    finally:
        await store.aclose()


async def test_a_failing_model_leaves_keyword_search_working(url: str) -> None:
    calls: list[list[str]] = []

    async def broken(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        raise RuntimeError("model server down")

    store = SqlMemoryStore.at(url, embed=broken)
    await store.open()
    try:
        await store.upsert_fact("preferences", "coffee", "flat white")  # stored, without a vector
        with capture_logs() as logs:
            assert [f.key for f in await store.search_facts("coffee")] == ["coffee"]
        assert calls and any(e["event"] == "memory.embed_failed" for e in logs)
    finally:
        await store.aclose()


async def test_a_served_embedding_model_through_ollama_api_embed(
    fake_server: FakeModelServer, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = make_settings(ollama_host=fake_server.url, memory_embed_model="gemma4:e2b-it-q8_0")
    backends = build_backends(settings)
    embed = embedder(settings, backends)
    assert embed is not None and embed.name == "ollama:gemma4:e2b-it-q8_0"
    store = SqlMemoryStore.at(sqlite_url(tmp_path / "s.db"), embed=embed)
    await store.open()
    try:
        fact, _ = await store.upsert_fact("preferences", "coffee", "flat white")
        raw = await store.db.read(
            lambda c: c.execute(select(memory_facts.c.embedding).where(memory_facts.c.id == fact.id)).scalar()
        )
        stored = decode("ollama:gemma4:e2b-it-q8_0", raw)
        assert stored is not None
        assert [round(float(x), 5) for x in stored] == [
            round(x, 5) for x in fake_embedding("preferences coffee flat white")
        ]
        assert [f.key for f in await store.search_facts("coffee")] == ["coffee"]
    finally:
        await store.aclose()
        await backends.aclose()


async def doctor_lines(settings: Settings) -> list[str]:
    return [check.what async for check in run_checks(settings) if check.what.startswith("memory search")]


async def test_doctor_says_which_memory_search_is_in_use(
    fake_server: FakeModelServer, make_settings: Callable[..., Any]
) -> None:
    (line,) = await doctor_lines(make_settings(ollama_host=fake_server.url))
    assert "keyword-only" in line
    settings = make_settings(ollama_host=fake_server.url, memory_embed_model="builtin:wordllama")
    (line,) = await doctor_lines(settings)
    assert (
        "hybrid" in line and BUILTIN_NAME in line and "SQLite" in line and f"{BUILTIN_DIM} dimensions" in line
    )
    # "builtin" is the sentence embedder, rescored.
    (line,) = await doctor_lines(make_settings(ollama_host=fake_server.url, memory_embed_model="builtin"))
    assert minilm.NAME in line and f"{minilm.DIM} dimensions" in line and "rescored" in line


async def lisbon_axis(texts: list[str]) -> list[list[float]]:
    """A scripted model for which only texts naming Lisbon are alike."""
    return [[1.0, 0.0] if "lisbon" in t.lower() else [0.0, 1.0] for t in texts]


async def test_a_retired_value_closer_in_words_and_meaning_still_ranks_below_the_current(url: str) -> None:
    store = SqlMemoryStore.at(url, embed=lisbon_axis)
    await store.open()
    try:
        await store.upsert_fact("location", "home_city", "Lisbon")
        await store.upsert_fact("location", "home_city", "Porto")
        # Lisbon (history) is first by meaning and in the full-text matches: fused, it outscores Porto.
        found = await store.search_facts("home city Lisbon", history=True)
        assert [(f.value, f.current) for f in found] == [("Porto", True), ("Lisbon", False)]
        assert found[1].score > found[0].score
    finally:
        await store.aclose()


async def test_a_served_embedding_model_through_openai_v1_embeddings(
    fake_server: FakeModelServer, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = make_settings(
        default_llm_backend="openai",
        openai_base_url=fake_server.openai_url,
        memory_embed_model="gemma4:e2b-it-q8_0",
    )
    backends = build_backends(settings)
    embed = embedder(settings, backends)
    assert embed is not None and embed.name == "openai:gemma4:e2b-it-q8_0"
    store = SqlMemoryStore.at(sqlite_url(tmp_path / "o.db"), embed=embed)
    await store.open()
    try:
        fact, _ = await store.upsert_fact("pets", "dog_name", "Rex")
        raw = await store.db.read(
            lambda c: c.execute(select(memory_facts.c.embedding).where(memory_facts.c.id == fact.id)).scalar()
        )
        stored = decode(embed.name, raw)
        assert stored is not None
        assert [round(float(x), 5) for x in stored] == [
            round(x, 5) for x in fake_embedding("pets dog name Rex")
        ]
        # The fake's vectors are bags of words: "dog" alone is close enough to be found by meaning.
        assert [f.value for f in await store.search_facts("dog")] == ["Rex"]
    finally:
        await store.aclose()
        await backends.aclose()


async def test_facts_another_process_adds_are_found_by_meaning(url: str, hybrid: SqlMemoryStore) -> None:
    await hybrid.upsert_fact("preferences", "coffee", "flat white")
    assert await hybrid.search_facts("what is my puppy called") == []  # this process's vectors loaded
    other = SqlMemoryStore.at(url, embed=BUILTIN)  # another worker on the same database
    await other.open()
    try:
        await other.upsert_fact("pets", "dog_name", "Rex", owner="bob")
        await other.upsert_fact("pets", "dog_name", "Bolt")
    finally:
        await other.aclose()
    assert [f.value for f in await hybrid.search_facts("what is my puppy called")] == ["Bolt"]
    assert [f.value for f in await hybrid.search_facts("what is my puppy called", owner="bob")] == ["Rex"]


async def test_the_server_backfills_vectors_in_the_background_and_says_hybrid(tmp_path: Path) -> None:
    from navi.compose.services import build_services
    from tests.agent_helpers import scripted_runtime

    before = SqlMemoryStore.at(sqlite_url(tmp_path / "navi.db"))  # facts from before the model was set
    await before.open()
    await plant(before)
    await before.aclose()
    with capture_logs() as logs:
        rt, _, _ = await scripted_runtime(tmp_path, sql=True, memory_embed_model="builtin")
    services = build_services(rt, schedules=False, background=True, owns_runtime=True)
    await services.start()
    try:
        assert isinstance(rt.memory, SqlMemoryStore)
        for _ in range(300):  # the backfill runs beside the server, not before it answers
            if await rt.memory.search_facts("what is my puppy called"):
                break
            await asyncio.sleep(0.1)
        assert [f.value for f in await rt.memory.search_facts("what is my puppy called")][:1] == ["Rex"]
    finally:
        await services.stop()
    (started,) = [e for e in logs if e["event"] == "memory_search"]
    assert started["mode"] == "hybrid" and minilm.NAME in started["detail"]


async def test_a_later_search_scans_the_vectors_beside_the_database_thread(
    hybrid: SqlMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from navi.storage import vectors as vectors_module

    await plant(hybrid)
    threads: list[str] = []
    scan = vectors_module.OwnerVectors.nearest

    def recorded(self: vectors_module.OwnerVectors, query: Any, k: int) -> list[tuple[int, float]]:
        threads.append(threading.current_thread().name)
        return scan(self, query, k)

    monkeypatch.setattr(vectors_module.OwnerVectors, "nearest", recorded)
    first = await hybrid.search_facts("what is my puppy called")  # loads the owner's vectors
    await hybrid.upsert_fact("pets", "cat_name", "Mia")  # written by this process: in memory at once
    later = await hybrid.search_facts("what is my puppy called")
    assert first[0].value == later[0].value == "Rex"
    assert "Mia" in [f.value for f in await hybrid.search_facts("what is my kitten called")]
    # The first search scans inside its transaction; the later ones on the scanning thread.
    assert not threads[0].startswith("navi-vectors")
    assert all(name.startswith("navi-vectors") for name in threads[1:]) and len(threads) == 3


def test_past_exact_max_the_scan_compares_signs_first_and_scores_the_closest_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beyond EXACT_MAX vectors only the RESCORE closest by sign bits are scored: the nearest are
    still found, with their exact similarity, and a vector replaced in place is found by its new
    signs (a stale sign row would hide it)."""
    import numpy as np

    from navi.storage import vectors as vectors_module

    rng = np.random.default_rng(3)
    owner = vectors_module.OwnerVectors(128)
    matrix = rng.standard_normal((3_000, 128)).astype(np.float32)
    for i, row in enumerate(matrix, start=1):
        owner.put(i, row)
    monkeypatch.setattr(vectors_module, "EXACT_MAX", 100)
    monkeypatch.setattr(vectors_module, "RESCORE", 50)
    scored: list[int] = []
    real = vectors_module.closest_signs

    def counted(words: Any, query: Any, count: int) -> Any:
        rows = real(words, query, count)
        scored.append(len(rows))
        return rows

    monkeypatch.setattr(vectors_module, "closest_signs", counted)
    for target in (7, 1_500, 2_999):
        noisy = matrix[target - 1] + 0.05 * rng.standard_normal(128).astype(np.float32)
        (best, similarity), *_ = owner.nearest(noisy, 5)
        exact = float(vectors_module.unit(matrix[target - 1]) @ vectors_module.unit(noisy))
        assert best == target and similarity == pytest.approx(exact, abs=1e-5)
    assert scored and all(50 <= n < 3_000 for n in scored)  # a few ties past 50 at most
    moved = rng.standard_normal(128).astype(np.float32)
    owner.put(42, moved)  # replaced in place: its signs change with it
    assert owner.nearest(moved, 1)[0][0] == 42
