"""How Navi is observed from outside: Prometheus metrics and OpenTelemetry traces.

`Telemetry` is built once per app by the composition root (`navi.compose.telemetry`):
its own metrics registry (`metrics.py`), and a tracer — the SDK's, exporting over OTLP, when
`OTEL_EXPORTER_OTLP_ENDPOINT` is set, else OpenTelemetry's no-op tracer, which records nothing.
The tracer provider is the app's, never set as OpenTelemetry's global one. The run manager times
turns and counts frames through it (`turn`, `frames`); the backend registry's observer
(`calls.py`) measures and traces every model call.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from opentelemetry.trace import NoOpTracer, Span, SpanKind, Status, StatusCode, Tracer

from navi.protocol import ErrorEvent, StreamEnd
from navi.telemetry.calls import ModelCalls
from navi.telemetry.metrics import CONTENT_TYPE, Metrics

__all__ = ["CONTENT_TYPE", "Metrics", "ModelCalls", "Telemetry"]

FIRST_TOKEN_FRAMES = frozenset({"stream_delta", "thinking_delta"})


class Telemetry:
    """`tracer`: where spans go (the no-op tracer: nowhere). `shutdown`: flushes and closes the
    exporter, if any (blocking: called from a thread)."""

    def __init__(
        self,
        tracer: Tracer | None = None,
        *,
        shutdown: Callable[[], Any] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.metrics = Metrics()
        self.tracer: Tracer = tracer or NoOpTracer()
        self.clock = clock
        self.calls = ModelCalls(self.metrics, self.tracer, clock)
        self._shutdown = shutdown
        self._frame_counters: dict[str, Any] = {}

    @property
    def tracing(self) -> bool:
        return not isinstance(self.tracer, NoOpTracer)

    @contextlib.contextmanager
    def turn(self, session_id: str, run_id: str) -> Iterator[Span]:
        """Around one turn, in the task that runs it: counted as running, and its span current
        (model calls made in it become its children)."""
        self.metrics.runs_active.inc()
        try:
            with self.tracer.start_as_current_span(
                "invoke_agent navi",
                kind=SpanKind.INTERNAL,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "navi",
                    "gen_ai.conversation.id": session_id,
                    "navi.session.id": session_id,
                    "navi.run.id": run_id,
                },
                record_exception=False,
            ) as span:
                yield span
        finally:
            self.metrics.runs_active.dec()

    @staticmethod
    def turn_ended(span: Span, result: StreamEnd | ErrorEvent | None) -> None:
        """The turn's outcome on its span: its `stream_end`, or the error it ended with."""
        if span.is_recording() and isinstance(result, ErrorEvent):
            span.set_attribute("error.type", str(result.code or "error"))
            span.set_status(Status(StatusCode.ERROR, result.message[:500]))

    def frames(self) -> Callable[[dict[str, Any]], None]:
        """What a run calls with each frame it sends: counted by type, and the time to the first
        token (its first `stream_delta` or `thinking_delta`) measured from now."""
        started = self.clock()
        seen = False
        sent = self.metrics.frames_sent
        counters = self._frame_counters
        first = self.metrics.time_to_first_token

        def frame(data: dict[str, Any]) -> None:
            nonlocal seen
            kind = str(data.get("type", ""))
            counter = counters.get(kind)
            if counter is None:  # `labels()` takes a lock and builds a key: once per type, not per frame
                counter = counters[kind] = sent.labels(type=kind)
            counter.inc()
            if not seen and kind in FIRST_TOKEN_FRAMES:
                seen = True
                first.observe(max(0.0, self.clock() - started))

        return frame

    def shutdown(self) -> None:
        if self._shutdown is not None:
            self._shutdown()
            self._shutdown = None
