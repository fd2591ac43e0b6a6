"""Metrics (GET /metrics, navi/telemetry) and traces of turns and model calls.

A turn through the scripted model moves the numbers: runs, frames by type, the time to the first
token, model calls by kind (planning, answer, naming); the spans it leaves follow the GenAI
semantic conventions, the model calls' children of the turn's. Each app counts in its own registry.
"""

from __future__ import annotations

import asyncio
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client.parser import text_string_to_metric_families

from navi.api.app import create_app
from navi.compose.services import build_services
from navi.compose.telemetry import build_telemetry
from navi.config import SettingsError, load_settings
from navi.llm.errors import BackendUnreachable
from navi.llm.messages import Message
from navi.runs import AgentRun, RunManager
from navi.runs.leases import SqlLeases
from navi.runs.pg import PgBus
from navi.telemetry import Telemetry
from navi.telemetry.tracing import exporting
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply
from tests.agent_helpers import MODEL, scripted_runtime
from tests.server_helpers import app_client


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a /metrics page: (name, sorted labels) → value."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(telemetry: Telemetry, name: str, **labels: str) -> float:
    found = telemetry.metrics.registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


async def ended(run: AgentRun) -> None:
    """Until the run's task is over: its frames, its lease and its span (`finished` comes sooner)."""
    assert run.task is not None
    await asyncio.wait_for(run.task, 10)


def test_metrics_are_for_the_owner_only(tmp_path: Path) -> None:
    async def prepare() -> tuple[Any, str]:
        rt, _, _ = await scripted_runtime(tmp_path)
        _, token = await rt.users.add("alice")
        return rt, token

    rt, user_token = asyncio.run(prepare())
    with app_client(create_app(runtime=rt)) as client:
        page = client.get("/metrics")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
        found = samples(page.text)
        assert found[("navi_runs_active", ())] == 0
        assert found[("navi_model_call_duration_seconds_count", (("kind", "answer"),))] == 0
        anonymous = httpx.Headers({"Authorization": ""})
        assert client.get("/metrics", headers=anonymous).status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer not-a-token"}).status_code == 401
        as_user = client.get("/metrics", headers={"Authorization": f"Bearer {user_token}"})
        assert as_user.status_code == 403 and as_user.json()["code"] == "owner_only"
        assert "navi_" not in as_user.text
    asyncio.run(rt.aclose())


def test_a_turn_moves_the_numbers(tmp_path: Path) -> None:
    async def prepare() -> tuple[Any, Any]:
        rt, backend, script = await scripted_runtime(tmp_path)
        script.turn(Reply(text="Hello there, friend.", first_delay=0.05, chunk_chars=5))
        return rt, backend

    rt, backend = asyncio.run(prepare())
    with app_client(create_app(runtime=rt)) as client:
        sid = client.post("/sessions", json={"profile_id": "secretary"}).json()["session_id"]
        answer = client.post(f"/sessions/{sid}/messages", json={"content": "hi"})
        assert answer.status_code == 200 and answer.json()["content"] == "Hello there, friend."
        for _ in range(200):  # naming is post-turn work: the run ends after it
            found = samples(client.get("/metrics").text)
            if found[("navi_model_call_duration_seconds_count", (("kind", "naming"),))] == 1:
                break
            time.sleep(0.02)
        for _ in range(200):
            found = samples(client.get("/metrics").text)
            if found[("navi_runs_active", ())] == 0:
                break
            time.sleep(0.02)
    asyncio.run(rt.aclose())
    # A turn sent over REST is not planned (the traced turn below is).
    assert [o.kind for o in backend.options] == ["answer", "naming"]
    assert found[("navi_runs_active", ())] == 0
    for kind in ("answer", "naming"):
        assert found[("navi_model_call_duration_seconds_count", (("kind", kind),))] == 1, kind
        assert found[("navi_model_call_duration_seconds_sum", (("kind", kind),))] > 0, kind
    assert found[("navi_model_call_duration_seconds_sum", (("kind", "answer"),))] >= 0.05
    for kind in ("planning", "summary", "extraction", "analysis"):
        assert found[("navi_model_call_duration_seconds_count", (("kind", kind),))] == 0, kind
    assert found[("navi_frames_sent_total", (("type", "stream_start"),))] == 1
    assert found[("navi_frames_sent_total", (("type", "stream_end"),))] == 1
    assert found[("navi_frames_sent_total", (("type", "stream_delta"),))] == 4  # 20 characters, 5 a piece
    assert found[("navi_time_to_first_token_seconds_count", ())] == 1
    assert found[("navi_time_to_first_token_seconds_sum", ())] >= 0.05  # the model's first delay


async def test_a_run_counts_as_active_while_it_runs(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    services = build_services(rt, schedules=False, background=False)
    await services.start()
    telemetry = rt.telemetry
    try:
        release = asyncio.Event()
        script.turn(Reply(text="Slowly, then at once.", wait_for=release, wait_after=1))
        session = await rt.sessions.create("secretary")
        run = await services.runs.start(session.id, "take your time")
        for _ in range(200):
            if any(f["type"] == "stream_delta" for f in run.frames):
                break
            await asyncio.sleep(0.01)
        assert value(telemetry, "navi_runs_active") == 1
        assert value(telemetry, "navi_time_to_first_token_seconds_count") == 1
        assert value(telemetry, "navi_model_call_duration_seconds_count", kind="answer") == 0  # not over
        release.set()
        await ended(run)
        assert value(telemetry, "navi_runs_active") == 0
        assert value(telemetry, "navi_model_call_duration_seconds_count", kind="answer") == 1
        assert value(telemetry, "navi_time_to_first_token_seconds_count") == 1  # once per turn
    finally:
        await services.stop()
        await rt.aclose()


async def test_two_apps_in_one_process_count_apart(tmp_path: Path) -> None:
    a, _, script_a = await scripted_runtime(tmp_path / "a", planning_enabled=False)
    b, _, _ = await scripted_runtime(tmp_path / "b", planning_enabled=False)
    try:
        services = build_services(a, schedules=False, background=False)
        await services.start()
        script_a.turn("Only here.")
        session = await a.sessions.create("secretary")
        run = await services.runs.start(session.id, "hi")
        await ended(run)
        await services.stop()
        assert value(a.telemetry, "navi_frames_sent_total", type="stream_end") == 1
        assert value(b.telemetry, "navi_frames_sent_total", type="stream_end") == 0
        assert a.telemetry.metrics.registry is not b.telemetry.metrics.registry
    finally:
        await a.aclose()
        await b.aclose()


def test_no_endpoint_no_traces(make_settings) -> None:
    assert not build_telemetry(make_settings()).tracing
    traced = build_telemetry(make_settings(otel_exporter_otlp_endpoint="http://127.0.0.1:4318/"))
    try:
        assert traced.tracing
    finally:
        traced.shutdown()


def test_a_bad_endpoint_is_refused() -> None:
    with pytest.raises(SettingsError, match="OTEL_EXPORTER_OTLP_ENDPOINT: must start with http"):
        load_settings(otel_exporter_otlp_endpoint="collector:4318")


async def test_a_turn_is_traced_with_its_model_calls(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    rt, _, script = await scripted_runtime(tmp_path, telemetry=exporting(exporter, batch=False))
    services = build_services(rt, schedules=False, background=False)
    await services.start()
    try:
        script.turn("Traced answer.")
        session = await rt.sessions.create("secretary")
        run = await services.runs.start(session.id, "trace me")
        await ended(run)
    finally:
        await services.stop()
        await rt.aclose()
    spans = exporter.get_finished_spans()
    turns = [s for s in spans if s.name == "invoke_agent navi"]
    assert len(turns) == 1
    turn = turns[0]
    assert turn.attributes is not None and turn.context is not None
    assert turn.attributes["gen_ai.conversation.id"] == session.id
    assert turn.attributes["navi.session.id"] == session.id
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.parent is None and turn.status.status_code != StatusCode.ERROR
    calls = [s for s in spans if s.name == f"chat {MODEL}"]
    assert [c.attributes["navi.call.kind"] for c in calls if c.attributes] == ["planning", "answer", "naming"]
    for call in calls:
        assert call.parent is not None and call.parent.span_id == turn.context.span_id
        assert call.context is not None and call.context.trace_id == turn.context.trace_id
        assert call.kind == SpanKind.CLIENT
    answer = calls[1].attributes
    assert answer is not None
    assert answer["gen_ai.operation.name"] == "chat"
    assert answer["gen_ai.request.model"] == MODEL
    assert answer["gen_ai.provider.name"] == answer["gen_ai.system"] == "scripted"
    assert answer["gen_ai.usage.input_tokens"] > 0
    assert answer["gen_ai.usage.output_tokens"] > 0
    assert tuple(answer["gen_ai.response.finish_reasons"]) == ("stop",)


async def test_a_failed_call_is_an_error_span(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    rt, _, script = await scripted_runtime(
        tmp_path, telemetry=exporting(exporter, batch=False), planning_enabled=False
    )
    services = build_services(rt, schedules=False, background=False)
    await services.start()
    try:
        script.turn(Reply(exception=BackendUnreachable("cannot reach the model")))
        session = await rt.sessions.create("secretary")
        run = await services.runs.start(session.id, "fail please")
        await ended(run)
    finally:
        await services.stop()
        await rt.aclose()
    spans = exporter.get_finished_spans()
    [turn] = [s for s in spans if s.name == "invoke_agent navi"]
    [call] = [s for s in spans if s.attributes and s.attributes.get("navi.call.kind") == "answer"]
    assert call.status.status_code == StatusCode.ERROR
    assert call.attributes is not None and call.attributes["error.type"] == "BackendUnreachable"
    assert turn.status.status_code == StatusCode.ERROR
    assert turn.attributes is not None and turn.attributes["error.type"] == run.result.code  # type: ignore[union-attr]


@pytest.mark.postgres
async def test_the_notify_lag_of_a_followed_run_is_measured(tmp_path: Path, pg_url: str) -> None:
    """A frame announced by A at A's 100.0 and received by B at B's 100.25 arrived 0.25 s late."""
    script = AgentScript()
    lags: list[float] = []
    made: list[tuple[Any, RunManager]] = []
    for clock, lag in ((lambda: 100.0, None), (lambda: 100.25, lags.append)):
        rt, _, _ = await scripted_runtime(
            tmp_path, script, sql=True, database_url=pg_url, planning_enabled=False
        )
        assert rt.db is not None
        leases = SqlLeases(rt.db)
        runs = RunManager(rt.agent, leases, PgBus(rt.db, leases.worker, lag=lag, clock=clock))
        await runs.open()
        made.append((rt, runs))
    (rt_a, a), (_, b) = made
    try:
        release = asyncio.Event()
        script.turn(Reply(text="one two three four", chunk_chars=4, wait_for=release, wait_after=1))
        session = await rt_a.sessions.create("secretary")
        watch = await b.followers.watch(session.id, asyncio.Queue())
        run = await a.start(session.id, "count")
        for _ in range(200):
            if watch.subs:
                break
            await asyncio.sleep(0.02)
        live = next(iter(watch.subs.values()))
        release.set()
        got: list[dict[str, Any]] = []
        async with asyncio.timeout(10):
            while (item := await live.queue.get()) is not live:
                got.append(item)
        await ended(run)
        assert got == run.frames
        assert lags and set(lags) == {0.25}  # every frame announced while B listened
        assert len(lags) <= len(run.frames)
        await b.followers.unwatch(watch)
    finally:
        for rt, runs in made:
            await runs.shutdown()
            await rt.aclose()


async def test_memory_calls_are_counted_by_their_kind(tmp_path: Path) -> None:
    """The extractor calls its model outside any turn: counted all the same, as `extraction` and
    `memory_summary`."""
    rt, backend, script = await scripted_runtime(tmp_path)
    try:
        session = await rt.sessions.create("secretary")
        said = Message.user("My cat is called Miso.")
        await rt.sessions.append(session.id, display=[said], context=[said])
        script.extract("pets: cat = Miso")
        stored = await rt.sessions.get(session.id)
        assert stored is not None
        assert await rt.extractor.extract(stored) == 1
        assert [o.kind for o in backend.options] == ["extraction", "memory_summary"]
        assert value(rt.telemetry, "navi_model_call_duration_seconds_count", kind="extraction") == 1
        assert value(rt.telemetry, "navi_model_call_duration_seconds_count", kind="memory_summary") == 1
    finally:
        await rt.aclose()


async def test_a_stopped_call_is_counted_and_its_span_abandoned(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    rt, _, script = await scripted_runtime(
        tmp_path, telemetry=exporting(exporter, batch=False), planning_enabled=False
    )
    services = build_services(rt, schedules=False, background=False)
    await services.start()
    try:
        never = asyncio.Event()
        script.turn(Reply(text="This answer never ends.", wait_for=never, wait_after=1))
        session = await rt.sessions.create("secretary")
        run = await services.runs.start(session.id, "go on")
        for _ in range(200):
            if any(f["type"] == "stream_delta" for f in run.frames):
                break
            await asyncio.sleep(0.01)
        assert await services.runs.controls.stop(session.id)
        await ended(run)
    finally:
        await services.stop()
        await rt.aclose()
    assert run.frames[-1]["type"] == "stream_stopped"
    assert value(rt.telemetry, "navi_model_call_duration_seconds_count", kind="answer") == 1
    spans = exporter.get_finished_spans()
    [call] = [s for s in spans if s.attributes and s.attributes.get("navi.call.kind") == "answer"]
    assert call.attributes is not None and call.attributes["navi.call.abandoned"] is True
    assert call.status.status_code != StatusCode.ERROR


class Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP collector that keeps what it is sent."""

    received: ClassVar[list[tuple[str, str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


async def test_spans_reach_an_otlp_collector_at_the_endpoint(tmp_path: Path, make_settings) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    Collector.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        telemetry = build_telemetry(make_settings(otel_exporter_otlp_endpoint=endpoint))
        rt, _, script = await scripted_runtime(tmp_path, telemetry=telemetry, planning_enabled=False)
        services = build_services(rt, schedules=False, background=False)
        await services.start()
        script.turn("Exported.")
        session = await rt.sessions.create("secretary")
        run = await services.runs.start(session.id, "export me")
        await ended(run)
        await services.stop()
        await rt.aclose()  # the batch is flushed to the collector
    finally:
        server.shutdown()
        server.server_close()
    assert Collector.received
    names = []
    for path, kind, body in Collector.received:
        assert (path, kind) == ("/v1/traces", "application/x-protobuf")
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            service = {a.key: a.value.string_value for a in resource.resource.attributes}["service.name"]
            assert service == "navi"
            names += [span.name for scope in resource.scope_spans for span in scope.spans]
    assert sorted(names) == sorted(["invoke_agent navi", f"chat {MODEL}", f"chat {MODEL}"])  # answer, naming
