"""A session's archive analytics (`POST/GET /sessions/{id}/analysis`): a summary, an assessment and
facts generated through the session's model and kept with it, shaped as in session-archive/v1."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from navi.agent.analysis import AnalysisAsk
from navi.api.deps import RuntimeDep, SessionDep
from navi.api.errors import BadRequest
from navi.api.routing import api_router

router = api_router(prefix="/sessions", tags=["sessions"])


Criterion = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class AnalysisRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")  # {"fact": true} is a mistake to report, not to ignore

    summary: bool = Field(False, description="Summarise the whole conversation")
    focus: str | None = Field(None, max_length=500, description="What the summary should give most room to")
    assessment: bool = Field(False, description="Judge the conversation's quality")
    criteria: list[Criterion] | None = Field(
        None, max_length=12, description="What the assessment judges (default: clarity, coherence, …)"
    )
    facts: bool = Field(False, description="Extract facts as subject–predicate–object triples")


class Analysis(BaseModel):
    """A session's archive analytics, shaped as in session-archive/v1; null: not generated (yet)."""

    session_id: str
    summary: dict[str, Any] | None = None
    assessment: dict[str, Any] | None = None
    facts: dict[str, Any] | None = None


@router.post(
    "/{session_id}/analysis",
    response_model=Analysis,
    summary="Generate archive analytics through the session's model, and keep them",
)
async def analyse_session(body: AnalysisRequest, session: SessionDep, runtime: RuntimeDep) -> Analysis:
    """Waits for the model (each call bounded by LLM_MAX_TOKENS_ANALYSIS and the call timeouts).
    A failure stores nothing: 502 with the model's error code, or `analysis_failed` when its answer
    could not be used twice in a row."""
    focus = " ".join((body.focus or "").split()) or None
    if focus and not body.summary:
        raise BadRequest("`focus` steers the summary: ask for `summary` too")
    if body.criteria and not body.assessment:
        raise BadRequest("`criteria` steer the assessment: ask for `assessment` too")
    if not (body.summary or body.assessment or body.facts):
        raise BadRequest("ask for at least one of `summary`, `assessment`, `facts`")
    ask = AnalysisAsk(
        summary=body.summary,
        focus=focus,
        assessment=body.assessment,
        criteria=tuple(dict.fromkeys(body.criteria or ())),
        facts=body.facts,
    )
    return Analysis(session_id=session.id, **await runtime.analyse(session, ask))


@router.get("/{session_id}/analysis", response_model=Analysis, summary="A session's archive analytics")
async def get_analysis(session: SessionDep) -> Analysis:
    return Analysis(session_id=session.id, **session.analysis)
