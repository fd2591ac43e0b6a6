"""Memory recall: planted facts found again, by question type, keyword-only and hybrid; and latency.

Users' conversations are generated with facts planted across many sessions ("I live in Lisbon",
"my dog is called Rex" among small talk), later sessions that change some of them ("I moved to
Porto"), and questions asked afterwards. Every session goes through Navi's real extraction path
(`MemoryExtractor.extract` on a SQLite session store: the model's prompt, the parser, the own-words
rule, the add / update / ignore decision), with a scripted model answering the facts that session
stated. The questions go through the `memory_search` tool, once on a keyword-only store and once
with the built-in embedding model (hybrid), over the same database.

Categories (as in LongMemEval): *single-session* (one fact from one session), *multi-session* (two
facts stated in different sessions, both needed: a hit at k means both in the top k, at 1 that the
first result is one of them), *knowledge update* (the current value, asked with history: a hit
needs it in the top k and above its retired value), *temporal* ("where did I live before Porto",
with history: the retired value in the top k; at 1, the first former value returned, since every
current fact ranks above history), *abstention* (a question about something never said: correct
when nothing is returned). Questions are worded as people ask, many sharing no word with the fact.

Latency: `search_facts` timed on SQLite with 1k, 10k and 100k synthetic facts (bench/memory.py's
generator), keyword-only and hybrid (every fact embedded by the built-in model).

    .venv/bin/python bench/memory_recall.py [--users 40] [--sizes 1000,10000,100000] [--queries 300]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import bindparam, update
from sqlalchemy import text as sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.memory import fill, vocabulary, zipf_word
from navi import runctx
from navi.compose.models import build_profiles
from navi.config import load_settings
from navi.llm.messages import Message
from navi.llm.registry import BackendRegistry
from navi.memory.base import Fact
from navi.memory.embedders import BUILTIN_DIM, BuiltinEmbedder, Embedder
from navi.memory.extractor import MemoryExtractor
from navi.memory.minilm import MiniLMEmbedder
from navi.storage import migrate
from navi.storage.database import Database, sqlite_url
from navi.storage.memory import SqlMemoryStore
from navi.storage.schema import memory_facts
from navi.storage.sessions import SqlSessionStore
from navi.storage.vectors import encode
from navi.testing.script import Reply, Script, ScriptRequest
from navi.testing.scripted import ScriptedBackend
from navi.tools.builtin.memory import MemorySearchTool

MODEL = "bench-model"
DIM = BUILTIN_DIM
EMBEDDER = "minilm"
RESCORE: float | None = None


def make_embedder() -> Embedder:
    """The built-in model measured (`--embedder`)."""
    return MiniLMEmbedder() if EMBEDDER == "minilm" else BuiltinEmbedder(DIM)


CATEGORIES = ["single-session", "multi-session", "knowledge update", "temporal", "abstention"]


@dataclass
class Attr:
    category: str
    key: str
    values: list[str]
    say: str  # how the person states it, with {v}
    questions: list[str]
    change: str = ""  # how the person says it changed, with {v}
    before: str = ""  # a temporal question about the old value, with {new}


ATTRS = [
    Attr(
        "location",
        "home_city",
        ["Lisbon", "Porto", "Oslo", "Bergen", "Lyon", "Graz", "Turin", "Ghent"],
        "I live in {v}, it's lovely this time of year.",
        ["which city do I live in", "where is my home", "which town do I reside in"],
        "Big news: I moved to {v} last month.",
        "where did I live before I moved to {new}",
    ),
    Attr(
        "work",
        "employer",
        ["Acme", "Globex", "Initech", "Hooli", "Vandelay"],
        "I work at {v} as an engineer.",
        ["where do I work", "which company employs me", "who is my employer"],
        "I changed jobs, I now work at {v}.",
        "where did I work before {new}",
    ),
    Attr(
        "vehicles",
        "car",
        ["Toyota Corolla", "Volvo V60", "Renault Clio", "Skoda Octavia"],
        "I drive a {v} to the office.",
        ["what car do I drive", "what vehicle do I own"],
        "I sold my car and bought a {v}.",
        "what car did I have before the {new}",
    ),
    Attr(
        "devices",
        "phone",
        ["Pixel 8", "iPhone 15", "Fairphone 5", "Galaxy S24"],
        "My phone is a {v}.",
        ["what phone do I have", "which mobile do I use"],
        "I switched to a {v} yesterday.",
        "which phone did I use before the {new}",
    ),
    Attr(
        "pets",
        "dog_name",
        ["Rex", "Bolt", "Luna", "Biscuit"],
        "My dog is called {v}.",
        ["what is my dog's name", "what is my puppy called"],
    ),
    Attr(
        "pets",
        "cat_name",
        ["Miso", "Tofu", "Pixel", "Nori"],
        "My cat is called {v}.",
        ["what is my cat's name", "what is my kitten called"],
    ),
    Attr(
        "family",
        "sister_name",
        ["Ana", "Clara", "Ines", "Marta"],
        "My sister's name is {v}.",
        ["what is my sister called", "what is my sibling's name"],
    ),
    Attr(
        "family",
        "partner_name",
        ["Sam", "Alex", "Robin", "Kim"],
        "My partner is {v}.",
        ["what is my partner's name", "who is my spouse"],
    ),
    Attr(
        "preferences",
        "coffee",
        ["flat white", "espresso", "cortado"],
        "I always drink a {v} in the morning.",
        ["how do I take my coffee", "what is my usual hot drink"],
    ),
    Attr(
        "health",
        "allergy",
        ["peanuts", "shellfish", "pollen"],
        "I am allergic to {v}.",
        ["what am I allergic to", "which allergies do I have"],
    ),
    Attr(
        "hobbies",
        "sport",
        ["climbing", "rowing", "tennis"],
        "I love {v} on weekends.",
        ["what sport do I do", "what do I do for exercise"],
    ),
    Attr(
        "identity",
        "birthday",
        ["3 March", "17 July", "9 November"],
        "My birthday is {v}.",
        ["when is my birthday", "what is my date of birth"],
    ),
    Attr(
        "preferences",
        "favourite_food",
        ["sushi", "lasagne", "ramen"],
        "My favourite food is {v}.",
        ["what is my favourite food", "what cuisine do I like"],
    ),
    Attr(
        "education",
        "learning_language",
        ["Japanese", "German", "Italian"],
        "I am learning {v} in the evenings.",
        ["which language am I learning", "what language am I studying"],
    ),
    Attr(
        "servers",
        "nas",
        ["Synology DS920+", "TrueNAS Mini"],
        "My NAS is a {v}.",
        ["what NAS do I have", "what network storage do I run"],
    ),
    Attr(
        "music",
        "instrument",
        ["piano", "cello", "guitar"],
        "I play the {v}.",
        ["what instrument do I play", "which musical instrument do I practise"],
    ),
]
BY_KEY = {a.key: a for a in ATTRS}
MULTI = [
    (("dog_name", "cat_name"), ["what are my pets called", "what are the names of my animals"]),
    (("sister_name", "partner_name"), ["who is in my family", "what are my relatives called"]),
    (("employer", "home_city"), ["where do I live and work"]),
]
SMALL_TALK = [
    "Can you help me write an email to my landlord?",
    "What's a good recipe for dinner tonight?",
    "Remind me how to reverse a list in Python.",
    "Thanks, that was helpful.",
    "What is the weather like on Mars?",
]


@dataclass
class Question:
    category: str
    owner: str
    text: str
    gold: list[tuple[str, str]]  # (key, value) of the facts that answer it
    history: bool = False


@dataclass
class Plan:
    sessions: list[tuple[str, list[tuple[Attr, str, str]]]] = field(default_factory=list)  # owner, stated
    questions: list[Question] = field(default_factory=list)


def generate(users: int, rng: random.Random) -> Plan:
    plan = Plan()
    for u in range(users):
        owner = f"user{u}"
        planted = rng.sample(ATTRS, 11)
        values = {a.key: rng.choice(a.values) for a in planted}
        # Facts go into sessions of one to three, in a random order: related facts land apart.
        order = planted[:]
        rng.shuffle(order)
        session_of: dict[str, int] = {}
        while order:
            size = rng.randint(1, 3)
            chunk, order = order[:size], order[size:]
            for a in chunk:
                session_of[a.key] = len(plan.sessions)
            plan.sessions.append((owner, [(a, a.say.format(v=values[a.key]), values[a.key]) for a in chunk]))
        # Later sessions change some facts.
        changed: set[str] = set()
        for a in [a for a in planted if a.change]:
            if rng.random() < 0.75:
                old, new = values[a.key], rng.choice([v for v in a.values if v != values[a.key]])
                plan.sessions.append((owner, [(a, a.change.format(v=new), new)]))
                values[a.key] = new
                changed.add(a.key)
                plan.questions.append(
                    Question("knowledge update", owner, rng.choice(a.questions), [(a.key, new)], history=True)
                )
                plan.questions.append(
                    Question("temporal", owner, a.before.format(new=new), [(a.key, old)], history=True)
                )
        for a in [a for a in planted if a.key not in changed]:
            plan.questions.append(
                Question("single-session", owner, rng.choice(a.questions), [(a.key, values[a.key])])
            )
        for keys, texts in MULTI:
            if all(k in values for k in keys) and session_of[keys[0]] != session_of[keys[1]]:
                gold = [(k, values[k]) for k in keys]
                plan.questions.append(Question("multi-session", owner, rng.choice(texts), gold))
        for a in rng.sample([a for a in ATTRS if a not in planted], 3):
            plan.questions.append(Question("abstention", owner, rng.choice(a.questions), []))
    return plan


async def store_through_extraction(plan: Plan, db: Database) -> int:
    """Every session through `MemoryExtractor.extract`, with a model scripted to state its facts."""
    current: list[str] = []

    def respond(request: ScriptRequest) -> Reply:
        if "What the person said" in (request.last_user_text or ""):
            return Reply(text="\n".join(current))
        return Reply(text="")  # the summary: rejected, so the plain list of facts is used

    backend = ScriptedBackend(Script(responder=respond, record=False))
    registry = BackendRegistry()
    registry.register_instance("ollama", backend, default_model=MODEL)
    settings = load_settings(db_path=":memory:")
    sessions = SqlSessionStore(db)
    memory = SqlMemoryStore(db)
    extractor = MemoryExtractor(
        sessions=sessions,
        memory=memory,
        backends=registry,
        profiles=build_profiles(settings, registry),
        stale_minutes=30,
    )
    stored = 0
    rng = random.Random(3)
    for owner, stated in plan.sessions:
        session = await sessions.create("secretary", owner=owner)
        turns: list[Message] = []
        for _attr, said, _ in stated:
            turns += [Message.user(rng.choice(SMALL_TALK)), Message.assistant("Sure, here you go.")]
            turns += [Message.user(said), Message.assistant("Noted!")]
        await sessions.append(session.id, display=turns, context=turns)
        current[:] = [f"{attr.category}: {attr.key} = {value}" for attr, _, value in stated]
        full = await sessions.get(session.id)
        assert full is not None
        stored += await extractor.extract(full)
    return stored


FACT_LINE = re.compile(
    r"^- [\w]+: (?P<key>\w+) = (?P<value>.*?)  \(updated [^)]*\)(?P<former> \[former value\])?$"
)


def parse_lines(text: str) -> list[tuple[str, str, bool]]:
    """(key, value, current) of each fact line the memory_search tool printed (other lines skipped)."""
    out = []
    for line in text.splitlines():
        match = FACT_LINE.match(line)
        if match:
            out.append((match["key"], match["value"], match["former"] is None))
    return out


def hit(question: Question, found: list[tuple[str, str, bool]], k: int) -> bool:
    top = found[:k]
    if question.category == "abstention":
        return not found
    if question.category == "multi-session":
        if k == 1:
            return bool(top) and (top[0][0], top[0][1]) in question.gold
        return all(any((f[0], f[1]) == g for f in top) for g in question.gold)
    ((key, value),) = question.gold
    want_current = question.category != "temporal"
    if not want_current and k == 1:  # current facts always come first: the first former value
        former = [f for f in found if not f[2]]
        return bool(former) and (former[0][0], former[0][1]) == (key, value)
    positions = [i for i, f in enumerate(top) if (f[0], f[1], f[2]) == (key, value, want_current)]
    if not positions:
        return False
    if question.category == "knowledge update":  # above any retired value of the same fact
        retired = [i for i, f in enumerate(found) if f[0] == key and not f[2]]
        return all(positions[0] < r for r in retired)
    return True


async def ask(plan: Plan, store: SqlMemoryStore) -> dict[str, tuple[float, float, int]]:
    tool = MemorySearchTool(store)
    scores: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for q in plan.questions:
        with runctx.using(runctx.RunContext(session_id="bench", owner=q.owner)):
            result = await tool.execute({"query": q.text, "limit": 5, "history": q.history})
        found = parse_lines(result.output)
        scores[q.category].append((hit(q, found, 1), hit(q, found, 5)))
    out = {}
    for cat in CATEGORIES:
        rows = scores[cat]
        out[cat] = (sum(a for a, _ in rows) / len(rows), sum(b for _, b in rows) / len(rows), len(rows))
    allrows = [r for cat in CATEGORIES for r in scores[cat]]
    out["overall"] = (
        sum(a for a, _ in allrows) / len(allrows),
        sum(b for _, b in allrows) / len(allrows),
        len(allrows),
    )
    return out


async def recall(
    users: int,
    min_similarity: float | None = None,
) -> tuple[dict[str, tuple[float, float, int]], dict[str, tuple[float, float, int]], int]:
    plan = generate(users, random.Random(11))
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(sqlite_url(Path(tmp) / "recall.db"))
        await migrate.upgrade(db)
        try:
            stored = await store_through_extraction(plan, db)
            keyword = await ask(plan, SqlMemoryStore(db))
            hybrid_store = SqlMemoryStore(db, embed=make_embedder())
            if min_similarity is not None:
                hybrid_store.min_similarity = min_similarity
            if RESCORE is not None and hybrid_store.rescorer is not None:
                hybrid_store.rescorer.floor = RESCORE
            await hybrid_store.backfill_embeddings()
            hybrid = await ask(plan, hybrid_store)
        finally:
            await db.dispose()
    return keyword, hybrid, stored


async def embed_all(store: SqlMemoryStore, embedded: int | None = None) -> None:
    """Give every fact without a vector the store's model's (in large batches, like the backfill;
    with the attribute's vector after it when the store rescores). With `embedded`, only facts up to
    that id are embedded by the model; every later fact gets a copy of an embedded one's vectors
    (id modulo `embedded`): what a search costs does not depend on which vector a fact has, and
    embedding 100,000 facts and their attributes takes most of an hour of CPU here."""
    missing = memory_facts.c.embedding.is_(None)
    if embedded is not None:
        missing = missing & (memory_facts.c.id <= embedded)
    rows = await store.db.read(lambda c: c.execute(memory_facts.select().where(missing)).all())
    for start in range(0, len(rows), 5000):
        batch = rows[start : start + 5000]
        vectors = await store._vectors([Fact.model_validate(r._asdict()) for r in batch])
        values = [{"i": r.id, "e": encode(store.embed_name, v)} for r, v in zip(batch, vectors, strict=True)]
        stmt = (
            update(memory_facts).where(memory_facts.c.id == bindparam("i")).values(embedding=bindparam("e"))
        )
        await store.db.write(lambda c, stmt=stmt, values=values: c.execute(stmt, values))
    if embedded is not None:
        copy = sql(
            """UPDATE memory_facts SET embedding = (SELECT m.embedding FROM memory_facts m
                WHERE m.id = (memory_facts.id - 1) % :n + 1) WHERE embedding IS NULL"""
        )
        await store.db.write(lambda c: c.execute(copy, {"n": embedded}))


async def latency(sizes: list[int], queries: int, embedded: int | None = None) -> list[tuple[float, ...]]:
    rng = random.Random(7)
    vocab = vocabulary(rng)
    embed = make_embedder()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(sqlite_url(Path(tmp) / "latency.db"))
        await migrate.upgrade(db)
        keyword, hybrid = SqlMemoryStore(db), SqlMemoryStore(db, embed=embed)
        total = 0
        try:
            for size in sizes:
                await fill(keyword, total, size - total, rng, vocab)
                total = size
                await embed_all(hybrid, embedded)
                words = [
                    " ".join(zipf_word(rng, vocab) for _ in range(rng.randint(1, 3))) for _ in range(queries)
                ]
                row: list[float] = []
                for store in (keyword, hybrid):
                    for q in words[:20]:  # warm caches (and load the vectors once)
                        await store.search_facts(q)
                    times, cpu = [], []
                    for q in words:
                        uncached(embed)  # the question embedded every time, as a new one is
                        start, start_cpu = time.perf_counter(), time.process_time()
                        await store.search_facts(q, limit=15)
                        times.append(time.perf_counter() - start)
                        cpu.append(time.process_time() - start_cpu)  # every thread's: embedding too
                    times.sort()
                    row += [statistics.median(times) * 1000, times[int(len(times) * 0.99) - 1] * 1000]
                    row.append(statistics.median(cpu) * 1000)
                out.append((size, *row))
                print(f"  {size:,} facts: " + ", ".join(f"{v:.2f}" for v in row), flush=True)
        finally:
            await db.dispose()
    return out


def uncached(embed: Embedder) -> None:
    """Forget the embedder's cached question vectors: the zipf questions repeat, a user's rarely."""
    forget = getattr(embed, "forget", None)
    if forget is not None:
        forget()


def plan_texts() -> list[str]:
    """The recall part's questions, for timing the embedder."""
    return [q.text for q in generate(40, random.Random(11)).questions]


async def question_cpu_ms(texts: list[str]) -> float:
    """The embedder's CPU time for one question, p50 (the process's, every thread: the model runs in
    a worker thread)."""
    embed = make_embedder()
    await embed(["loaded before anything is timed"])
    times = []
    for text in texts:
        uncached(embed)
        start = time.process_time()
        await embed([text])
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def recall_table(
    keyword: dict[str, tuple[float, float, int]], hybrid: dict[str, tuple[float, float, int]]
) -> str:
    lines = [
        "| category | questions | keyword R@1 | keyword R@5 | hybrid R@1 | hybrid R@5 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for cat in [*CATEGORIES, "overall"]:
        k1, k5, n = keyword[cat]
        h1, h5, _ = hybrid[cat]
        lines.append(f"| {cat} | {n} | {k1:.2f} | {k5:.2f} | {h1:.2f} | {h5:.2f} |")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--min-similarity", type=float, help="the built-in model's floor (default: its own)")
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--dim", type=int, default=BUILTIN_DIM, help="dimensions of WordLlama kept")
    parser.add_argument("--rescore", type=float, help="the rescoring floor (default: the model's own)")
    parser.add_argument("--embedder", choices=["minilm", "wordllama"], default="minilm")
    parser.add_argument("--latency-only", action="store_true", help="no recall part")
    parser.add_argument(
        "--embedded",
        type=int,
        help="latency: embed facts up to this id, the rest copy their vectors",
    )
    args = parser.parse_args()
    global DIM, EMBEDDER, RESCORE
    DIM, EMBEDDER, RESCORE = args.dim, args.embedder, args.rescore
    if not args.latency_only:
        keyword, hybrid, stored = await recall(args.users, args.min_similarity)
        print(f"{args.users} users, {stored} facts stored through extraction\n")
        print(recall_table(keyword, hybrid))
    if args.no_latency:
        return
    question_ms = await question_cpu_ms(plan_texts())
    print(f"\nEmbedding a question ({EMBEDDER}, one thread): CPU p50 {question_ms:.2f} ms")
    rows = await latency([int(s) for s in args.sizes.split(",")], args.queries, args.embedded)
    print(
        "\n| SQLite facts | keyword median ms | keyword p99 ms | keyword CPU p50 ms "
        "| hybrid median ms | hybrid p99 ms | hybrid CPU p50 ms |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size, km, kp, kc, hm, hp, hc in rows:
        print(f"| {int(size):,} | {km:.2f} | {kp:.2f} | {kc:.2f} | {hm:.2f} | {hp:.2f} | {hc:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
