"""Seeing and correcting memory: POST/PATCH /memory/facts, history, `navi memory add|edit|history`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from navi.api.app import create_app
from navi.cli.main import _register, app
from navi.testing.ports import free_port
from tests.agent_helpers import scripted_runtime
from tests.server_helpers import app_client
from tests.test_users import Two, two  # noqa: F401 - the fixture

_register()
runner = CliRunner()


def test_add_edit_and_history_over_rest(tmp_path: Path) -> None:
    rt, _, _ = asyncio.run(scripted_runtime(tmp_path, sql=True))
    with app_client(create_app(runtime=rt)) as client:
        added = client.post(
            "/memory/facts", json={"category": "Location", "key": "Home City", "value": " Lisbon "}
        )
        assert added.status_code == 200 and added.json()["outcome"] == "created"
        fact = added.json()["fact"]
        assert (fact["category"], fact["key"], fact["value"], fact["source"]) == (
            "location",
            "home_city",
            "Lisbon",
            "added",
        )
        fid = fact["id"]
        same = client.post(
            "/memory/facts", json={"category": "location", "key": "home_city", "value": "lisbon"}
        )
        assert same.json()["outcome"] == "confirmed" and same.json()["fact"]["confirmations"] == 2
        moved = client.post(
            "/memory/facts", json={"category": "location", "key": "home_city", "value": "Porto"}
        )
        assert moved.json()["outcome"] == "updated" and moved.json()["fact"]["id"] == fid
        edited = client.patch(f"/memory/facts/{fid}", json={"value": "Porto, Portugal"})
        assert edited.status_code == 200 and edited.json()["outcome"] == "updated"
        assert (
            edited.json()["fact"]["source"] == "edited"
            and edited.json()["fact"]["value"] == "Porto, Portugal"
        )
        assert [f["value"] for f in client.get("/memory/facts").json()] == ["Porto, Portugal"]
        former = client.get(f"/memory/facts/{fid}/history").json()
        assert [(f["value"], f["source"], f["replaced_by"]) for f in former] == [
            ("Porto", "added", fid),
            ("Lisbon", "added", fid),
        ]
        assert all(f["retired_at"] for f in former)
        assert client.get("/memory/facts", params={"q": "lisbon"}).json() == []
        both = client.get("/memory/facts", params={"q": "lisbon porto", "history": "true"}).json()
        assert both[0]["value"] == "Porto, Portugal" and "Lisbon" in [f["value"] for f in both]
        # A former value is not edited in place: the current one is.
        refused = client.patch(f"/memory/facts/{former[0]['id']}", json={"value": "Braga"})
        assert refused.status_code == 422 and str(fid) in refused.json()["detail"]
        # The summary is rewritten in the background on the client's event loop, which ends with
        # the client: waited for there (a rewrite still running at the end was cancelled with it).
        client.portal.call(rt.agent.settle)
    assert "Porto, Portugal" in (asyncio.run(rt.memory.get_summary()) or "")
    asyncio.run(rt.aclose())


def test_bad_input_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    rt, _, _ = asyncio.run(scripted_runtime(tmp_path, sql=True))
    with app_client(create_app(runtime=rt)) as client:
        fid = client.post("/memory/facts", json={"category": "pets", "key": "cat", "value": "Miso"}).json()[
            "fact"
        ]["id"]
        bad_adds: list[Any] = [
            {"category": "pets", "key": "cat", "value": "   "},
            {"category": "pets", "key": "", "value": "x"},
            {"category": "pets", "key": "!!!", "value": "x"},
            {"category": "x" * 65, "key": "cat", "value": "x"},
            {"category": "pets", "key": "cat"},
            {"category": "pets", "key": "cat", "value": "x", "owner": "bob"},
            {"category": "pets", "key": "cat", "value": 5},
            ["pets", "cat", "x"],
            {"category": "pets", "key": "cat", "value": "x" * 1001},
        ]
        for body in bad_adds:
            resp = client.post("/memory/facts", json=body)
            assert resp.status_code == 422 and resp.json()["detail"], body
        for body in ({"value": ""}, {"value": "  "}, {}, {"value": "x", "category": "y"}):
            assert client.patch(f"/memory/facts/{fid}", json=body).status_code == 422, body
        json_type = {"Content-Type": "application/json"}
        broken = client.post("/memory/facts", content='{"category": "pets", "key"', headers=json_type)
        assert broken.status_code == 422
        # Text no database can hold (NUL, a lone surrogate) is stored with U+FFFD in its place.
        raw = '{"category": "pets", "key": "dog", "value": "R\\u0000ex\\ud800"}'
        odd = client.post("/memory/facts", content=raw, headers=json_type)
        assert odd.status_code == 200 and odd.json()["fact"]["value"] == "R\ufffdex\ufffd"
        assert client.delete(f"/memory/facts/{odd.json()['fact']['id']}").status_code == 200
        assert client.patch("/memory/facts/999999", json={"value": "x"}).status_code == 404
        assert client.patch(f"/memory/facts/{2**40}", json={"value": "x"}).status_code == 422
        assert client.get("/memory/facts/999999/history").status_code == 404
        assert [(f["value"], f["confirmations"]) for f in client.get("/memory/facts").json()] == [("Miso", 1)]
        assert client.get(f"/memory/facts/{fid}/history").json() == []
    asyncio.run(rt.aclose())


def test_each_user_sees_and_edits_only_their_own_facts(two: Two) -> None:  # noqa: F811
    with two.as_user(two.alice) as alice, two.as_user(two.bob) as bob:
        fid = alice.post("/memory/facts", json={"category": "pets", "key": "cat", "value": "Miso"}).json()[
            "fact"
        ]["id"]
        alice.patch(f"/memory/facts/{fid}", json={"value": "Miso the tabby"})
        # bob's own fact with the same key is his, not an update of alice's
        mine = bob.post("/memory/facts", json={"category": "pets", "key": "cat", "value": "Felix"}).json()
        assert mine["outcome"] == "created" and mine["fact"]["id"] != fid
        assert bob.patch(f"/memory/facts/{fid}", json={"value": "Stolen"}).status_code == 404
        assert bob.get(f"/memory/facts/{fid}/history").status_code == 404
        assert [f["value"] for f in alice.get("/memory/facts").json()] == ["Miso the tabby"]
        assert [f["value"] for f in alice.get(f"/memory/facts/{fid}/history").json()] == ["Miso"]
        assert [f["value"] for f in bob.get("/memory/facts").json()] == ["Felix"]
        assert bob.get("/memory/facts", params={"q": "miso", "history": "true"}).json() == []
    with two.navi.client() as owner:  # the owner is a user too, with no facts
        assert owner.get("/memory/facts").json() == []
        assert owner.get(f"/memory/facts/{fid}/history").status_code == 404


def test_memory_add_edit_and_history_commands(make_settings: Any, monkeypatch: Any) -> None:
    settings = make_settings()
    monkeypatch.setenv("DB_PATH", settings.db_path)
    added = runner.invoke(app, ["memory", "add", "location", "home city", "Lisbon"])
    assert added.exit_code == 0, added.stdout
    assert "Remembered:" in added.stdout and "location: home_city = Lisbon" in added.stdout
    fid = added.stdout.split(":", 1)[1].split()[0]
    moved = runner.invoke(app, ["memory", "add", "location", "home_city", "Porto"])
    assert moved.exit_code == 0 and f"Updated: {fid}  location: home_city = Porto" in moved.stdout
    edited = runner.invoke(app, ["memory", "edit", fid, "Porto, Portugal"])
    assert edited.exit_code == 0 and "Edited:" in edited.stdout and "Porto, Portugal" in edited.stdout
    shown = runner.invoke(app, ["memory", "history", fid])
    assert shown.exit_code == 0
    lines = shown.stdout.splitlines()
    assert "home_city = Porto, Portugal" in lines[0]
    assert lines[1].strip().startswith("was Porto  (") and "added" in lines[1]
    assert lines[2].strip().startswith("was Lisbon  (")
    listed = runner.invoke(app, ["memory", "list"]).stdout
    assert "Porto, Portugal" in listed and "Lisbon" not in listed
    empty = runner.invoke(app, ["memory", "add", "location", "home_city", "   "])
    assert empty.exit_code == 2 and "needs a category, a key and a value" in empty.output
    missing = runner.invoke(app, ["memory", "edit", "9999", "x"])
    assert missing.exit_code == 1 and "no current fact 9999" in missing.output
    assert runner.invoke(app, ["memory", "history", "9999"]).exit_code == 1
    assert "Porto, Portugal" in runner.invoke(app, ["memory", "list"]).stdout


def test_a_facts_source_names_its_session_and_message(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from navi.llm.messages import Message
    from navi.sessions.models import Session, new_session_id

    rt, _, _ = asyncio.run(scripted_runtime(tmp_path, sql=True))
    said = Message.user("By the way, my cat is called Miso.", created_at=datetime(2026, 3, 3, 9, tzinfo=UTC))
    session = Session(id=new_session_id(), profile_id="general", name="Pets", messages=[said])

    async def seed() -> tuple[int, int, int]:
        await rt.sessions.insert(session)
        told, _ = await rt.memory.upsert_fact("pets", "cat", "Miso", session_id=session.id)
        theirs, _ = await rt.memory.upsert_fact("pets", "dog", "Rex", owner="bob", session_id=session.id)
        typed, _ = await rt.memory.upsert_fact("pets", "fish", "Nemo", source="added")
        return told.id, theirs.id, typed.id

    told, theirs, typed = asyncio.run(seed())
    with app_client(create_app(runtime=rt)) as client:
        got = client.get(f"/memory/facts/{told}/source")
        assert got.status_code == 200
        assert got.json() == {
            "session_id": session.id,
            "session_name": "Pets",
            "message_id": said.id,
            "created_at": "2026-03-03T09:00:00Z",
            "text": "By the way, my cat is called Miso.",
        }
        assert client.get(f"/memory/facts/{typed}/source").json() is None  # added by hand
        assert client.get(f"/memory/facts/{theirs}/source").status_code == 404  # another user's
        assert client.get("/memory/facts/999999/source").status_code == 404
        assert client.get("/memory/facts/0/source").status_code == 422
    asyncio.run(rt.aclose())


def test_memory_commands_without_a_model_server(make_settings: Any, monkeypatch: Any, capfd: Any) -> None:
    """Nothing lost and said in words: the fact is stored and the summary made from the facts
    alone, the user is told why (not shown the server's log line); a search that matches nothing
    says so; forgetting the last fact empties the summary, which would go on naming it."""
    closed = free_port()
    settings = make_settings()
    monkeypatch.setenv("DB_PATH", settings.db_path)
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed}")
    added = runner.invoke(app, ["memory", "add", "location", "home_city", "Porto"])
    assert added.exit_code == 0, added.output
    assert "Remembered:" in added.stdout and "home_city = Porto" in added.stdout
    assert "could not write the memory summary" in added.output and "cannot reach Ollama" in added.output
    assert "memory.summary_failed" not in added.output + capfd.readouterr().err
    listed = runner.invoke(app, ["memory", "list", "--summary"]).stdout
    assert "Summary:" in listed and "Porto" in listed.split("Summary:")[1]
    searched = runner.invoke(app, ["memory", "search", "where do I live"])
    assert searched.exit_code == 0 and "Nothing remembered matches 'where do I live'." in searched.stdout
    forgot = runner.invoke(app, ["memory", "forget", "home_city"])
    assert forgot.exit_code == 0 and "Forgot 1 fact." in forgot.stdout
    after = runner.invoke(app, ["memory", "list", "--summary"]).stdout
    assert "Nothing remembered." in after and "(none yet)" in after and "Porto" not in after


async def test_summary_rewrites_of_one_owner_never_write_older_facts_last(tmp_path: Path) -> None:
    """Two changes close together start two rewrites: the first's model call is slow, the second's
    quick. Before, the first wrote last, and the summary showed the value the person had replaced."""
    from types import SimpleNamespace

    rt, _, _ = await scripted_runtime(tmp_path, sql=True)
    released, asked = asyncio.Event(), asyncio.Event()
    calls: list[str] = []

    class Model:
        async def complete(self, messages: Any, options: Any, tools: Any = None) -> Any:
            listing = messages[-1].content
            calls.append(listing)
            asked.set()
            if len(calls) == 1:
                await released.wait()  # the first rewrite's model answers late
            return SimpleNamespace(text=f"They live in {listing.split('= ')[-1]}.", finish_reason="stop")

    rt.extractor._model = lambda: (Model(), "m")  # type: ignore[method-assign]
    try:
        await rt.memory.upsert_fact("location", "home_city", "Porto", source="added")
        first = asyncio.create_task(rt.extractor.refresh_summary("local"))
        await asked.wait()
        await rt.memory.upsert_fact("location", "home_city", "Porto, Portugal", source="edited")
        second = asyncio.create_task(rt.extractor.refresh_summary("local"))
        await asyncio.sleep(0.2)
        released.set()
        await asyncio.gather(first, second)
        assert "Porto, Portugal" in (await rt.memory.get_summary() or "")
        assert len(calls) == 2 and "Porto, Portugal" in calls[1]
    finally:
        await rt.aclose()
