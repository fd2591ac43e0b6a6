"""Bringing ChatGPT and Claude history in: the exports' exact structure (fixtures in
tests/fixtures/chatgpt and tests/fixtures/claude), branches, idempotent re-imports per user, and
bad files refused whole — through the parser, `navi sessions import --from`, and the REST route."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.sessions import foreign, tree
from navi.sessions.foreign import ExportError, bring_in, parse_export, session_id_for, to_session
from navi.sessions.memory_store import InMemorySessionStore
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import live_navi

_register()
runner = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures"
CHATGPT = FIXTURES / "chatgpt" / "conversations.json"
CLAUDE = FIXTURES / "claude" / "conversations.json"


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_chatgpt_the_path_to_the_current_node_and_the_other_branches() -> None:
    sour, pack = parse_export("chatgpt", CHATGPT.read_bytes(), max_messages=1000)
    assert (sour.source_id, sour.title) == ("c0ffee00-0000-4000-8000-000000000001", "Sourdough starter")
    assert (sour.created_at, sour.updated_at) == (utc(2025, 1, 1, 12), utc(2025, 1, 1, 13))
    # The hidden system message, the browsing call and its result are not the conversation.
    assert [(m.role, m.content) for m in sour.messages] == [
        ("user", "How often should I feed my sourdough starter?"),
        ("assistant", "Twice a day if it lives on the counter, weekly in the fridge."),
        ("user", "And which flour?"),
        ("assistant", "Use unbleached bread flour; a little rye speeds it up."),
    ]
    assert sour.messages[0].id == "aaaaaaaa-0000-4000-8000-000000000003"
    assert sour.messages[0].created_at == utc(2025, 1, 1, 12, 1)
    # The regenerated answer and the edited question are kept with where they fork off.
    assert [(b["after"], [m["content"] for m in b["messages"]]) for b in sour.branches] == [
        ("aaaaaaaa-0000-4000-8000-000000000003", ["Feed it once a day at room temperature."]),
        (
            None,
            [
                "How do I dry a sourdough starter?",
                "Spread it thin on baking paper and let it dry for two days.",
            ],
        ),
    ]
    # An image part is named, reasoning is left out, a message without a time has its predecessor's.
    assert [(m.role, m.content) for m in pack.messages] == [
        ("user", "[image]\nWhat should I pack for Oslo in March?"),
        ("assistant", "A warm coat, wool layers and boots with grip."),
    ]
    assert pack.messages[1].created_at == pack.messages[0].created_at
    assert pack.branches == []


def test_claude_messages_by_their_text_blocks() -> None:
    blight, untitled = parse_export("claude", CLAUDE.read_bytes(), max_messages=1000)
    assert (blight.source_id, blight.title) == ("0c1a0de0-0000-4000-8000-000000000001", "Tomato blight")
    assert (blight.created_at, blight.updated_at) == (utc(2025, 3, 4, 8), utc(2025, 3, 4, 8, 5))
    assert [(m.role, m.content, m.created_at) for m in blight.messages] == [
        ("user", "My tomato leaves have brown spots. Blight?", utc(2025, 3, 4, 8)),
        (
            "assistant",
            "Probably early blight.\n\nRemove the lower leaves and water at the base.",
            utc(2025, 3, 4, 8, 0, 30),
        ),
        ("user", "Thanks, and copper spray?", utc(2025, 3, 4, 8, 4)),
    ]
    assert blight.messages[0].id == "0c1a0de0-0000-4000-8000-0000000000a1"
    assert untitled.title is None and [m.content for m in untitled.messages] == ["Say hi", "Hi!"]


async def test_bringing_in_twice_adds_nothing_and_each_user_gets_their_own() -> None:
    store = InMemorySessionStore()
    conversations = parse_export("chatgpt", CHATGPT.read_bytes(), max_messages=1000)
    first = await bring_in(store, conversations, owner="alice", profile_id="secretary")
    assert [s.name for s in first.imported] == ["Sourdough starter", "Packing list"] and not first.skipped
    again = await bring_in(store, conversations, owner="alice", profile_id="secretary")
    assert again.imported == [] and again.skipped == [s.id for s in first.imported]
    bob = await bring_in(store, conversations, owner="bob", profile_id="secretary")
    assert len(bob.imported) == 2 and {s.id for s in bob.imported}.isdisjoint(s.id for s in first.imported)
    assert len(await store.list(owner="alice")) == 2 and len(await store.list(owner="bob")) == 2
    got = await store.get(session_id_for("chatgpt", "alice", conversations[0].source_id), owner="alice")
    assert got is not None
    assert (got.name, got.created_at, got.last_active) == (
        "Sourdough starter",
        utc(2025, 1, 1, 12),
        utc(2025, 1, 1, 13),
    )
    assert [m.content for m in got.context] == [m.content for m in got.messages]  # the model sees it
    assert got.custom["imported_from"]["source"] == "chatgpt"
    # the other branches are branches of the session: the regenerated answer, the edited question
    assert "branches" not in got.custom["imported_from"] and got.message_count == 7
    first, answer = got.messages[0], got.messages[1]
    again = await store.get(got.id, owner="alice", branch=tree.children(got.parents)[first.id][0])
    assert (
        again is not None
        and [m.content for m in again.messages][1] == "Feed it once a day at room temperature."
    )
    assert tree.children(got.parents)[first.id] == [again.messages[1].id, answer.id]  # the older first
    other_root = next(r for r in tree.children(got.parents)[None] if r != first.id)
    edited = await store.get(got.id, owner="alice", branch=other_root)
    assert edited is not None and [m.content for m in edited.messages] == [
        "How do I dry a sourdough starter?",
        "Spread it thin on baking paper and let it dry for two days.",
    ]


def broken_chatgpt() -> list[tuple[str, Any]]:
    good = load(CHATGPT)
    cases: list[tuple[str, Any]] = [("is not JSON", b"{nope"), ("holds a list", {"title": "x"})]

    def case(why: str, change: Any) -> None:
        data = copy.deepcopy(good)
        change(data)
        cases.append((why, data))

    case(
        "not in the mapping",
        lambda d: d[1]["mapping"]["bbbbbbbb-0000-4000-8000-000000000002"].update(parent="x"),
    )
    case("`current_node` 'gone' is not in the mapping", lambda d: d[0].update(current_node="gone"))
    case("`mapping` must be an object", lambda d: d[1].update(mapping=[]))
    case("`id` must be a non-empty string", lambda d: (d[1].pop("id"), d[1].pop("conversation_id")))
    case("seconds since 1970", lambda d: d[0].update(create_time="yesterday"))
    case("is not a time", lambda d: d[0].update(create_time=1e300))
    case(
        "the parents form a loop",
        lambda d: d[1]["mapping"]["bbbbbbbb-0000-4000-8000-000000000001"].update(
            parent="bbbbbbbb-0000-4000-8000-000000000004"
        ),
    )
    case(
        "no `author.role`",
        lambda d: d[1]["mapping"]["bbbbbbbb-0000-4000-8000-000000000002"]["message"].pop("author"),
    )
    case("two conversations have the id", lambda d: d[1].update(id=d[0]["id"], conversation_id=d[0]["id"]))
    return cases


@pytest.mark.parametrize(("why", "data"), broken_chatgpt())
def test_a_bad_chatgpt_file_says_what_is_wrong(why: str, data: Any) -> None:
    text = data if isinstance(data, bytes) else json.dumps(data).encode()
    with pytest.raises(ExportError, match=why.replace("(", r"\(").replace(")", r"\)")) as caught:
        parse_export("chatgpt", text, max_messages=1000)
    assert "ChatGPT" in str(caught.value) or "conversation " in str(caught.value)


@pytest.mark.parametrize(
    ("why", "change"),
    [
        ("`sender` must be", lambda d: d[0]["chat_messages"][1].update(sender="robot")),
        ("not an ISO 8601 time", lambda d: d[0]["chat_messages"][0].update(created_at="noon")),
        ("`chat_messages` must be a list", lambda d: d[1].pop("chat_messages")),
        ("`uuid` must be a non-empty string", lambda d: d[1].update(uuid=7)),
        ("`content` must be a list", lambda d: d[0]["chat_messages"][0].update(content="text")),
    ],
)
def test_a_bad_claude_file_says_what_is_wrong(why: str, change: Any) -> None:
    data = load(CLAUDE)
    change(data)
    with pytest.raises(ExportError, match=why):
        parse_export("claude", json.dumps(data).encode(), max_messages=1000)


def test_too_many_messages_are_refused() -> None:
    with pytest.raises(ExportError, match="NAVI_IMPORT_MAX_MESSAGES"):
        parse_export("chatgpt", CHATGPT.read_bytes(), max_messages=5)
    with pytest.raises(ExportError, match="NAVI_IMPORT_MAX_MESSAGES"):
        parse_export("claude", CLAUDE.read_bytes(), max_messages=2)


def comb(spine: int, *, cid: str = "comb") -> dict[str, Any]:
    """A ChatGPT conversation shaped as a comb: a path of `spine` nodes (a question, then answers
    and questions in turn) where every node also has a leaf, a regenerated answer or an edited
    question, off it — 2 × `spine` nodes. Walking from every leaf to the root costs their square."""
    mapping: dict[str, Any] = {}
    for i in range(spine):
        role = "user" if i % 2 == 0 else "assistant"
        parent = f"m{i - 1}" if i else None
        for key, text in ((f"m{i}", f"main {i}"), (f"l{i}", f"leaf {i}")):
            mapping[key] = {
                "id": key,
                "parent": parent,
                "children": [f"m{i + 1}", f"l{i + 1}"] if key == f"m{i}" and i + 1 < spine else [],
                "message": {
                    "id": key,
                    "author": {"role": role},
                    "create_time": 1_700_000_000 + i,
                    "content": {"content_type": "text", "parts": [text]},
                },
            }
    last = f"m{spine - 1}"
    return {
        "id": cid,
        "title": "Comb",
        "create_time": 1_700_000_000,
        "current_node": last,
        "mapping": mapping,
    }


class Counted(dict[str, Any]):
    """A node that counts how often its parent is asked for: each ask is one step of a walk up."""

    asks = 0

    def get(self, key: str, default: Any = None) -> Any:
        if key == "parent":
            Counted.asks += 1
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        if key == "parent":
            Counted.asks += 1
        return super().__getitem__(key)


def test_a_comb_shaped_export_is_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 nodes on the path and a leaf off each (20,000 nodes): every node's parent is asked
    for a few times at most, not once per leaf below it (that was 50,000,000 steps, about ten
    seconds); the path is the session's active branch and each leaf a branch off its node."""
    spine = 10_000
    parsed = json.loads

    def counted(text: Any) -> Any:
        data = parsed(text)
        for conv in data:
            conv["mapping"] = {k: Counted(node) for k, node in conv["mapping"].items()}
        return data

    monkeypatch.setattr(foreign.safejson, "loads", counted)
    Counted.asks = 0
    body = json.dumps([comb(spine)]).encode()
    (conv,) = parse_export("chatgpt", body, max_messages=2 * spine, max_file_messages=2 * spine)
    assert Counted.asks <= 3 * 2 * spine, Counted.asks  # before: 50,015,000
    assert [m.content for m in conv.messages] == [f"main {i}" for i in range(spine)]
    assert len(conv.branches) == spine
    assert conv.branches[0] == {
        "after": None,  # an edited first question: a root of its own
        "messages": [{"id": "l0", "role": "user", "content": "leaf 0", "created_at": "2023-11-14T22:13:20Z"}],
    }
    assert [(b["after"], b["messages"][0]["content"]) for b in conv.branches[1:3]] == [
        ("m0", "leaf 1"),
        ("m1", "leaf 2"),
    ]
    session = to_session(conv, owner="alice", profile_id="secretary")
    assert len(session.messages) == len(session.others) == spine and len(session.parents) == 2 * spine
    assert session.active_leaf == f"m{spine - 1}"
    assert tree.children(session.parents)["m5"] == ["m6", "l6"]  # said at one time: the path's first


def test_a_branch_off_a_branch_hangs_after_its_message() -> None:
    """Two answers to an edited question (a leaf that got children): the first is a branch with the
    edited question, the second hangs after that question — not a second copy of it."""
    data = comb(4)
    mapping = data["mapping"]
    mapping["l1"]["children"] = ["x", "y"]
    for key in ("x", "y"):
        mapping[key] = copy.deepcopy(mapping["l2"]) | {"id": key, "parent": "l1", "children": []}
        mapping[key]["message"] |= {"id": key, "content": {"content_type": "text", "parts": [f"{key} to l1"]}}
    (conv,) = parse_export("chatgpt", json.dumps([data]).encode(), max_messages=100)
    assert [(b["after"], [m["id"] for m in b["messages"]]) for b in conv.branches] == [
        (None, ["l0"]),
        ("m1", ["l2"]),
        ("m2", ["l3"]),
        ("m0", ["l1", "x"]),
        ("l1", ["y"]),
    ]


@pytest.mark.parametrize("source", ["chatgpt", "claude"])
def test_a_file_over_the_cap_is_refused_whole(source: str) -> None:
    """Every conversation under NAVI_IMPORT_MAX_MESSAGES, the file over NAVI_IMPORT_MAX_FILE_MESSAGES:
    refused before anything is read or stored, naming the cap."""
    if source == "chatgpt":
        data = [comb(50, cid=f"c{n}") for n in range(5)]  # 100 nodes each
    else:
        data = [copy.deepcopy(load(CLAUDE)[0]) | {"uuid": f"u{n}"} for n in range(5)]
    body = json.dumps(data).encode()
    each = len(data[0]["mapping" if source == "chatgpt" else "chat_messages"])
    assert len(parse_export(source, body, max_messages=each, max_file_messages=5 * each)) == 5
    with pytest.raises(ExportError, match=r"at most [\d,]+ \(NAVI_IMPORT_MAX_FILE_MESSAGES\)") as caught:
        parse_export(source, body, max_messages=each, max_file_messages=5 * each - 1)
    assert f"holds {5 * each:,} messages" in str(caught.value)


def test_navi_sessions_import_from_refuses_a_file_over_the_cap(tmp_path: Path) -> None:
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps([comb(50, cid=f"c{n}") for n in range(3)]), encoding="utf-8")
    env = {
        "DB_PATH": str(tmp_path / "navi.db"),
        "LOG_LEVEL": "WARNING",
        "NAVI_IMPORT_MAX_FILE_MESSAGES": "299",
    }
    result = runner.invoke(app, ["sessions", "import", "--from", "chatgpt", str(source)], env=env)
    assert result.exit_code == 1 and "NAVI_IMPORT_MAX_FILE_MESSAGES" in result.output, result.output
    listed = runner.invoke(app, ["sessions", "list"], env=env)
    assert "Comb" not in listed.output  # nothing of it was imported


def cli(db: Path, *args: str) -> Any:
    return runner.invoke(app, ["sessions", *args], env={"DB_PATH": str(db), "LOG_LEVEL": "WARNING"})


def test_navi_sessions_import_from(tmp_path: Path) -> None:
    db = tmp_path / "navi.db"
    done = cli(db, "import", "--from", "chatgpt", str(CHATGPT))
    assert done.exit_code == 0, done.output
    assert (
        done.stdout.splitlines()[-1] == "imported 2 conversations from ChatGPT (6 messages); 0 already there"
    )
    again = cli(db, "import", "--from", "chatgpt", str(CHATGPT))
    assert (
        again.stdout.splitlines()[-1] == "imported 0 conversations from ChatGPT (0 messages); 2 already there"
    )
    claude = cli(db, "import", "--from", "claude", str(CLAUDE), "--user", "local")
    assert claude.exit_code == 0 and "imported 2 conversations from Claude (5 messages)" in claude.stdout
    names = sorted(s["name"] or "" for s in json.loads(cli(db, "list", "--json").stdout))
    assert names == ["", "Packing list", "Sourdough starter", "Tomato blight"]
    hits = json.loads(cli(db, "search", "copper", "--json").stdout)
    assert [h["session_name"] for h in hits] == ["Tomato blight"]
    # A bad file: one line saying what is wrong, and nothing of it stored.
    bad = [
        {"uuid": "n", "name": "New", "chat_messages": []},
        {"uuid": "z", "name": "Late", "chat_messages": [{"sender": "alien"}]},
    ]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = cli(db, "import", "--from", "claude", str(tmp_path / "bad.json"))
    assert refused.exit_code == 1 and "conversation 1 (Late)/chat_messages/0" in refused.stderr
    assert len(json.loads(cli(db, "list", "--json").stdout)) == 4  # "New" was not stored either
    unknown = cli(db, "import", "--from", "gemini", str(CLAUDE))
    assert unknown.exit_code == 2


def test_the_rest_route_takes_an_upload_per_user(tmp_path: Path, fake_server: FakeModelServer) -> None:
    claude = load(CLAUDE)
    cap = sum(len(c["chat_messages"]) for c in claude)  # the fixture's messages, and not one more
    with live_navi(tmp_path, fake_server, navi_import_max_file_messages=cap) as navi, navi.client() as http:
        files = {"file": ("conversations.json", CLAUDE.read_bytes(), "application/json")}
        done = http.post("/sessions/import", params={"from": "claude"}, files=files)
        assert done.status_code == 201, done.text
        body = done.json()
        assert [(s["name"], s["messages"]) for s in body["imported"]] == [("Tomato blight", 3), (None, 2)]
        assert body["skipped"] == 0
        again = http.post(
            "/sessions/import",
            params={"from": "claude"},
            content=CLAUDE.read_bytes(),
            headers={"Content-Type": "application/json"},
        )
        assert again.status_code == 201 and again.json() == {"imported": [], "skipped": 2, "source": "claude"}
        refused = http.post(
            "/sessions/import", params={"from": "chatgpt"}, files={"file": ("c.json", b"[1]")}
        )
        assert refused.status_code == 422 and refused.json()["code"] == "bad_archive"
        assert "conversation 0" in refused.json()["detail"]
        assert http.post("/sessions/import", params={"from": "gemini"}, files=files).status_code == 422
        missing = http.post("/sessions/import", params={"from": "claude"}, files={"other": ("x", b"[]")})
        assert missing.status_code == 422 and "file" in missing.json()["detail"]
        more = [*claude, copy.deepcopy(claude[0]) | {"uuid": "another"}]
        over = http.post("/sessions/import", params={"from": "claude"}, json=more)
        assert over.status_code == 422 and "NAVI_IMPORT_MAX_FILE_MESSAGES" in over.json()["detail"]
        assert len(http.get("/sessions").json()) == 2
