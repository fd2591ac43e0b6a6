"""Long-term memory end to end, with the scripted model: state facts, go idle, get remembered."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from navi import prompts
from navi.agent.events import ToolEvent
from navi.api.app import create_app
from navi.cli.main import _register, app
from navi.llm.errors import BackendUnreachable
from navi.llm.messages import utcnow
from navi.memory.base import DEFAULT_OWNER
from navi.memory.extractor import MemoryExtractor, fallback_summary, parse_facts, stated
from navi.storage.schema import sessions as sessions_table
from navi.storage.sessions import SqlSessionStore
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import collect, scripted_runtime
from tests.server_helpers import app_client

_register()
runner = CliRunner()

FACTS_REPLY = """Here is what I found:
- location: home_city = Oslo
- pets: cat = Miso, a grey tabby
- devices: nas = Synology DS920+ at 192.168.1.10
this line is junk
- work: employer = unknown
- family: sister = Ada"""
SAID = (
    "I live in Oslo and my cat is called Miso, a grey tabby. My NAS is a synology ds920+ at "
    "192.168.1.10. Weather in Paris?"
)


async def backdate(rt: Any, session_id: str, minutes: int = 45) -> None:
    """Pretend the session has been idle for a while."""
    store = rt.sessions
    assert isinstance(store, SqlSessionStore)
    when = utcnow() - timedelta(minutes=minutes)
    stmt = sessions_table.update().where(sessions_table.c.id == session_id).values(last_active=when)
    await store.db.write(lambda conn: conn.execute(stmt))


async def chat(rt: Any, said: str = SAID) -> str:
    script = rt.backends.get("ollama").script
    script.turn(
        Reply(tool_calls=[ScriptedCall("web_search", {"query": "weather Paris"})]),
        "It is sunny in Paris. Noted about Oslo and Miso! Your sister Ada says hi.",
    )
    rt.tools.get("web_search").client_factory = lambda: FakeSearch()
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, said))
    await rt.agent.settle()
    return session.id


class FakeSearch:
    def text(self, query: str, **kw: Any) -> list[dict[str, str]]:
        return [{"title": "Paris weather", "href": "https://example.org", "body": "Home: Paris, sunny, 25°C"}]


async def test_facts_are_extracted_remembered_searched_and_forgotten(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    sid = await chat(rt)
    # Not idle yet: nothing happens.
    assert (await rt.extractor.run_pending()).sessions == 0
    assert script.of_kind("extract") == []
    await backdate(rt, sid)
    script.extract(FACTS_REPLY)
    report = await rt.extractor.run_pending()
    # "Ada" is only in the assistant's answer: the person never said it, so it is not a fact.
    assert (report.sessions, report.facts, report.failed) == (1, 3, [])
    # Only what the person said was read: no answer, system prompt, memory message or tool output.
    (request,) = script.of_kind("extract")
    read = request.last_user_text
    assert SAID in read
    assert "It is sunny in Paris" not in read and "Ada" not in read
    assert "Home: Paris" not in read and "You are Navi" not in read and "Mode: personal secretary" not in read
    facts = {(f.category, f.key): f for f in await rt.memory.get_all_facts()}
    assert set(facts) == {("location", "home_city"), ("pets", "cat"), ("devices", "nas")}
    assert facts[("pets", "cat")].value == "Miso, a grey tabby" and facts[("pets", "cat")].session_id == sid
    summary = await rt.memory.get_summary()
    assert summary is not None and "home_city = Oslo" in summary
    assert await rt.memory.get_extracted_at(sid) is not None
    assert (await rt.extractor.run_pending()).sessions == 0  # nothing new since
    # The next session's model call carries the summary.
    script.turn(Reply(tool_calls=[ScriptedCall("memory_search", {"query": "cat"})]), "Your cat is Miso.")
    second = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(second.id, "What is my cat called?"))
    request = script.of_kind("turn")[-2]
    assert [m.role for m in request.messages].count("system") == 1  # merged into the one system message
    memory = request.system_text.split("## What I remember about the user", 1)[1]
    assert "Oslo" in memory
    found = next(e for e in events if isinstance(e, ToolEvent))
    assert found.success and "pets: cat = Miso, a grey tabby" in found.result
    # Forgetting removes it.
    script.turn(
        Reply(tool_calls=[ScriptedCall("memory_forget", {"key": "cat", "category": "pets"})]), "Forgotten."
    )
    await collect(rt.agent.run_stream(second.id, "Forget my cat."))
    assert ("pets", "cat") not in {(f.category, f.key) for f in await rt.memory.get_all_facts()}
    assert await rt.memory.search_facts("Miso") == []
    await rt.aclose()


async def test_a_repeated_fact_is_a_confirmation_and_a_changed_one_replaces(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    first = await chat(rt)
    await backdate(rt, first)
    script.extract("location: home_city = Oslo")
    await rt.extractor.run_pending()
    second = await chat(rt)
    await backdate(rt, second)
    script.extract("location: home_city = Oslo")
    await rt.extractor.run_pending()
    (fact,) = await rt.memory.get_all_facts()
    assert fact.confirmations == 2
    third = await chat(rt, "I moved to Bergen last week. Weather in Paris?")
    await backdate(rt, third)
    script.extract("Location: Home City = Bergen")
    await rt.extractor.run_pending()
    (fact,) = await rt.memory.get_all_facts()
    assert (fact.value, fact.confirmations) == ("Bergen", 1)
    known = script.of_kind("extract")[-1].last_user_text
    assert "location: home_city = Oslo" in known  # the model was told what was already known
    await rt.aclose()


async def test_junk_output_and_a_failing_model_leave_the_store_consistent(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    sid = await chat(rt)
    await backdate(rt, sid)
    await rt.memory.upsert_fact("pets", "dog", "Rex")
    await rt.memory.set_summary("They have a dog called Rex.")
    script.extract(Reply(exception=BackendUnreachable("cannot reach Ollama")))
    report = await rt.extractor.run_pending()
    assert report.failed == [sid] and report.sessions == 0
    assert await rt.memory.get_extracted_at(sid) is None  # tried again next time
    assert [f.key for f in await rt.memory.get_all_facts()] == ["dog"]
    assert await rt.memory.get_summary() == "They have a dog called Rex."
    script.extract("I could not find anything useful, sorry!\n:::\n= = =\nnope: = \n")
    report = await rt.extractor.run_pending()
    assert (report.sessions, report.facts) == (1, 0)
    assert await rt.memory.get_extracted_at(sid) is not None
    assert [f.key for f in await rt.memory.get_all_facts()] == ["dog"]
    assert await rt.memory.get_summary() == "They have a dog called Rex."
    # A failing summary falls back to the plain list of facts, never to nothing.
    other = await chat(rt)
    await backdate(rt, other)
    script.extract("pets: cat = Miso")
    script.profile(Reply(exception=BackendUnreachable("cannot reach Ollama")))
    await rt.extractor.run_pending()
    summary = await rt.memory.get_summary()
    assert summary == fallback_summary(await rt.memory.get_all_facts())
    assert "cat = Miso" in summary and "dog = Rex" in summary
    await rt.aclose()


def test_new_sessions_trigger_extraction(tmp_path: Path) -> None:
    async def prepare() -> tuple[Any, Any]:
        rt, backend, script = await scripted_runtime(tmp_path, sql=True)
        sid = await chat(rt)
        await backdate(rt, sid)
        script.extract("pets: cat = Miso")
        return rt, script

    rt, script = asyncio.run(prepare())
    with app_client(create_app(runtime=rt)) as client:
        assert client.post("/sessions").status_code == 201
        for _ in range(100):
            if client.get("/memory/facts").json():
                break
            time.sleep(0.02)
        facts = client.get("/memory/facts").json()
        assert [(f["category"], f["key"], f["value"]) for f in facts] == [("pets", "cat", "Miso")]
        assert [f["key"] for f in client.get("/memory/facts", params={"q": "miso"}).json()] == ["cat"]
        assert client.get("/memory/facts", params={"q": "bicycle"}).json() == []
        for _ in range(250):  # the summary is written after the facts, in the background too
            summary = client.get("/memory/summary").json()["summary"]
            if summary is not None:
                break
            time.sleep(0.02)
        assert "cat = Miso" in summary
        assert client.delete(f"/memory/facts/{facts[0]['id']}").json() == {"ok": True}
        assert client.delete(f"/memory/facts/{facts[0]['id']}").status_code == 404
        assert client.get("/memory/facts").json() == []
        assert client.post("/memory/extract").json() == {"sessions": 0, "facts": 0, "failed": []}
    asyncio.run(rt.aclose())


def test_memory_command(make_settings, monkeypatch) -> None:
    settings = make_settings()
    monkeypatch.setenv("DB_PATH", settings.db_path)

    async def seed() -> None:
        from navi.compose import build_runtime

        rt = await build_runtime(settings)
        await rt.memory.upsert_fact("location", "home_city", "Oslo")
        await rt.memory.upsert_fact("pets", "cat", "Miso")
        await rt.aclose()

    asyncio.run(seed())
    listed = runner.invoke(app, ["memory", "list"])
    assert (
        listed.exit_code == 0
        and "location: home_city = Oslo" in listed.output
        and "pets: cat = Miso" in listed.output
    )
    found = runner.invoke(app, ["memory", "search", "oslo"])
    assert found.exit_code == 0 and "home_city" in found.output and "Miso" not in found.output
    gone = runner.invoke(app, ["memory", "forget", "home_city", "--category", "location"])
    assert gone.exit_code == 0 and "Forgot 1 fact" in gone.output
    assert runner.invoke(app, ["memory", "forget", "home_city"]).exit_code == 1
    assert runner.invoke(app, ["memory", "forget", "abc", "--id"]).exit_code == 2
    assert "home_city" not in runner.invoke(app, ["memory", "list"]).output


def test_parsing_is_robust() -> None:
    parsed = parse_facts(FACTS_REPLY + "\n**Family**: sister = Ada.\n1) routines: gym = Mondays\nNONE")
    assert parsed == [
        ("location", "home_city", "Oslo"),
        ("pets", "cat", "Miso, a grey tabby"),
        ("devices", "nas", "Synology DS920+ at 192.168.1.10"),
        ("family", "sister", "Ada"),
        ("routines", "gym", "Mondays"),
    ]
    assert parse_facts("NONE") == [] and parse_facts("") == []
    assert json.dumps(parse_facts("a: b = " + "x" * 400)) == "[]"  # absurdly long values are dropped


async def say(rt: Any, text: str, answer: str = "Noted.") -> str:
    """One plain turn in a new session, then idle long enough to be read."""
    rt.backends.get("ollama").script.turn(answer)
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, text))
    await rt.agent.settle()
    await backdate(rt, session.id)
    return session.id


async def test_the_prompts_example_is_never_stored(tmp_path: Path) -> None:
    # SmolLM2-135M answered a conversation about a cat with the old prompt's own examples.
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    await say(rt, "My cat is called Miso and she sleeps all day.", "Miso sounds lovely! I live in Oslo.")
    script.extract(
        "location: home_city = Oslo\ndevices: nas = Synology DS920+ at 192.168.1.10\npets: cat = Miso"
    )
    report = await rt.extractor.run_pending()
    assert (report.sessions, report.facts) == (1, 1)
    assert [(f.category, f.key, f.value) for f in await rt.memory.get_all_facts()] == [
        ("pets", "cat", "Miso")
    ]
    await rt.aclose()


def test_the_extraction_prompt_has_no_values_to_copy() -> None:
    text = prompts.load("memory_extract")
    assert set(parse_facts(text)) <= {("category", "key", "value")}  # only the placeholder form
    assert "Oslo" not in text and "192.168" not in text and "Synology" not in text


def test_a_value_counts_only_if_the_person_said_it() -> None:
    said = [
        ("Oslo", "I live in oslo."),
        ("Synology DS920+", "my NAS is a synology ds-920 plus"),
        ("Synology DS920+ at 192.168.1.10", "It's a Synology DS920+, IP 192.168.1.10"),
        ("2", "I have two kids"),
        ("cats", "I have a cat and a dog"),
    ]
    never_said = [
        ("Oslo", "I live in Bergen."),
        ("192.168.1.10", "the NAS is at 192.168.1.11"),
        ("Miso, a grey tabby", "my cat is called Miso"),
        ("Synology DS920+", "I have a NAS"),
        ("...", "anything"),
    ]
    assert [stated(value, text) for value, text in said] == [True] * len(said)
    assert [stated(value, text) for value, text in never_said] == [False] * len(never_said)


async def test_a_running_session_is_skipped_and_stays_due(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    sid = await say(rt, "My cat is called Miso.")
    running = {sid}
    extractor = MemoryExtractor(
        sessions=rt.sessions,
        memory=rt.memory,
        backends=rt.backends,
        profiles=rt.profiles,
        stale_minutes=30,
        is_running=lambda session_id: session_id in running,
        max_tokens=77,
    )
    assert (await extractor.run_pending()).sessions == 0
    assert script.of_kind("extract") == [] and await rt.memory.get_extracted_at(sid) is None
    running.clear()
    script.extract("pets: cat = Miso")
    assert (await extractor.run_pending()).sessions == 1
    assert await rt.memory.get_extracted_at(sid) is not None
    # Both of its calls, the extraction and the profile, were capped.
    kinds = [r.system_text.split()[0] for r in script.requests[-2:]]
    assert kinds == ["You", "Write"] and [o.max_tokens for o in backend.options[-2:]] == [77, 77]
    await rt.aclose()


async def test_an_unusable_profile_is_replaced_by_the_list_of_facts(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    await rt.memory.upsert_fact("pets", "cat", "Miso")
    await rt.memory.upsert_fact("location", "home_city", "Bergen")
    await rt.memory.upsert_fact("work", "job", "nurse")
    bad = [
        Reply(text=""),
        # The profile prompt played back.
        Reply(
            text="Write a short profile of the person from the facts below, for an assistant that "
            "reads it before every conversation."
        ),
        Reply(text="They have a cat called Miso. " * 12),  # a loop until the cap
        Reply(text="They have a cat called Mi", finish_reason="length"),  # cut before a sentence ended
        Reply(text="They live at 42 Oak Street with their cat Miso."),  # an address nobody gave
        Reply(text="The person is a pet: Miso, a cat: Bergen, a nurse: Joe."),  # SmolLM2-135M, names made up
        Reply(text="They are a person who likes to talk with their assistant."),  # nothing from the facts
    ]
    fallback = fallback_summary(await rt.memory.get_all_facts())
    written = []
    for reply in bad:
        await rt.memory.set_summary("(stale)", owner=DEFAULT_OWNER)
        script.profile(reply)
        await rt.extractor.refresh_summary(DEFAULT_OWNER)
        written.append(await rt.memory.get_summary())
    assert written == [fallback] * len(bad)
    await rt.aclose()


async def test_a_good_profile_is_kept(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    await say(rt, "My cat is called Miso.")
    script.extract("pets: cat = Miso")
    script.profile(Reply(text="They have a cat called Miso. It sleeps a lo", finish_reason="length"))
    await rt.extractor.run_pending()
    assert await rt.memory.get_summary() == "They have a cat called Miso."
    await rt.aclose()


async def test_a_temporary_chat_is_never_read_for_memory(tmp_path: Path) -> None:
    """Issue 49: a temporary chat, idle and due like any other, is left out; the same words in a
    kept conversation are read."""
    rt, _backend, script = await scripted_runtime(tmp_path, sql=True)
    rt.backends.get("ollama").script.turn("Noted.")
    temp = await rt.sessions.create("secretary", temporary=True)
    await collect(rt.agent.run_stream(temp.id, "My cat is called Miso."))
    await rt.agent.settle()
    await backdate(rt, temp.id)
    assert (await rt.extractor.run_pending()).sessions == 0
    assert script.of_kind("extract") == [] and await rt.memory.get_extracted_at(temp.id) is None
    session = await rt.sessions.get(temp.id)
    assert session is not None and await rt.extractor.extract(session) == 0
    assert await rt.extractor.flush(temp.id, session.messages) == 0
    assert script.of_kind("extract") == [] and await rt.memory.get_all_facts(limit=10) == []
    kept = await say(rt, "My cat is called Miso.")
    script.extract("pets: cat = Miso")
    assert (await rt.extractor.run_pending()).sessions == 1
    assert await rt.memory.get_extracted_at(kept) is not None
    await rt.aclose()
