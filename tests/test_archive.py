"""session-archive/v1: export, schema validation, and an import that loses nothing."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest

from navi.llm.messages import Message, ToolCall, utcnow
from navi.sessions.archive import ArchiveError, export_session, import_archive, settle_profile
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.models import Session
from navi.storage.database import sqlite_url
from navi.storage.sessions import SqlSessionStore

SCHEMA_FILE = Path(__file__).parents[1] / "navi" / "sessions" / "session-archive-v1.schema.json"


def rich_session() -> Session:
    t0 = utcnow() - timedelta(hours=2)
    search = ToolCall(name="web_search", arguments={"query": "Oslo weather"})
    broken = ToolCall.from_raw("todo", '{"tasks": [')
    u1 = Message.user(
        "What's the weather? Photo attached.", images=["iVBORw0KGgoAAAANSUhEUg=="], created_at=t0
    )
    plan = Message.assistant("1. Search\n2. Answer", is_plan=True, created_at=t0 + timedelta(seconds=1))
    call = Message.assistant(
        "", thinking="need data", tool_calls=[search, broken], created_at=t0 + timedelta(seconds=2)
    )
    r1 = Message.tool(
        "4°C, rain",
        tool_call_id=search.id,
        name="web_search",
        metadata={"status": "ok", "duration_ms": 812.5},
        created_at=t0 + timedelta(seconds=3),
    )
    r2 = Message.tool(
        "error: arguments are not valid JSON",
        tool_call_id=broken.id,
        name="todo",
        metadata={"status": "error", "duration_ms": 0},
        created_at=t0 + timedelta(seconds=3),
    )
    answer = Message.assistant(
        "Rainy, 4°C.",
        thinking="summarise",
        thinking_signature="sig-1",
        created_at=t0 + timedelta(seconds=4),
        metadata={"usage": {"prompt_tokens": 120}},
    )
    marker = Message.assistant(
        "Context compressed",
        is_compression=True,
        created_at=t0 + timedelta(seconds=5),
        metadata={"messages_before": 6, "messages_after": 2},
    )
    stopped = Message.assistant("Partial ans", stopped=True, created_at=t0 + timedelta(seconds=6))
    summary = Message.user(
        "Summary: user asked for Oslo weather; it was 4°C and rainy.",
        is_summary=True,
        created_at=t0 + timedelta(seconds=5),
        metadata={"tokens_before": 900, "tokens_after": 40},
    )
    image_for_model = Message.user(
        "[image from image_view]", images=["R0lGODlhAQABAAAAACw="], created_at=t0 + timedelta(seconds=6)
    )
    return Session(
        id="aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        profile_id="secretary",
        name="Oslo weather",
        pinned=True,
        context_token_count=432,
        created_at=t0,
        last_active=t0 + timedelta(seconds=6),
        messages=[u1, plan, call, r1, r2, answer, marker, stopped],
        context=[summary, answer, image_for_model, stopped],
        planning_logs=[{"raw": "1. Search\n2. Answer", "plan": "1. Search\n2. Answer"}],
    )


RICH = rich_session()


def export(session: Session) -> dict:
    return export_session(
        session,
        provider="ollama",
        model="gemma4:e2b-it-q8_0",
        model_params={"temperature": 0.7, "num_ctx": 65536, "think": True},
        system_prompt="You are Navi.\n\n---\n\nMode: secretary",
        tools=[{"name": "web_search", "description": "Search", "parameters": {"type": "object"}}],
        settings={"context_compression_threshold": 0.8, "context_keep_recent": 10},
        keep_recent=10,
    )


def test_export_matches_the_schema_file() -> None:
    data = export(RICH)
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(data)
    assert data["schema_version"] == "session-archive/v1"
    meta = data["session"]
    assert meta["model"] == "gemma4:e2b-it-q8_0" and meta["provider"] == "ollama"
    assert meta["system_prompt"].startswith("You are Navi.")
    assert meta["summary"]["text"].startswith("Summary: user asked")
    assert meta["summary"]["preserve_recent"] == 10


def test_tool_calls_link_to_results_with_status_and_duration() -> None:
    data = export(RICH)
    requested = data["messages"][2]["metadata"]["requested_tool_calls"]
    results = [m for m in data["messages"] if m["role"] == "tool"]
    assert [r["metadata"]["call_id"] for r in results] == [c["call_id"] for c in requested]
    assert results[0]["metadata"]["status"] == "ok" and results[0]["metadata"]["duration_ms"] == 812.5
    assert results[0]["metadata"]["arguments"] == {"query": "Oslo weather"}
    assert results[1]["metadata"]["status"] == "error"
    assert requested[1]["raw_arguments"] == '{"tasks": ['


def test_context_shares_display_messages_by_reference() -> None:
    data = export(RICH)
    refs = [c for c in data["context"] if "ref" in c]
    assert [r["ref"] for r in refs] == [RICH.messages[5].id, RICH.messages[7].id]
    assert data["context"][0]["metadata"]["is_summary"] is True


def test_round_trip_is_equal_field_by_field() -> None:
    original = RICH
    data = json.loads(json.dumps(export(original)))  # through real JSON text
    restored = import_archive(data)
    assert restored.id != original.id
    for field in (
        "profile_id",
        "name",
        "pinned",
        "context_token_count",
        "created_at",
        "last_active",
        "planning_logs",
        "owner",
    ):
        assert getattr(restored, field) == getattr(original, field), field
    assert len(restored.messages) == len(original.messages)
    for got, want in zip(restored.messages, original.messages, strict=True):
        assert got == want
    for got, want in zip(restored.context, original.context, strict=True):
        assert got == want
    again = export(restored)
    first = export(original)
    for doc in (again, first):
        doc.pop("exported_at")
        doc["session"].pop("id")
    assert again == first


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_imported_session_survives_a_store(kind: str, tmp_path: Path) -> None:
    store = InMemorySessionStore() if kind == "memory" else SqlSessionStore.at(sqlite_url(tmp_path / "a.db"))
    await store.open()
    try:
        restored = import_archive(export(RICH))
        await store.insert(restored)
        got = await store.get(restored.id)
        assert got is not None
        assert got.messages == RICH.messages
        assert got.context == RICH.context
        assert got.planning_logs == RICH.planning_logs
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.update(schema_version="session-archive/v9"), "unsupported schema_version"),
        (lambda d: d["session"].pop("created_at"), "'created_at' is a required property"),
        (lambda d: d["messages"][0].update(role="robot"), "messages/0/role"),
        (lambda d: d["messages"][0].update(timestamp="yesterday"), "messages/0/timestamp"),
        (lambda d: d["context"].append({"ref": "no-such-message"}), "not in messages"),
        (lambda d: d.update(extra_field=1), "Additional properties"),
    ],
)
def test_bad_archives_are_refused_clearly(mutate, expected: str) -> None:
    data = export(RICH)
    mutate(data)
    with pytest.raises(ArchiveError) as err:
        import_archive(data)
    assert expected in str(err.value)


def test_non_object_archive() -> None:
    with pytest.raises(ArchiveError, match="JSON object"):
        import_archive(["not", "an", "archive"])


# --- analytics and archives written by AbstractCore -------------------------------------------------
ABSTRACTCORE = Path(__file__).parent / "fixtures" / "abstractcore-session.json"
ASSESSMENT = {
    "created_at": "2026-01-02T03:04:05Z",
    "criteria": ["accuracy", "brevity"],
    "overall_score": 4,
    "judge_summary": "Right answer, quickly.",
    "strengths": ["checked the weather first"],
    "actionable_feedback": ["say where the numbers come from"],
}
FACTS = {
    "extracted_at": "2026-01-02T03:04:06Z",
    "simple_triples": [["Oslo", "had", "4°C and rain"]],
    "statistics": {"entities_count": 2, "relationships_count": 1},
}


def abstractcore() -> dict:
    return json.loads(ABSTRACTCORE.read_text(encoding="utf-8"))


def without_ids_and_times(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))
    doc.pop("exported_at")
    doc["session"].pop("id")
    return doc


def test_analytics_go_out_and_come_back_exactly() -> None:
    session = RICH.model_copy(deep=True)
    session.analysis = {"assessment": ASSESSMENT, "facts": FACTS}
    first = export(session)
    jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text())).validate(first)
    assert first["session"]["assessment"] == ASSESSMENT and first["session"]["facts"] == FACTS
    assert first["session"]["summary"]["text"].startswith("Summary: user asked")  # compression's
    restored = import_archive(json.loads(json.dumps(first)))
    assert restored.analysis == {"assessment": ASSESSMENT, "facts": FACTS}  # the summary is derived
    assert without_ids_and_times(export(restored)) == without_ids_and_times(first)


def test_a_generated_summary_wins_over_the_compression_summary() -> None:
    session = RICH.model_copy(deep=True)
    mine = {"created_at": "2026-01-02T03:04:05Z", "text": "- Oslo: 4°C", "focus": "weather", "metrics": {}}
    session.analysis = {"summary": mine}
    data = export(session)
    assert data["session"]["summary"] == mine
    assert import_archive(data).analysis == {"summary": mine}


def test_an_abstractcore_archive_imports_with_a_derived_context() -> None:
    data = abstractcore()
    session = settle_profile(import_archive(data), ["secretary", "server_admin"], "secretary")
    assert session.profile_id == "secretary"  # AbstractCore archives have no profile
    assert [m.role for m in session.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    # The context is what the model saw, without the archive's system prompt: Navi composes its
    # own, with the archive's as the session's layer of it.
    assert session.context == session.messages[1:]
    assert session.system_prompt == "You are a helpful gardening assistant."
    assert session.context_token_count > 0
    call, result = session.messages[2].tool_calls[0], session.messages[3]
    assert (call.id, call.name, call.arguments) == ("tc_01K8Z3W6Q5", "get_weather", {"city": "Lyon"})
    assert result.tool_call_id == call.id and result.name == "get_weather"
    assert result.metadata["status"] == "ok" and result.metadata["duration_ms"] == 120
    # Times without a zone are UTC; messages without an id get one.
    assert session.created_at.isoformat() == "2025-10-13T14:52:46.120931+00:00"
    assert session.messages[6].created_at.isoformat() == "2025-10-13T14:58:09+00:00"
    assert session.last_active == session.messages[6].created_at
    assert session.messages[5].id and session.messages[5].id != session.messages[6].id
    # Custom metadata is kept, per message and per session.
    alice = session.messages[1]
    assert alice.name == "alice" and alice.metadata.location == "Lyon, France"
    assert alice.metadata["custom"] == {"device": "phone"}
    assert "custom" not in result.metadata and "stderr" not in result.metadata  # `stderr: null`: none
    assert session.custom == {
        "project": {"name": "balcony garden", "tags": ["tomatoes", "basil"], "owner": "alice"}
    }
    assert session.analysis == {name: data["session"][name] for name in ("summary", "assessment", "facts")}


def test_an_abstractcore_archive_goes_out_as_it_came_in() -> None:
    data = abstractcore()
    session = settle_profile(import_archive(data), ["secretary"], "secretary")
    out = export(session)
    jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text())).validate(out)
    meta = out["session"]
    assert meta["project"] == data["session"]["project"]
    for name in ("summary", "assessment", "facts"):
        assert meta[name] == data["session"][name]
    assert meta["profile_id"] == "secretary" and meta["model"] == "gemma4:e2b-it-q8_0"  # Navi's now
    assert out["messages"][1]["metadata"] == {"name": "alice", "location": "Lyon, France", "device": "phone"}
    assert out["messages"][3]["metadata"]["stderr"] is None
    assert out["messages"][3]["metadata"]["call_id"] == "tc_01K8Z3W6Q5"
    assert [c.get("ref") for c in out["context"]] == [m["id"] for m in out["messages"][1:]]
    # And once more through Navi: nothing changes but the ids and times an export makes.
    again = export(import_archive(json.loads(json.dumps(out))))
    assert without_ids_and_times(again) == without_ids_and_times(out)


def test_an_unknown_profile_becomes_the_default_one() -> None:
    data = export(RICH)
    data["session"]["profile_id"] = "researcher"  # a profile of another Navi
    assert (
        settle_profile(import_archive(data), ["secretary", "smart_home"], "smart_home").profile_id
        == "smart_home"
    )
    data["session"]["profile_id"] = "secretary"
    assert (
        settle_profile(import_archive(data), ["secretary", "smart_home"], "smart_home").profile_id
        == "secretary"
    )


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda s: s["assessment"].update(overall_score=7), "session/assessment/overall_score"),
        (lambda s: s["assessment"].pop("judge_summary"), "'judge_summary' is a required property"),
        (lambda s: s["assessment"].update(criteria=[1, 2]), "session/assessment/criteria"),
        (lambda s: s["facts"]["simple_triples"].append(["only", "two"]), "session/facts/simple_triples/3"),
        (lambda s: s["facts"].pop("simple_triples"), "'simple_triples' is a required property"),
        (lambda s: s["summary"].update(focus=3), "session/summary/focus"),
        (lambda s: s.update(created_at="13/10/2025"), "session/created_at"),
    ],
)
def test_bad_analytics_are_refused_clearly(mutate, expected: str) -> None:
    data = abstractcore()
    mutate(data["session"])
    with pytest.raises(ArchiveError) as err:
        import_archive(data)
    assert expected in str(err.value)
