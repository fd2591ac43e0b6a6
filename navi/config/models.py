"""The model list's settings (docs/models.md), a part of `Settings` kept beside it: the file that
names model endpoints and chains, the endpoint side calls go to, and the breaker's cool-down."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ModelSettings(BaseModel):
    # A TOML file of model endpoints and the chains that try them in order (navi/llm/endpoints.py);
    # empty: `.env`'s one model, no fallback.
    models_file: str = ""
    # The endpoint (an id of MODELS_FILE) that naming, planning, summaries and memory extraction
    # try first; empty: the chain's first, as answers.
    side_model: str = ""
    # How long a model endpoint that failed is skipped (doubling with each failure in a row, up to 16×).
    model_cooldown_seconds: float = Field(60.0, ge=0, le=86400)
