"""Settings → the app's `Telemetry`: metrics always (a registry of its own), traces exported over
OTLP/HTTP only when OTEL_EXPORTER_OTLP_ENDPOINT is set (else the no-op tracer: nothing recorded)."""

from __future__ import annotations

from navi.config import Settings
from navi.telemetry import Telemetry


def build_telemetry(settings: Settings) -> Telemetry:
    if not settings.otel_exporter_otlp_endpoint:
        return Telemetry()
    from navi.telemetry.tracing import otlp  # the SDK and the exporter only when traces are wanted

    return otlp(settings.otel_exporter_otlp_endpoint)
