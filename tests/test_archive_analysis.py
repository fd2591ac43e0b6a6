"""Archive analytics generated through the model: POST /sessions/{id}/analysis and
`navi sessions export --summary --assessment --facts`, against the fake model server."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from navi.agent.analysis import AnalysisAsk, Unusable, assessment_from, statistics, triples_from
from navi.cli.main import _register, app
from navi.compose import build_runtime
from navi.llm.messages import Message
from navi.llm.text_tools import json_in_reply
from navi.testing.agent_script import AgentScript, kind_of
from navi.testing.ports import free_port as closed_port
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, live_navi, use_script

_register()
runner = CliRunner()
SCHEMA = json.loads((Path(__file__).parents[1] / "navi/sessions/session-archive-v1.schema.json").read_text())
QUESTION = "Is the NAS full? Check /dev/sda1."
ANSWER = "The NAS disk /dev/sda1 is 91% full; 40 GB are left."
EVERYTHING = {
    "summary": True,
    "focus": "disk usage",
    "assessment": True,
    "criteria": ["accuracy", "brevity"],
    "facts": True,
}


def script_analysis(script: AgentScript) -> None:
    """Answers as small models give them: fenced JSON after a sentence, a score as "4/5", one
    piece of feedback as a text instead of a list, a fact as an object, a fact not in the chat."""
    script.archive_summary("- Disk check: sda1 at 91%, 40 GB free.")
    script.assess(
        "Here is my judgement:\n```json\n"
        '{"overall_score": "4/5", "judge_summary": "Accurate and short.", "strengths": ["exact numbers"], '
        '"actionable_feedback": "suggest what to delete", "reasoning": "It answered with the figures.",}\n```'
    )
    script.facts(
        '{"facts": [["/dev/sda1", "is", "91% full"], '
        '{"subject": "the NAS", "predicate": "has free", "object": "40 GB"}, ["Mars", "is", "red"]]}'
    )


def chat(navi: LiveNavi, script: AgentScript, profile: str = "server_admin") -> str:
    script.turn(ANSWER)
    sid = navi.new_session(profile)
    with navi.client() as http:
        assert http.post(f"/sessions/{sid}/messages", json={"content": QUESTION}).status_code == 200
    return sid


def without_ids_and_times(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc.pop("exported_at")
    doc["session"].pop("id")
    return doc


# --- reading answers ----------------------------------------------------------------------------
def test_json_is_found_in_what_small_models_write() -> None:
    assert json_in_reply('Sure!\n```json\n{"a": [1, 2,],}\n```\nHope this helps.') == {"a": [1, 2]}
    assert json_in_reply("<think>the user wants {</think> {'a': True}") == {"a": True}
    assert json_in_reply('The facts: [["x", "y", "z"]] — that is all.') == [["x", "y", "z"]]
    with pytest.raises(ValueError):
        json_in_reply("I cannot answer in JSON, sorry.")


def test_assessments_are_checked() -> None:
    good = {"overall_score": 4.5, "judge_summary": "Fine.", "strengths": "kind", "actionable_feedback": []}
    part = assessment_from(good, ["clarity"], "instructions")
    assert (part["overall_score"], part["strengths"], part["criteria"]) == (4.5, ["kind"], ["clarity"])
    for bad, reason in [
        ({**good, "overall_score": 0}, "from 1 to 5"),
        ({**good, "overall_score": "great"}, "from 1 to 5"),
        ({**good, "overall_score": True}, "from 1 to 5"),
        ({**good, "judge_summary": " "}, "judge_summary"),
        ({**good, "strengths": 3}, '"strengths" was missing'),
        ({k: v for k, v in good.items() if k != "actionable_feedback"}, "actionable_feedback"),
        (
            {**good, "judge_summary": "one or two sentences on how well the assistant did"},
            "repeated the instructions",
        ),
        ([good], "not one JSON object"),
    ]:
        with pytest.raises(Unusable, match=reason):
            assessment_from(
                bad, ["clarity"], "- judge_summary: one or two sentences on how well the assistant did"
            )


def test_facts_are_checked_against_the_conversation() -> None:
    said = "User: my cat Miso is 3 years old"
    example = 'such as ["Marie Curie", "was born in", "Warsaw"]'
    assert triples_from({"facts": [["Miso", "is", 3]]}, said, example) == [["Miso", "is", "3"]]
    assert triples_from({"facts": []}, said, example) == []
    assert triples_from([["my cat", "is called", "Miso"], ["Paris", "is in", "France"]], said, example) == [
        ["my cat", "is called", "Miso"]
    ]
    for bad, reason in [
        ({"facts": [["Miso", "is"]]}, "three texts"),
        ({"facts": [["Miso", "", "3"]]}, "three texts"),
        ({"facts": "Miso is 3"}, "not a list"),
        ({"triplets": []}, 'no "facts" list'),
        ({"facts": [["Marie Curie", "was born in", "Warsaw"]]}, "copied the example"),
        ({"facts": [["Paris", "is in", "France"]]}, "none of its facts"),
    ]:
        with pytest.raises(Unusable, match=reason):
            triples_from(bad, said, example)


def test_statistics_are_counted_by_navi() -> None:
    triples = [["Miso", "is", "a cat"], ["miso", "is", "3"], ["Alice", "owns", "Miso"]]
    assert statistics(triples) == {
        "entities_count": 4,  # miso, a cat, 3, alice
        "relationships_count": 3,
        "predicates_count": 2,
        "by_predicate": {"is": 2, "owns": 1},
        "by_subject": {"Miso": 1, "miso": 1, "Alice": 1},
    }


# --- REST ---------------------------------------------------------------------------------------
def test_analysis_round_trip_into_a_fresh_navi(tmp_path: Path, fake_server) -> None:
    script = use_script(fake_server)
    with live_navi(tmp_path / "first", fake_server) as navi, navi.client() as http:
        sid = chat(navi, script)
        script_analysis(script)
        resp = http.post(f"/sessions/{sid}/analysis", json=EVERYTHING)
        assert resp.status_code == 200, resp.text
        parts = resp.json()
        summary, assessment, facts = parts["summary"], parts["assessment"], parts["facts"]
        assert summary["text"] == "- Disk check: sda1 at 91%, 40 GB free."
        assert summary["focus"] == "disk usage" and summary["preserve_recent"] == 0
        assert summary["metrics"]["calls"] == 1 and summary["metrics"]["tokens_before"] > 0
        assert assessment["overall_score"] == 4 and assessment["criteria"] == ["accuracy", "brevity"]
        assert assessment["judge_summary"] == "Accurate and short."
        assert assessment["actionable_feedback"] == ["suggest what to delete"]
        assert facts["simple_triples"] == [["/dev/sda1", "is", "91% full"], ["the NAS", "has free", "40 GB"]]
        assert facts["statistics"]["relationships_count"] == 2 and facts["statistics"]["entities_count"] == 4
        # What the model was asked: the session's own model, the focus, the criteria, the chat.
        asked = {kind: script.of_kind(kind) for kind in ("archive_summary", "assessment", "facts")}
        assert all(len(requests) == 1 for requests in asked.values())
        assert all(r[0].model == navi.settings.ollama_default_model for r in asked.values())
        assert asked["archive_summary"][0].system_text.endswith("Give most room to: disk usage")
        assessing = asked["assessment"][0].last_user_text
        assert assessing.startswith(
            f"Conversation:\n\nUser: {QUESTION}\nAssistant: {ANSWER}\n\nCriteria: accuracy, brevity\n"
        )
        assert assessing.endswith('"actionable_feedback" and "reasoning":')  # the task again, last
        caps = {kind: r[0].options["num_predict"] for kind, r in asked.items()}
        assert caps["assessment"] == caps["facts"] == 768  # LLM_MAX_TOKENS_ANALYSIS
        # A summary may write at most half of what it summarises (at least 128), never above the cap.
        summarised = asked["archive_summary"][0].last_user_text
        assert 128 <= caps["archive_summary"] <= min(768, max(128, len(summarised) // 4 // 2 + 8)), caps
        assert http.get(f"/sessions/{sid}/analysis").json() == parts
        exported = http.get(f"/sessions/{sid}/export").json()
    jsonschema.Draft202012Validator(SCHEMA).validate(exported)
    for name in ("summary", "assessment", "facts"):
        assert exported["session"][name] == parts[name]

    with live_navi(tmp_path / "fresh", fake_server) as fresh, fresh.client() as http:
        created = http.post("/sessions/import", json=exported)
        assert created.status_code == 201, created.text
        new_id = created.json()["session_id"]
        assert http.get(f"/sessions/{new_id}/analysis").json() == {**parts, "session_id": new_id}
        again = http.get(f"/sessions/{new_id}/export").json()
    assert without_ids_and_times(again) == without_ids_and_times(exported)


def test_a_malformed_reply_is_asked_again_then_refused_clearly(tmp_path: Path, fake_server) -> None:
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        sid = chat(navi, script)
        # Asked again with the reason, the model gets it right: stored.
        script.facts('{"facts": [["/dev/sda1", "is"]]}', '{"facts": [["/dev/sda1", "is", "91% full"]]}')
        resp = http.post(f"/sessions/{sid}/analysis", json={"facts": True})
        assert resp.status_code == 200, resp.text
        retry = script.of_kind("facts")[1].last_user_text
        assert retry.endswith(
            'Your last answer could not be used: each fact must be a list of three texts: ["subject", '
            '"predicate", "object"]. Answer again with only the JSON object.'
        )
        # Wrong twice: a clear 502, and nothing of the request is stored — not even the summary
        # that worked.
        script.assess("What a lovely chat! 5 stars.", '{"overall_score": 9, "judge_summary": "Great."}')
        resp = http.post(f"/sessions/{sid}/analysis", json={"summary": True, "assessment": True})
        assert resp.status_code == 502
        body = resp.json()
        assert body["code"] == "analysis_failed"
        assert body["detail"] == (
            "the model's assessment could not be used, twice in a row: "
            "\"overall_score\" must be a number from 1 to 5, not '9'"
        )
        asked = script.of_kind("assessment")
        assert (
            len(asked) == 2
            and "Your last answer could not be used: it was not JSON." in asked[1].last_user_text
        )
        stored = http.get(f"/sessions/{sid}/analysis").json()
        assert stored["summary"] is None and stored["assessment"] is None
        assert stored["facts"]["simple_triples"] == [["/dev/sda1", "is", "91% full"]]
        # What small models do instead of JSON is named, for the model and for the person.
        loop = "The user asked about the disk.\n" * 6
        echo = "You extract facts from a conversation between a person and their assistant."
        script.facts(Reply(text=echo), Reply(text=loop, finish_reason="length"))
        resp = http.post(f"/sessions/{sid}/analysis", json={"facts": True})
        assert resp.status_code == 502 and resp.json()["detail"].endswith(
            "it repeated the same line over and over"
        )
        echoed = script.of_kind("facts")[-1].last_user_text
        assert "could not be used: it repeated the instructions instead of following them." in echoed
        assert http.get(f"/sessions/{sid}/analysis").json()["facts"] == stored["facts"]  # the old ones stay


def test_bad_analysis_requests_are_refused(tmp_path: Path, fake_server) -> None:
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        sid = chat(navi, script)
        empty = navi.new_session()
        for body, code, words in [
            ({}, "bad_request", "at least one of"),
            ({"fact": True}, "bad_request", "fact"),
            ({"focus": "disks"}, "bad_request", "`focus` steers the summary"),
            ({"facts": True, "criteria": ["x"]}, "bad_request", "`criteria` steer the assessment"),
            ({"assessment": True, "criteria": [f"c{i}" for i in range(13)]}, "bad_request", "criteria"),
            ({"assessment": True, "criteria": [" "]}, "bad_request", "criteria"),
            ({"summary": True, "focus": "x" * 501}, "bad_request", "focus"),
        ]:
            resp = http.post(f"/sessions/{sid}/analysis", json=body)
            assert (resp.status_code, resp.json()["code"]) == (422, code), body
            assert words in resp.json()["detail"], body
        nothing = http.post(f"/sessions/{empty}/analysis", json={"facts": True})
        assert (nothing.status_code, nothing.json()["code"]) == (422, "nothing_to_analyse")
        missing = http.post("/sessions/00000000-0000-4000-8000-000000000000/analysis", json={"facts": True})
        assert (missing.status_code, missing.json()["code"]) == (404, "session_not_found")
        assert http.get("/sessions/00000000-0000-4000-8000-000000000000/analysis").status_code == 404
        with navi.client(anonymous=True) as stranger:
            assert stranger.post(f"/sessions/{sid}/analysis", json={"facts": True}).status_code == 401
            assert stranger.get(f"/sessions/{sid}/analysis").status_code == 401
    assert script.of_kind("facts") == [] and script.of_kind("assessment") == []  # no call was made


def test_an_unreachable_model_is_a_502_with_its_code(tmp_path: Path, fake_server) -> None:
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        sid = chat(navi, script)
    gone = f"http://127.0.0.1:{closed_port()}"
    with live_navi(tmp_path, fake_server, ollama_host=gone) as navi, navi.client() as http:
        resp = http.post(f"/sessions/{sid}/analysis", json={"facts": True})
        assert resp.status_code == 502
        assert resp.json()["code"] == "model_unreachable" and gone in resp.json()["detail"]
        assert http.get(f"/sessions/{sid}/analysis").json()["facts"] is None


# --- the command line ---------------------------------------------------------------------------
async def seed(settings: Any) -> str:
    rt = await build_runtime(settings)
    try:
        s = await rt.sessions.create("server_admin", name="Disk check")
        msgs = [Message.user(QUESTION), Message.assistant(ANSWER)]
        await rt.sessions.append(s.id, display=msgs, context=msgs, context_token_count=40)
        return s.id
    finally:
        await rt.aclose()


def test_cli_export_generates_the_analysis_first(
    make_settings, tmp_path: Path, monkeypatch, fake_server
) -> None:
    settings = make_settings(ollama_host=fake_server.url)
    monkeypatch.setenv("DB_PATH", settings.db_path)
    monkeypatch.setenv("OLLAMA_HOST", fake_server.url)
    sid = asyncio.run(seed(settings))
    script = use_script(fake_server)
    script_analysis(script)
    out = tmp_path / "nas.json"
    args = ["sessions", "export", sid, "-o", str(out), "--summary", "--focus", "disk usage", "--assessment"]
    result = runner.invoke(app, [*args, "--criteria", "accuracy, brevity", "--facts"])
    assert result.exit_code == 0, result.output
    meta = json.loads(out.read_text())["session"]
    assert meta["summary"]["focus"] == "disk usage" and meta["assessment"]["criteria"] == [
        "accuracy",
        "brevity",
    ]
    assert meta["facts"]["simple_triples"][0] == ["/dev/sda1", "is", "91% full"]
    # Kept with the session: a plain export has them, without asking the model again.
    again = runner.invoke(app, ["sessions", "export", sid])
    assert again.exit_code == 0 and json.loads(again.stdout)["session"]["facts"] == meta["facts"]
    assert len(script.of_kind("facts")) == 1

    refused = runner.invoke(app, ["sessions", "export", sid, "--focus", "disks"])
    assert refused.exit_code == 1 and "--focus steers the summary: add --summary" in refused.output
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    unreachable = runner.invoke(app, ["sessions", "export", sid, "--facts"])
    assert unreachable.exit_code == 1
    last = unreachable.output.strip().splitlines()[-1]
    assert last.startswith("navi: no facts written: cannot reach Ollama at http://127.0.0.1:")


async def test_a_long_conversation_is_read_in_chunks(make_settings, fake_server) -> None:
    """Nothing is cut: facts are gathered chunk by chunk and merged, the summary is folded over
    chunks, and the assessment reads a summary of the start and the newest lines as they are."""
    settings = make_settings(ollama_host=fake_server.url, context_summary_max_input_tokens=256)
    script = use_script(fake_server)
    respond = script.responder

    def facts_of_each_chunk(request: Any) -> Any:
        if kind_of(request) != "facts":
            return respond(request)
        hosts = re.findall(r"Host (nas\d+) has IP ([\d.]+)", request.last_user_text)
        triples = [[host, "has IP", ip] for host, ip in hosts] + [["User", "talks about", "Host"]]
        return json.dumps({"facts": triples})

    script.responder = facts_of_each_chunk
    rt = await build_runtime(settings)
    try:
        session = await rt.sessions.create("secretary")
        msgs: list[Message] = []
        for i in range(8):
            msgs += [
                Message.user(f"Host nas{i} has IP 192.168.1.{10 + i} and runs backup job number {i}."),
                Message.assistant(f"Noted: nas{i} is at 192.168.1.{10 + i}."),
            ]
        await rt.sessions.append(session.id, display=msgs, context=msgs)
        loaded = await rt.sessions.get(session.id)
        assert loaded is not None
        parts = await rt.analyse(loaded, AnalysisAsk(summary=True, assessment=True, facts=True))
    finally:
        await rt.aclose()
    asked = script.of_kind("facts")
    assert len(asked) > 1  # more than one chunk
    triples = parts["facts"]["simple_triples"]
    assert [t for t in triples if t[1] == "has IP"] == [
        [f"nas{i}", "has IP", f"192.168.1.{10 + i}"] for i in range(8)
    ]
    assert triples.count(["User", "talks about", "Host"]) == 1  # the same fact in every chunk, kept once
    assert parts["facts"]["statistics"]["relationships_count"] == 9
    assert parts["summary"]["metrics"]["calls"] > 1
    judged = script.of_kind("assessment")[0].last_user_text
    assert "Summary of the earlier conversation:" in judged and "Noted: nas7 is at 192.168.1.17." in judged
    assert "nas0 has IP" not in judged  # the start is summarised, not sent again
    assert script.of_kind("summary")  # … by the compression summariser
