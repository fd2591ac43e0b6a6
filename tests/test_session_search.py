"""Search across conversations: one contract for the three stores, the migration's backfill, snippets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from navi.llm.messages import Message
from navi.sessions.models import Session
from navi.sessions.search import SearchQuery, bm25_order, snippet, terms
from navi.sessions.store import SessionStore
from navi.storage import migrate
from navi.storage.database import Database, sqlite_url
from navi.storage.sessions import SqlSessionStore
from tests.helpers.old_schema import old_session
from tests.helpers.session_stores import STORES, opened_store, url_of

SQL = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def at(day: int, hour: int = 12) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=UTC)


def q(text: str, **kw: object) -> SearchQuery:
    return SearchQuery(terms(text), **kw)  # type: ignore[arg-type]


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    async with opened_store(request.param, tmp_path, request) as s:
        yield s


async def test_every_word_must_match_and_the_last_may_start_a_word(store: SessionStore) -> None:
    s = await store.create("secretary", owner="alice", name="Router trouble")
    await store.append(
        s.id,
        display=[
            Message.user("My router keeps dropping the wifi connection", created_at=at(1)),
            Message.assistant("Reboot the router and check the firmware version.", created_at=at(1, 13)),
            Message.user("Dinner plans for Friday?", created_at=at(2)),
        ],
    )
    hits = await store.search(q("router firm"), owner="alice")
    assert [h.snippet for h in hits] == ["Reboot the router and check the firmware version."]
    hit = hits[0]
    assert (hit.session_id, hit.session_name, hit.profile_id, hit.role) == (
        s.id,
        "Router trouble",
        "secretary",
        "assistant",
    )
    assert hit.created_at == at(1, 13)
    got = await store.get(s.id)
    assert got is not None and hit.message_id == got.messages[1].id
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["router", "firmware"]
    # Case and diacritics do not count; a word must be whole unless it is the last one.
    assert len(await store.search(q("ROUTER"), owner="alice")) == 2
    assert await store.search(q("rout wifi"), owner="alice") == []
    assert await store.search(q("dinner fri"), owner="alice") != []
    assert await store.search(q("nothing like this"), owner="alice") == []


async def test_the_closer_match_ranks_first(store: SessionStore) -> None:
    s = await store.create("secretary", owner="alice")
    filler = " ".join(f"word{i}" for i in range(60))
    await store.append(
        s.id,
        display=[
            Message.user(f"{filler} backup {filler}", created_at=at(1)),
            Message.user("backup backup: the nightly backup failed", created_at=at(2)),
        ],
    )
    hits = await store.search(q("backup"), owner="alice")
    assert hits[0].snippet == "backup backup: the nightly backup failed"
    assert hits[1].snippet.startswith("…") and hits[1].snippet.endswith("…")
    assert [hits[1].snippet[a:b] for a, b in hits[1].highlights] == ["backup"]


@pytest.mark.parametrize("kind", SQL)
async def test_the_rarer_word_weighs_more(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """BM25 (navi/storage/search.py) on both databases: of two messages with both words, each with
    one of them twice, the one repeating the word few messages have ranks first, though it is the
    older (the newer wins a tie). The words' counts come from the triggers' table (migration 0031)."""
    async with opened_store(kind, tmp_path, request) as store:
        await _rarer_word(store)


@pytest.mark.parametrize("kind", SQL)
async def test_a_rare_word_lifts_an_older_message_above_newer_ones(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A search of two words: the newer, shorter messages each hold the common word three times
    and the rare one once; an old, longer message holding the rare word three times comes first.
    With every word weighing alike (no counts, or ts_rank), the newer ones would."""
    async with opened_store(kind, tmp_path, request) as store:
        s = await store.create("secretary", owner="alice")
        filler = [Message.user(f"weather report {n} for today", created_at=at(1)) for n in range(30)]
        await store.append(s.id, display=filler)
        old = "saffron saffron saffron weather and a few more words"
        await store.append(s.id, display=[Message.user(old, created_at=at(2))])
        newer = [Message.user(f"weather weather weather saffron {n}", created_at=at(3 + n)) for n in range(3)]
        await store.append(s.id, display=newer)
        hits = await store.search(q("weather saffron"), owner="alice")
        assert [h.snippet for h in hits] == [old, *(m.content for m in reversed(newer))]


async def _rarer_word(store: SessionStore) -> None:
    s = await store.create("secretary", owner="alice")
    common = [Message.user(f"the invoice number {n} arrived", created_at=at(1)) for n in range(12)]
    await store.append(s.id, display=common)
    await store.append(s.id, display=[Message.user("printer printer and invoice", created_at=at(2))])
    await store.append(s.id, display=[Message.user("invoice invoice and printer", created_at=at(3))])
    hits = await store.search(q("invoice printer"), owner="alice")
    assert [h.snippet for h in hits] == ["printer printer and invoice", "invoice invoice and printer"]


async def test_another_users_messages_never_move_the_ranking(store: SessionStore) -> None:
    """A word's weight counts the searching user's messages only: bob writing "printer" in many
    messages, and many other messages, changes neither what alice and carol find nor its order.
    Counted over everyone's (as FTS5's own bm25 does), printer would weigh less than invoice for
    alice, and alpha and beta more than nothing for carol, and each order would turn round."""
    alice = await store.create("secretary", owner="alice")
    common = [Message.user(f"the invoice number {n} arrived", created_at=at(1)) for n in range(12)]
    await store.append(alice.id, display=common)
    await store.append(alice.id, display=[Message.user("printer printer and invoice", created_at=at(2))])
    await store.append(alice.id, display=[Message.user("invoice invoice and printer", created_at=at(3))])
    carol = await store.create("secretary", owner="carol")  # alpha in all her messages, beta in half
    carols = ["alpha beta beta beta", "alpha alpha alpha beta", "alpha x y z", "alpha q r s"]
    for n, body in enumerate(carols):
        await store.append(carol.id, display=[Message.user(body, created_at=at(4 + n))])

    async def found() -> list[list[tuple[str, str]]]:
        # A store made afresh on the same database: nothing counted before is kept.
        fresh = SqlSessionStore(store.db) if isinstance(store, SqlSessionStore) else store
        return [
            [(h.message_id, h.snippet) for h in await fresh.search(q(words), owner=owner)]
            for words, owner in (("invoice printer", "alice"), ("alpha beta", "carol"), ("printer", "alice"))
        ]

    alone = await found()
    assert [[s for _, s in hits] for hits in alone[:2]] in (
        [  # SQLite's BM25: the word fewer of her messages hold weighs more; a tie, the newer first
            ["printer printer and invoice", "invoice invoice and printer"],
            ["alpha alpha alpha beta", "alpha beta beta beta"],
        ],
        [  # the in-memory store and PostgreSQL's ts_rank weigh a match by its message alone
            ["invoice invoice and printer", "printer printer and invoice"],
            ["alpha alpha alpha beta", "alpha beta beta beta"],
        ],
    )
    bob = await store.create("secretary", owner="bob")
    await store.append(bob.id, display=[Message.user(f"printer jam number {n}") for n in range(40)])
    await store.append(bob.id, display=[Message.user(f"lunch at noon {n}") for n in range(200)])
    assert await found() == alone


@pytest.mark.parametrize("kind", SQL)
async def test_the_word_counts_follow_new_and_deleted_messages(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The triggers' counts (migration 0031) are, per owner, how many searched messages hold each
    word and (the empty word) how many there are — after appends and a deleted conversation, the
    same as counted afresh; a tool result is not counted, nor another user's messages."""
    async with opened_store(kind, tmp_path, request) as store:
        assert isinstance(store, SqlSessionStore)
        s = await store.create("secretary", owner="alice")
        await store.append(s.id, display=[Message.user(f"Note {n} about Café note") for n in range(5)])
        other = await store.create("secretary", owner="alice")
        await store.append(
            other.id,
            display=[
                Message.user("memo one"),
                Message.tool("note from a tool", tool_call_id="c1", name="web_search"),
            ],
        )
        bob = await store.create("secretary", owner="bob")
        await store.append(bob.id, display=[Message.user("note for bob")])

        async def counts() -> dict[tuple[str, str], int]:
            read = text("SELECT owner, word, n FROM message_search_words")
            rows = await store.db.read(lambda c: c.execute(read).all())
            return {(o, w): n for o, w, n in rows}

        found = await counts()
        assert found[("alice", "")] == 6 and found[("alice", "note")] == 5 and found[("alice", "memo")] == 1
        assert found[("alice", "about")] == 5 and ("alice", "tool") not in found
        assert found[("bob", "")] == 1 and found[("bob", "note")] == 1
        assert found[("alice", "cafe" if kind == "sqlite" else "café")] == 5  # each store's own words
        assert await store.delete(other.id, owner="alice")
        found = await counts()
        assert found[("alice", "")] == 5 and ("alice", "memo") not in found and ("alice", "one") not in found
        assert await store.delete(s.id, owner="alice")
        assert {k: v for k, v in (await counts()).items() if k[0] == "alice"} == {}


async def test_a_user_never_finds_another_users_messages(store: SessionStore) -> None:
    mine = await store.create("secretary", owner="alice")
    theirs = await store.create("secretary", owner="bob", name="Bob's secrets")
    await store.append(mine.id, display=[Message.user("the launch code is blue")])
    await store.append(theirs.id, display=[Message.user("the launch code is 0000")])
    alice = await store.search(q("launch code"), owner="alice")
    assert [(h.session_id, h.snippet) for h in alice] == [(mine.id, "the launch code is blue")]
    bob = await store.search(q("launch code"), owner="bob")
    assert [(h.session_id, h.snippet) for h in bob] == [(theirs.id, "the launch code is 0000")]
    assert await store.search(q("launch"), owner="carol") == []


async def test_a_temporary_chats_messages_are_never_found(store: SessionStore) -> None:
    kept = await store.create("secretary", owner="alice", name="Kept")
    passing = await store.create("secretary", owner="alice", temporary=True)
    await store.append(
        kept.id, display=[Message.user("the spare key is under the blue pot", created_at=at(1))]
    )
    await store.append(
        passing.id,
        display=[
            Message.user("the spare key is in the mailbox", created_at=at(2)),
            Message.assistant("Noted: the spare key, mailbox.", created_at=at(2, 13)),
        ],
    )
    for words in ("spare key", "spare", "mailbox", "ma"):
        found = await store.search(q(words), owner="alice")
        assert all(h.session_id == kept.id for h in found), words
    assert [h.snippet for h in await store.search(q("spare key"), owner="alice")] == [
        "the spare key is under the blue pot"
    ]
    assert (
        await store.search(
            q("mailbox"),
            owner="alice",
        )
        == []
    )
    filtered = q("spare", profile="secretary", since=at(1, 0), limit=5)
    assert [h.session_id for h in await store.search(filtered, owner="alice")] == [kept.id]
    # Only the temporary chat holds the word: nothing, however many of its messages have it.
    await store.append(passing.id, display=[Message.user(f"mailbox {n}", created_at=at(3)) for n in range(5)])
    assert await store.search(q("mailbox"), owner="alice") == []
    assert await store.delete(passing.id)
    assert [h.session_id for h in await store.search(q("spare"), owner="alice")] == [kept.id]


async def test_only_what_a_person_reads_is_searched(store: SessionStore) -> None:
    s = await store.create("secretary", owner="alice")
    await store.append(
        s.id,
        display=[
            Message.user("zebra in the content", metadata={"text": "giraffe as shown"}),
            Message.tool("zebra from a tool", tool_call_id="c1", name="web_search"),
            Message.assistant("[zebra compressed]", is_compression=True),
            Message.user("zebra summary", is_summary=True),
            Message.assistant(
                "zebra error", metadata={"error": {"code": "x", "message": "y"}, "failed_turn": "m"}
            ),
            Message.user("zebra image", metadata={"synthetic": "image"}),
            Message.assistant(None),
        ],
    )
    assert await store.search(q("zebra"), owner="alice") == []
    assert [h.snippet for h in await store.search(q("giraffe"), owner="alice")] == ["giraffe as shown"]


async def test_filters_dates_profile_and_limit(store: SessionStore) -> None:
    home = await store.create("smart_home", owner="alice")
    work = await store.create("secretary", owner="alice")
    await store.append(home.id, display=[Message.user(f"lamp {d}", created_at=at(d)) for d in (1, 2, 3)])
    await store.append(work.id, display=[Message.user("lamp at work", created_at=at(2))])

    async def found(**kw: object) -> list[str]:
        return sorted(h.snippet for h in await store.search(q("lamp", **kw), owner="alice"))

    assert await found() == ["lamp 1", "lamp 2", "lamp 3", "lamp at work"]
    assert await found(since=at(2, 0)) == ["lamp 2", "lamp 3", "lamp at work"]
    assert await found(until=at(2, 0)) == ["lamp 1"]
    assert await found(since=at(2, 0), until=at(3, 0)) == ["lamp 2", "lamp at work"]
    assert await found(profile="smart_home") == ["lamp 1", "lamp 2", "lamp 3"]
    await store.set_profile(work.id, "smart_home")  # the session's profile now, not then
    assert await found(profile="smart_home", since=at(2, 0), until=at(3, 0)) == ["lamp 2", "lamp at work"]
    assert await found(profile="server_admin") == []
    assert len(await store.search(q("lamp", limit=2), owner="alice")) == 2


async def test_deleted_sessions_are_gone_and_imported_ones_found(store: SessionStore) -> None:
    s = await store.create("secretary", owner="alice")
    await store.append(s.id, display=[Message.user("ephemeral note")])
    assert len(await store.search(q("ephemeral"), owner="alice")) == 1
    await store.delete(s.id, owner="alice")
    assert await store.search(q("ephemeral"), owner="alice") == []
    imported = Session(
        id="11111111-2222-4333-8444-555555555555",
        owner="alice",
        profile_id="secretary",
        name="From an archive",
        messages=[Message.user("ephemeral again", created_at=at(5))],
    )
    await store.insert(imported)
    hits = await store.search(q("ephemeral"), owner="alice")
    assert [(h.session_id, h.session_name, h.created_at) for h in hits] == [
        (imported.id, "From an archive", at(5))
    ]


HOSTILE = [
    '"',
    "'",
    'a" OR "b',
    "x' & 'y",
    "NEAR(a b)",
    "body:secret",
    "*",
    "-launch",
    "^launch",
    "launch*",
    "(launch",
    "launch) OR (",
    "\\",
    ":*",
    "!launch",
    "launch <-> code",
    "a" * 5000,
    " ".join(["launch"] * 400),
    "\u0000launch",
    "ünïcödé 日本語 launch",
    "%_",
]


@pytest.mark.parametrize("query", HOSTILE)
async def test_hostile_queries_are_words_and_never_crash(store: SessionStore, query: str) -> None:
    s = await store.create("secretary", owner="alice")
    await store.append(s.id, display=[Message.user("the launch code")])
    hits = await store.search(q(query), owner="alice")
    words = terms(query)
    text = {"the", "launch", "code"}
    whole = set(words[:-1]) <= text and any(w.startswith(words[-1]) for w in text) if words else False
    expected = ["the launch code"] if whole else []
    assert [h.snippet for h in hits] == expected


def test_queries_are_letters_and_digits() -> None:
    assert terms('a" OR "b NEAR(x) body:y *z') == ("a", "or", "b", "near", "x", "body", "y", "z")
    assert terms("Café CAFE") == ("cafe",)
    assert len(terms(" ".join(f"w{i}" for i in range(100)))) == 12
    assert terms("x" * 5000) == ("x" * 64,)
    assert terms("*** ' \" ") == ()
    assert q("one two").fts5() == '"one" "two"*'
    assert q("one two").tsquery() == "'one' & 'two':*"
    with pytest.raises(ValueError):
        SearchQuery(("x",), limit=0)


def test_snippets_cut_around_the_first_match_at_word_boundaries() -> None:
    body = " ".join(f"w{i}" for i in range(200)) + "\n\n  needle   in\tthe " + "z " * 300
    text, marks = snippet(body, q("needle"))
    assert text.startswith("…w") and text.endswith("…")
    assert [text[a:b] for a, b in marks] == ["needle"]
    assert "needle in the" in text  # white space collapsed
    assert len(text) <= 202
    short, marks = snippet("Needle", q("need"))
    assert (short, marks) == ("Needle", [(0, 6)])


@pytest.mark.parametrize("kind", SQL)
async def test_the_migration_indexes_existing_messages(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = Database(url_of(kind, tmp_path, request, empty=True))
    try:
        await migrate.upgrade(db, "0013")
        old = [
            Message.user("an old question about tomatoes", created_at=at(1)),
            Message.tool("tomatoes from a tool", tool_call_id="c", name="web_search"),
            Message.assistant("[compressed tomatoes]", is_compression=True),
        ]
        sid = await old_session(db, old, owner="alice", name="Old")
        await migrate.upgrade(db)
        store = SqlSessionStore(db)
        hits = await store.search(q("tomatoes"), owner="alice")
        assert [(h.session_name, h.snippet, h.created_at) for h in hits] == [
            ("Old", "an old question about tomatoes", at(1))
        ]
        await store.append(sid, display=[Message.assistant("new tomatoes")])  # the triggers go on
        assert len(await store.search(q("tomatoes"), owner="alice")) == 2
    finally:
        await db.dispose()


@pytest.mark.parametrize("kind", SQL)
async def test_the_newest_matches_are_ranked(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word in thousands of messages: the best of the newest WINDOW matches, not a scan of all."""
    from navi.storage import search

    monkeypatch.setattr(search, "WINDOW", 2)
    store = SqlSessionStore.at(url_of(kind, tmp_path, request))
    await store.open()
    try:
        mine = await store.create("secretary", owner="alice")
        theirs = await store.create("secretary", owner="bob")
        await store.append(mine.id, display=[Message.user("kiwi kiwi kiwi", created_at=at(1))])
        await store.append(mine.id, display=[Message.user(f"a kiwi and {n} other fruit") for n in (2, 3)])
        await store.append(theirs.id, display=[Message.user("kiwi") for _ in range(3)])  # not alice's window
        hits = await store.search(q("kiwi"), owner="alice")
        assert sorted(h.snippet for h in hits) == ["a kiwi and 2 other fruit", "a kiwi and 3 other fruit"]
        monkeypatch.setattr(search, "WINDOW", 500)
        assert (await store.search(q("kiwi"), owner="alice"))[0].snippet == "kiwi kiwi kiwi"
    finally:
        await store.aclose()


async def test_migration_0019_gives_sqlite_a_prefix_index_and_keeps_every_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The FTS5 table is made again with prefix indexes of 2 and 3 characters (a search box's first
    letters are one list, not a merge of every word they start), filled from the stored rows; on a
    large database (here: more than 2 rows) each step prints how far it is, as does 0031's count of
    the words, whose counts are then the messages'."""
    monkeypatch.setattr(migrate, "PROGRESS_ROWS", 2)
    db = Database(sqlite_url(tmp_path / "navi.db"))
    try:
        await migrate.upgrade(db, "0018")
        before = SqlSessionStore(db)
        sid = await old_session(db, [], owner="alice")  # the store's own create writes later columns
        older = [Message.user(f"old note {n}", created_at=at(1)) for n in range(4)]
        await before.append(sid, display=[*older, Message.user("configure the router", created_at=at(1))])
        capsys.readouterr()
        await migrate.upgrade(db)
        # Navi's own lines (a worker whose logging another test set up also prints Alembic's here).
        lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("navi: ")]
        assert [line.split(" (")[0] for line in lines] == [
            *(f"navi: upgrading the database: indexing searched messages again: {n} of 5" for n in (2, 4, 5)),
            "navi: upgrading the database: indexing searched messages again",
            *(
                f"navi: upgrading the database: counting the words of searched messages: {n} of 5"
                for n in (2, 4, 5)
            ),
        ]
        words = text("SELECT word, n FROM message_search_words WHERE word IN ('', 'note', 'router')")
        assert dict(await db.read(lambda c: c.execute(words).all())) == {"": 5, "note": 4, "router": 1}
        schema = text("SELECT sql FROM sqlite_master WHERE name = 'message_search_fts'")
        created = await db.read(lambda c: c.execute(schema).scalar())
        assert "prefix='2 3'" in created
        store = SqlSessionStore(db)
        await store.append(sid, display=[Message.assistant("a conference call, then", created_at=at(2))])
        both = ["a conference call, then", "configure the router"]
        for start in ("co", "con", "conf", "CO"):
            assert sorted(h.snippet for h in await store.search(q(start), owner="alice")) == both, start
        assert [h.snippet for h in await store.search(q("rou"), owner="alice")] == ["configure the router"]
        assert await store.search(q("co"), owner="bob") == []
    finally:
        await db.dispose()


def test_bm25_counts_every_word_the_last_one_starts() -> None:
    docs = [(1, "Confirm the configuration twice"), (2, "confirm the thing twice now")]
    assert bm25_order(docs, q("conf")) == [1, 2]
    assert bm25_order(docs, q("twice")) == [1, 2]  # as often, and the shorter message
    assert bm25_order([(1, "a b"), (2, "a b")], q("a")) == [2, 1]  # a tie: the newer first
