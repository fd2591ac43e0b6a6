"""GET /metrics: this process's metrics in the Prometheus text format, for the owner only.

Each app counts in a registry of its own (`navi.telemetry.metrics`); with `navi serve --workers N`
a scrape reads the worker it reached.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from navi.api.deps import OwnerDep, RuntimeDep
from navi.telemetry import CONTENT_TYPE

router = APIRouter(tags=["metrics"])


@router.get(
    "/metrics",
    response_class=Response,
    dependencies=[OwnerDep],
    summary="Prometheus metrics of this Navi process (owner only)",
    responses={200: {"content": {CONTENT_TYPE: {}}, "description": "The Prometheus text format"}},
)
async def metrics(runtime: RuntimeDep) -> Response:
    return Response(runtime.telemetry.metrics.render(), media_type=CONTENT_TYPE)
