"""Domain errors → HTTP, in one place.

Routes raise what went wrong in the domain's own terms (`SessionNotFound`, `UnknownProfile`,
`RunActive`, …); this module decides the status code. Every error body is `{"detail": <a sentence
for people>, "code": <a stable name for programs>}` (`code` is additive to FastAPI's usual body),
except under `/v1/`, the OpenAI-compatible API, where it is OpenAI's error object
`{"error": {"message", "type", "param", "code"}}` with the same code, and invalid bodies are 400.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from navi import redact
from navi.agent.analysis import NothingToAnalyse
from navi.agent.gate import ApprovalNotFound
from navi.api.openai_wire import OpenAIError, error_body, is_openai_path
from navi.api.routing import BodyRefused
from navi.api.uploads import UploadError
from navi.api.websocket import FrameError
from navi.jobs import JobLimit
from navi.jobs.service import JobError
from navi.llm.errors import LLMError
from navi.logging import get_logger
from navi.mcp.elicitation import ElicitationInvalid, ElicitationNotFound
from navi.profiles.registry import UnknownProfile
from navi.protocol import ErrorEvent, StreamEnd
from navi.push import SubscriptionError
from navi.runs import AgentRun, RunActive
from navi.runs.branching import NotBranchable, NothingToContinue
from navi.runs.queue import QueueFull
from navi.runs.queueing import NotQueued
from navi.schedules.when import ScheduleError
from navi.sessions.archive import ArchiveError
from navi.sessions.store import SessionNotFound
from navi.sessions.tree import BranchNotFound

log = get_logger(__name__)


class NotFound(LookupError):
    """Something other than a session that does not exist (a fact, a file)."""


class BadRequest(ValueError):
    """A request that is well-formed JSON but asks for something that makes no sense."""


class BadSkill(ValueError):
    """A skill or a zip of skills that cannot be installed (docs/skills.md)."""


class Conflict(ValueError):
    """A request that clashes with what exists (a collection's name already taken)."""


class Unavailable(RuntimeError):
    """A feature this Navi cannot offer as configured (documents without a database)."""


class OwnerOnly(PermissionError):
    """A route that changes Navi for every user, asked by a user who is not the owner."""


class RunFailed(RuntimeError):
    """A non-streaming turn ended with an error from the model side."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


async def settled_answer(run: AgentRun) -> dict[str, Any]:
    """The answer a non-streaming caller waits for (not the post-turn work after it), as the
    fields REST's answers share: the turn's `stream_end`, or `stopped` with nothing when it was
    stopped; `RunFailed` when it ended with an error."""
    await run.settled.wait()
    match run.result:
        case ErrorEvent(message=message, code=code):
            raise RunFailed(message or "the run failed", code)
        case StreamEnd() as end:
            return {
                "content": end.content,
                "context_tokens": end.context_tokens,
                "max_context_tokens": end.max_context_tokens,
                "finish_reason": end.finish_reason,
            }
        case _:
            return {"content": "", "context_tokens": 0, "max_context_tokens": 0, "stopped": True}


# exception type → (status, code); the first match in order wins
_MAPPING: list[tuple[type[Exception], int, str]] = [
    (SessionNotFound, 404, "session_not_found"),
    (BranchNotFound, 404, "message_not_found"),
    (NotFound, 404, "not_found"),
    (ApprovalNotFound, 404, "approval_not_found"),
    (ElicitationNotFound, 404, "elicitation_not_found"),
    (ElicitationInvalid, 422, "bad_answer"),
    (UnknownProfile, 422, "unknown_profile"),
    (ArchiveError, 422, "bad_archive"),
    (FrameError, 422, "bad_message"),
    (NothingToAnalyse, 422, "nothing_to_analyse"),
    (Conflict, 409, "conflict"),
    (Unavailable, 503, "unavailable"),
    (BadSkill, 422, "bad_skill"),
    (BadRequest, 422, "bad_request"),
    (NotBranchable, 422, "bad_request"),
    (NothingToContinue, 422, "nothing_to_continue"),
    (ScheduleError, 422, "bad_schedule"),
    (SubscriptionError, 422, "bad_subscription"),
    (JobError, 422, "bad_job"),
    (JobLimit, 409, "job_limit"),
    (RunActive, 409, "busy"),
    (NotQueued, 404, "not_queued"),
    (QueueFull, 409, "queue_full"),
    (OwnerOnly, 403, "owner_only"),
]


def _body(request: Request | None, detail: str, code: str, status: int) -> JSONResponse:
    """The one error body; its sentence never carries a credential (see `navi.redact`). Under
    /v1 it is OpenAI's error object, which OpenAI's clients know how to show."""
    detail = redact.text(detail)
    if request is not None and is_openai_path(request.url.path):
        return JSONResponse(error_body(detail, code, status), status_code=status)
    return JSONResponse({"detail": detail, "code": code}, status_code=status)


def error_response(detail: str, code: str, status: int) -> JSONResponse:
    """The one error body, for refusals made before a route runs too (navi/api/limits.py)."""
    return _body(None, detail, code, status)


def install(app: FastAPI) -> None:
    for kind, status, code in _MAPPING:

        async def handle(
            request: Request, exc: Exception, status: int = status, code: str = code
        ) -> JSONResponse:
            return _body(request, str(exc), code, status)

        app.add_exception_handler(kind, handle)

    @app.exception_handler(UploadError)
    async def upload_failed(request: Request, exc: UploadError) -> JSONResponse:
        return _body(request, exc.detail, "upload_rejected", exc.status)

    @app.exception_handler(BodyRefused)
    async def body_refused(request: Request, exc: BodyRefused) -> JSONResponse:
        return _body(request, exc.detail, exc.code, exc.status_code)

    @app.exception_handler(RunFailed)
    async def run_failed(request: Request, exc: RunFailed) -> JSONResponse:
        return _body(request, str(exc), exc.code, 502)

    @app.exception_handler(OpenAIError)
    async def openai_failed(request: Request, exc: OpenAIError) -> JSONResponse:
        body = error_body(str(exc), exc.code, exc.status, exc.param)
        return JSONResponse(body, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(LLMError)
    async def model_failed(request: Request, exc: LLMError) -> JSONResponse:
        """A model call a request made itself (archive analytics) failed: the model side's fault."""
        return _body(request, str(exc), exc.code, 502)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        detail = "; ".join(problems) or "invalid request"
        if is_openai_path(request.url.path):  # OpenAI answers an invalid body with 400
            return _body(request, detail, "invalid_request", 400)
        return _body(request, detail, "bad_request", 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """Unknown paths and methods under /v1/ answer in OpenAI's shape; elsewhere FastAPI's."""
        if not is_openai_path(request.url.path):
            return await http_exception_handler(request, exc)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        body = error_body(str(exc.detail), code, exc.status_code)
        return JSONResponse(body, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("request.failed", path=request.url.path)
        return _body(request, f"internal error: {type(exc).__name__}", "internal", 500)
