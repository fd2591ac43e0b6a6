"""A `Telemetry` whose spans are exported: the SDK's tracer provider, the app's own (never set as
OpenTelemetry's global provider), around one exporter. Imported only when traces are wanted."""

from __future__ import annotations

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from navi import __version__
from navi.telemetry import Telemetry


def exporting(exporter: SpanExporter, *, batch: bool = True) -> Telemetry:
    """Telemetry whose spans go to `exporter`: in batches, from a thread of the SDK (`batch`), or
    each as it ends (tests)."""
    provider = TracerProvider(resource=Resource({"service.name": "navi", "service.version": __version__}))
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    return Telemetry(provider.get_tracer("navi", __version__), shutdown=provider.shutdown)


def otlp(endpoint: str) -> Telemetry:
    """Spans posted over OTLP/HTTP to the collector at `endpoint` (its base URL)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return exporting(OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces"))
