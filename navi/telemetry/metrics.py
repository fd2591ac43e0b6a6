"""Navi's Prometheus metrics, in a registry of their own (never prometheus-client's global one).

Each app (each `navi serve` worker, each test) builds its own `Metrics`, so two in one process
never share or collide; `GET /metrics` renders the one of the app it serves. With
`navi serve --workers N` every worker counts its own: a scrape reaches one of them.
"""

from __future__ import annotations

from typing import get_args

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from navi.llm.base import CallKind

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4

# Seconds, from a fast local model's first token to a CPU model reading a long prompt.
MODEL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)
# Seconds between one worker announcing a frame and another receiving it.
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.runs_active = Gauge("navi_runs_active", "Turns running in this process now.", registry=r)
        self.frames_sent = Counter(
            "navi_frames_sent",
            "Frames the runs of this process sent to the clients following them, by frame type "
            "(each frame once, however many connections receive it).",
            ["type"],
            registry=r,
        )
        self.time_to_first_token = Histogram(
            "navi_time_to_first_token_seconds",
            "From the start of a turn to its first streamed token (answer or thinking).",
            buckets=MODEL_BUCKETS,
            registry=r,
        )
        self.model_call_duration = Histogram(
            "navi_model_call_duration_seconds",
            "How long a model call took, from the request to its last chunk, by what it was for.",
            ["kind"],
            buckets=MODEL_BUCKETS,
            registry=r,
        )
        self.lease_takeovers = Counter(
            "navi_lease_takeovers",
            "Sessions this process took over from a worker that was gone (its lease expired), "
            "by what the lease was held for (turn, store).",
            ["kind"],
            registry=r,
        )
        self.notify_lag = Histogram(
            "navi_notify_lag_seconds",
            "PostgreSQL only: from a frame being published by the worker running the turn to its "
            "NOTIFY reaching this worker, which follows the run.",
            buckets=LAG_BUCKETS,
            registry=r,
        )
        for kind in get_args(CallKind):  # every kind listed from the start, at 0
            self.model_call_duration.labels(kind=kind)

    def render(self) -> bytes:
        """The registry in the Prometheus text format (`CONTENT_TYPE`)."""
        return generate_latest(self.registry)
