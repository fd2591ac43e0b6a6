"""Model calls measured and traced: the `CallObserver` the composition root gives the backends.

Every call's duration goes to `navi_model_call_duration_seconds{kind=…}`. Its span follows the
OpenTelemetry GenAI semantic conventions: `chat {model}` (a client span, child of the turn's when
the call is part of one) with `gen_ai.operation.name`, `gen_ai.provider.name` (and the older
`gen_ai.system`), `gen_ai.request.*`, `gen_ai.response.*` and `gen_ai.usage.*`; Navi adds
`navi.call.kind`. With the no-op tracer the span is the shared non-recording one and no attribute
is computed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from navi.llm.base import CallOptions
from navi.llm.chunks import Chunk, StreamFinal
from navi.llm.observe import CallObserver, CallWatch
from navi.telemetry.metrics import Metrics


class ModelCalls(CallObserver):
    active = True

    def __init__(
        self, metrics: Metrics, tracer: Tracer, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.metrics = metrics
        self.tracer = tracer
        self.clock = clock

    def start(self, *, backend: str, options: CallOptions) -> CallWatch:
        return _Call(self, backend, options)


class _Call:
    def __init__(self, calls: ModelCalls, backend: str, options: CallOptions) -> None:
        self.calls = calls
        self.kind = options.kind
        self.final: StreamFinal | None = None
        self.span: Span = calls.tracer.start_span(f"chat {options.model}", kind=SpanKind.CLIENT)
        if self.span.is_recording():
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": backend,
                "gen_ai.system": backend,
                "gen_ai.request.model": options.model,
                "navi.call.kind": options.kind,
            }
            if options.temperature is not None:
                attributes["gen_ai.request.temperature"] = options.temperature
            if options.max_tokens is not None:
                attributes["gen_ai.request.max_tokens"] = options.max_tokens
            self.span.set_attributes(attributes)
        self.started = calls.clock()

    def chunk(self, chunk: Chunk) -> None:
        if isinstance(chunk, StreamFinal):
            self.final = chunk

    def end(self, error: BaseException | None) -> None:
        self.calls.metrics.model_call_duration.labels(kind=self.kind).observe(
            max(0.0, self.calls.clock() - self.started)
        )
        span = self.span
        if span.is_recording():
            final = self.final
            if final is not None:
                span.set_attributes(
                    {
                        "gen_ai.usage.input_tokens": final.usage.prompt_tokens,
                        "gen_ai.usage.output_tokens": final.usage.completion_tokens,
                        "gen_ai.response.finish_reasons": [final.finish_reason],
                    }
                )
                if final.model:
                    span.set_attribute("gen_ai.response.model", final.model)
            if isinstance(error, GeneratorExit | asyncio.CancelledError):
                span.set_attribute("navi.call.abandoned", True)  # closed early (a stop, a timeout)
            elif error is not None:
                span.set_attribute("error.type", type(error).__name__)
                span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
        span.end()
