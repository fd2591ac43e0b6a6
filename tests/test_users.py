"""Users: `navi users add|list|remove`, and two users who never see each other's sessions, files,
runs or memory — over REST, the WebSocket and the OpenAI API — against a live Navi.

Users are made with the real command against the running server's database, as an admin would.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from typer.testing import CliRunner
from websockets.exceptions import ConnectionClosed

from navi.cli.main import _register, app
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.grants import SqlGrantStore
from navi.storage.memory import SqlMemoryStore
from navi.storage.users import SqlUserStore
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from navi.users.store import InMemoryUserStore, UserError, UserStore, digest
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

_register()
runner = CliRunner()


def cli(db: Path, *args: str) -> Any:
    return runner.invoke(app, ["users", *args], env={"DB_PATH": str(db), "LOG_LEVEL": "WARNING"})


def add_user(db: Path, name: str, *flags: str) -> str:
    result = cli(db, "add", name, *flags)
    assert result.exit_code == 0, result.output
    return str(result.stdout.strip())


@dataclass
class Two:
    navi: LiveNavi
    db: Path
    alice: str
    bob: str

    def as_user(self, token: str, **headers: str) -> httpx.Client:
        return self.navi.client(anonymous=True, headers={"Authorization": f"Bearer {token}", **headers})

    def new_session(self, token: str) -> str:
        with self.as_user(token) as http:
            resp = http.post("/sessions")
            assert resp.status_code == 201, resp.text
            return str(resp.json()["session_id"])


@pytest.fixture
def two(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[Two]:
    with live_navi(tmp_path, fake_server) as navi:
        db = Path(navi.settings.db_path)
        yield Two(navi, db, add_user(db, "alice"), add_user(db, "bob"))


# --- the command ---------------------------------------------------------------------------------


def test_users_command_adds_lists_and_removes_without_a_server(tmp_path: Path) -> None:
    db = tmp_path / "navi.db"
    token = add_user(db, "alice")
    assert len(token) >= 40 and "\n" not in token
    proxy = add_user(db, "gate", "--proxy")
    rows = sqlite3.connect(db).execute("SELECT name, token_sha256, role FROM users ORDER BY name").fetchall()
    # Only digests are kept: the token itself is nowhere in the database.
    assert rows == [
        ("alice", hashlib.sha256(token.encode()).hexdigest(), "user"),
        ("gate", hashlib.sha256(proxy.encode()).hexdigest(), "proxy"),
    ]
    assert token.encode() not in db.read_bytes()
    listed = cli(db, "list")
    assert listed.exit_code == 0 and "alice" in listed.stdout and "gate" in listed.stdout
    assert token not in listed.output and proxy not in listed.output
    assert [u["name"] for u in json.loads(cli(db, "list", "--json").stdout)] == ["alice", "gate"]

    again = cli(db, "add", "alice")
    assert again.exit_code == 1 and "already a user 'alice'" in again.stderr
    for bad in ("Alice", "local", "a b", "x!", ".x", "x" * 65):
        refused = cli(db, "add", bad)
        assert refused.exit_code == 1 and len(refused.stderr.strip().splitlines()) == 1, bad
    assert cli(db, "remove", "alice").stdout.strip() == "Removed 'alice'."
    missing = cli(db, "remove", "alice")
    assert missing.exit_code == 1 and "no user 'alice'" in missing.stderr
    assert [u["name"] for u in json.loads(cli(db, "list", "--json").stdout)] == ["gate"]


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[UserStore]:
    if request.param == "memory":
        yield InMemoryUserStore()
        return
    url = (
        sqlite_url(tmp_path / "u.db")
        if request.param == "sqlite"
        else postgres_url(request.getfixturevalue("pg_url"))
    )
    db = Database(url)
    await migrate.upgrade(db)  # the migration makes the table, as on every start
    try:
        yield SqlUserStore(db)
    finally:
        await db.dispose()


async def test_one_store_contract(store: UserStore) -> None:
    user, token = await store.add("alice")
    proxy, gate = await store.add("gate", "proxy")
    assert await store.by_token(token) == user and (await store.by_token(gate)) == proxy
    assert await store.by_token(token + "x") is None and await store.by_token("") is None
    with pytest.raises(UserError, match="already a user"):
        await store.add("alice")
    with pytest.raises(UserError, match="owner's name"):
        await store.add("local")
    assert [(u.name, u.role) for u in await store.list()] == [("alice", "user"), ("gate", "proxy")]
    assert await store.remove("alice") and not await store.remove("alice")
    assert await store.by_token(token) is None
    again, fresh = await store.add("alice")  # the name back, with a new token: the old one stays dead
    assert fresh != token and await store.by_token(token) is None and await store.by_token(fresh) == again
    # What a browser sign-in asks on every request: does the name still hold the token it signed in with?
    assert await store.get("alice") == again and await store.get("carol") is None
    assert await store.holds("alice", digest(fresh)) and not await store.holds("alice", digest(token))
    assert not await store.holds("gate", digest(fresh)) and await store.holds("gate", digest(gate))


# --- REST ------------------------------------------------------------------------------------------


def test_another_users_session_answers_404_on_every_route(two: Two) -> None:
    mine = two.new_session(two.alice)
    with two.as_user(two.alice) as alice:
        assert alice.patch(f"/sessions/{mine}", json={"name": "alice's plans"}).status_code == 200
        up = alice.post(f"/sessions/{mine}/files", files={"file": ("notes.txt", b"secret notes")})
        assert up.status_code == 201
    with two.as_user(two.bob) as bob:
        attempts = [
            bob.get(f"/sessions/{mine}"),
            bob.get(f"/sessions/{mine}/context"),
            bob.get(f"/sessions/{mine}/planning"),
            bob.get(f"/sessions/{mine}/export"),
            bob.get(f"/sessions/{mine}/messages"),
            bob.get(f"/sessions/{mine}/approvals"),
            bob.post(f"/sessions/{mine}/approvals/call-1", json={"decision": "allow"}),
            bob.patch(f"/sessions/{mine}", json={"name": "mine now"}),
            bob.patch(f"/sessions/{mine}", json={"profile_id": "secretary"}),
            bob.patch(f"/sessions/{mine}/pin", json={"pinned": True}),
            bob.post(f"/sessions/{mine}/messages", json={"content": "hi"}),
            bob.post(f"/sessions/{mine}/messages", json={"content": "x", "respond": False}),
            bob.post(f"/sessions/{mine}/files", files={"file": ("evil.txt", b"x")}),
            bob.delete(f"/sessions/{mine}"),
            bob.post(f"/sessions/{mine}/stop"),
            bob.get(f"/sessions/{mine}", params={"branch": "m1"}),
            bob.post(f"/sessions/{mine}/messages/m1/edit", json={"content": "mine"}),
            bob.post(f"/sessions/{mine}/messages/m1/regenerate"),
            bob.post(f"/sessions/{mine}/branch", json={"message_id": "m1"}),
            bob.post(f"/sessions/{mine}/fork", json={"message_id": "m1"}),
            bob.put(f"/sessions/{mine}/messages/m1/feedback", json={"rating": "down"}),
        ]
        for resp in attempts:
            assert resp.status_code == 404, (resp.request.method, resp.request.url, resp.text)
            assert resp.json()["code"] == "session_not_found"
        assert bob.get("/sessions").json() == []
    with two.as_user(two.alice) as alice:
        seen = alice.get(f"/sessions/{mine}").json()
        assert seen["name"] == "alice's plans" and not seen["pinned"] and seen["messages"] == []
        assert [s["id"] for s in alice.get("/sessions").json()] == [mine]
    assert (Path(two.navi.settings.session_files_dir) / mine / "notes.txt").read_bytes() == b"secret notes"
    assert not list((Path(two.navi.settings.session_files_dir) / mine).glob("evil*"))


def test_each_user_lists_creates_and_imports_only_their_own(two: Two) -> None:
    alices = two.new_session(two.alice)
    bobs = two.new_session(two.bob)
    owners = two.navi.new_session()  # the owner token: the single user of today
    with two.as_user(two.alice) as alice:
        archive = alice.get(f"/sessions/{alices}/export").json()
    with two.as_user(two.bob) as bob:
        imported = bob.post("/sessions/import", json=archive)
        assert imported.status_code == 201
        copy = imported.json()["session_id"]
        assert {s["id"] for s in bob.get("/sessions").json()} == {bobs, copy}
    with two.as_user(two.alice) as alice:
        assert [s["id"] for s in alice.get("/sessions").json()] == [alices]
        assert alice.get(f"/sessions/{copy}").status_code == 404
    with two.navi.client() as owner:
        assert [s["id"] for s in owner.get("/sessions").json()] == [owners]
        assert owner.get(f"/sessions/{alices}").status_code == 404
    with two.as_user(two.alice) as alice:
        assert alice.get(f"/sessions/{owners}").status_code == 404


def test_openai_api_is_scoped_to_the_caller(two: Two, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn("hello bob")
    alices = two.new_session(two.alice)
    body = {"model": "secretary", "messages": [{"role": "user", "content": "hi"}]}
    with two.as_user(two.bob) as bob:
        refused = bob.post("/v1/chat/completions", json=body, headers={"X-Session-Id": alices})
        assert refused.status_code == 404
        assert refused.json()["error"]["code"] == "session_not_found"
        answered = bob.post("/v1/chat/completions", json=body)
        assert answered.status_code == 200, answered.text
        assert answered.json()["choices"][0]["message"]["content"] == "hello bob"
        new = answered.headers["X-Session-Id"]
        assert [s["id"] for s in bob.get("/sessions").json()] == [new]
    with two.as_user(two.alice) as alice:
        assert alice.get(f"/sessions/{new}").status_code == 404
        assert alice.get(f"/sessions/{alices}").json()["messages"] == []


def test_a_chosen_session_id_is_made_for_the_caller_and_never_taken_over(
    two: Two, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("hello alice", "never said")
    chosen = "7e57ab1e-0000-4000-8000-0000000000a1"
    hi = [{"role": "user", "content": "hi"}]

    def sdk(token: str) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{two.navi.url}/v1", api_key=token, max_retries=0)

    with sdk(two.alice) as alice:
        made = alice.chat.completions.with_raw_response.create(
            model="secretary", messages=hi, extra_headers={"X-Session-Id": chosen}
        )
        assert made.headers["x-session-id"] == chosen
        assert made.parse().choices[0].message.content == "hello alice"
    with sdk(two.bob) as bob, pytest.raises(openai.NotFoundError) as refused:
        bob.chat.completions.create(
            model="secretary",
            messages=[{"role": "user", "content": "let me in"}],
            extra_headers={"X-Session-Id": chosen},
        )
    # Exactly the answer a missing session got before ids could be chosen: nothing says it exists.
    assert refused.value.body == {
        "message": f"no session '{chosen}'",
        "type": "invalid_request_error",
        "param": "X-Session-Id",
        "code": "session_not_found",
    }
    with two.as_user(two.bob) as bob_http:
        assert (
            bob_http.get("/sessions").json() == [] and bob_http.get(f"/sessions/{chosen}").status_code == 404
        )
    with two.as_user(two.alice) as alice_http:
        stored = alice_http.get(f"/sessions/{chosen}").json()
    assert [m["content"] for m in stored["messages"]] == ["hi", "hello alice"]


# --- memory ----------------------------------------------------------------------------------------


async def _remember(db_path: Path, facts: list[tuple[str, str, str, str]]) -> dict[str, int]:
    """Facts written straight into the server's database (as the extractor would), by owner."""
    db = Database(sqlite_url(db_path))
    store = SqlMemoryStore(db)
    ids = {}
    for owner, category, key, value in facts:
        fact, _ = await store.upsert_fact(category, key, value, owner=owner)
        ids[owner] = fact.id
    await db.dispose()
    return ids


async def test_memory_facts_and_the_memory_tool_are_per_user(two: Two, fake_server: FakeModelServer) -> None:
    ids = await _remember(
        two.db, [("alice", "pets", "cat", "Miso the cat"), ("bob", "pets", "dog", "Rex the dog")]
    )
    db = Database(sqlite_url(two.db))
    await SqlGrantStore(db).grant("alice", "terminal", "ls")  # an "always" answer of alice's
    await db.dispose()
    with two.as_user(two.alice) as alice, two.as_user(two.bob) as bob:
        assert [g["program"] for g in alice.get("/approvals/remembered").json()] == ["ls"]
        assert bob.get("/approvals/remembered").json() == []
        assert bob.delete("/approvals/remembered/terminal", params={"program": "ls"}).status_code == 404
        assert [g["program"] for g in alice.get("/approvals/remembered").json()] == ["ls"]
    with two.as_user(two.alice) as alice, two.as_user(two.bob) as bob:
        assert [f["value"] for f in alice.get("/memory/facts").json()] == ["Miso the cat"]
        assert [f["value"] for f in bob.get("/memory/facts").json()] == ["Rex the dog"]
        assert [f["value"] for f in bob.get("/memory/facts", params={"q": "cat Miso"}).json()] == []
        assert bob.delete(f"/memory/facts/{ids['alice']}").status_code == 404
        assert [f["value"] for f in alice.get("/memory/facts").json()] == ["Miso the cat"]
    with two.navi.client() as owner:
        assert owner.get("/memory/facts").json() == []

    # The agent's own memory tool, in bob's run, searches bob's memory only.
    script = use_script(fake_server)
    script.turn(Reply(tool_calls=[ScriptedCall("memory_search", {"query": "cat dog Miso Rex"})]))
    script.turn("Done.")
    bobs = two.new_session(two.bob)
    with two.as_user(two.bob) as bob:
        answer = bob.post(f"/sessions/{bobs}/messages", json={"content": "what pets?"})
        assert answer.status_code == 200 and answer.json()["content"] == "Done."
    results = [m.content or "" for m in script.of_kind("turn")[-1].messages if m.role == "tool"]
    assert len(results) == 1 and "Rex the dog" in results[0] and "Miso" not in results[0]


# --- WebSocket -------------------------------------------------------------------------------------


async def test_sockets_are_scoped_to_the_user(two: Two) -> None:
    alices = two.new_session(two.alice)
    bobs = two.new_session(two.bob)
    as_bob = {"Authorization": f"Bearer {two.bob}"}
    as_alice = {"Authorization": f"Bearer {two.alice}"}
    async with two.navi.socket(alices, anonymous=True, additional_headers=as_bob) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004

    async with (
        two.navi.socket(alices, anonymous=True, additional_headers=as_alice) as alice_ws,
        two.navi.socket(bobs, anonymous=True, additional_headers=as_bob) as bob_ws,
    ):
        with two.as_user(two.alice) as alice:
            assert alice.patch(f"/sessions/{alices}", json={"name": "alice only"}).status_code == 200
        # Alice's own socket hears of it: the feed has now delivered that change to every client.
        got = await frames_until(alice_ws, "session_updated")
        assert got[-1]["session_id"] == alices and got[-1]["name"] == "alice only"
        with two.as_user(two.bob) as bob:
            assert bob.patch(f"/sessions/{bobs}", json={"name": "bob only"}).status_code == 200
        # Bob's first session_updated frame is his own change: alice's never reached him.
        got = await frames_until(bob_ws, "session_updated")
        assert [f["session_id"] for f in got if f["type"] == "session_updated"] == [bobs]
        assert got[-1]["name"] == "bob only"


async def test_another_user_cannot_stop_a_running_turn(two: Two, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn(Reply(text="word " * 100, chunk_chars=5, delay=0.03))
    alices = two.new_session(two.alice)
    as_alice, as_bob = ({"Authorization": f"Bearer {t}"} for t in (two.alice, two.bob))
    async with two.navi.socket(alices, anonymous=True, additional_headers=as_alice) as ws:
        await ws.send(json.dumps({"type": "message", "content": "ramble"}))
        await frames_until(ws, "stream_delta")
        with two.as_user(two.bob) as bob:
            refused = bob.post(f"/sessions/{alices}/stop")
            assert refused.status_code == 404 and refused.json()["code"] == "session_not_found"
        # Bob's socket on alice's session closes before any frame of his is read, stop or other.
        async with two.navi.socket(alices, anonymous=True, additional_headers=as_bob) as intruder:
            with pytest.raises(ConnectionClosed) as closed:
                await intruder.send(json.dumps({"type": "stop"}))
                await intruder.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004
        frames = await frames_until(ws, "stream_end", "stream_stopped")
    assert frames[-1]["type"] == "stream_end" and frames[-1]["content"] == "word " * 100


# --- tokens: removal, the proxy role, the owner ----------------------------------------------------


def test_a_removed_users_token_stops_working_at_once(two: Two) -> None:
    with two.as_user(two.alice) as alice:
        assert alice.get("/sessions").status_code == 200
        assert cli(two.db, "remove", "alice").exit_code == 0  # while the server runs
        gone = alice.get("/sessions")
        assert gone.status_code == 401 and gone.json()["code"] == "unauthorized"
    with two.as_user(two.bob) as bob:
        assert bob.get("/sessions").status_code == 200


def test_a_proxy_token_acts_as_the_user_it_names(two: Two) -> None:
    gate = add_user(two.db, "gate", "--proxy")
    bobs = two.new_session(two.bob)
    with two.as_user(gate, **{"X-User-Id": "bob"}) as as_bob:
        assert [s["id"] for s in as_bob.get("/sessions").json()] == [bobs]
        made = as_bob.post("/sessions").json()["session_id"]
    with two.as_user(two.bob) as bob:
        assert {s["id"] for s in bob.get("/sessions").json()} == {bobs, made}
    with two.as_user(gate) as itself:  # no header: the proxy is a user of its own
        assert itself.get("/sessions").json() == []
    with two.as_user(gate, **{"X-User-Id": "carol"}) as as_carol:  # the proxy vouches for any name
        assert as_carol.get("/sessions").json() == []
    for token, name in ((gate, "local"), (gate, "Not A Name"), (two.alice, "bob"), (two.navi.token, "bob")):
        with two.as_user(token, **{"X-User-Id": name}) as http:
            refused = http.get("/sessions")
            assert refused.status_code == 403, (name, refused.text)
            assert "X-User-Id" in refused.json()["detail"]


def test_the_owner_token_works_as_before(two: Two) -> None:
    sid = two.navi.new_session()
    with two.navi.client() as owner:
        assert [s["id"] for s in owner.get("/sessions").json()] == [sid]
        assert owner.get(f"/sessions/{sid}").status_code == 200
    with two.navi.client(anonymous=True, headers={"Authorization": "Bearer not-a-token"}) as stranger:
        assert stranger.get("/sessions").status_code == 401
