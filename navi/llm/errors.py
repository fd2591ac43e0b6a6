"""Typed model-backend errors whose messages a user can act on.

Backends translate client exceptions into these, so nothing above the `llm` package ever sees an
`httpx`, `ollama`, `openai` or `anthropic` exception or a stack trace.
"""

from __future__ import annotations

from navi import redact


class LLMError(Exception):
    """Base class. `str(err)` is a complete sentence meant for the user.

    `code` is the stable name a client can act on (the `code` of an `error` frame); `kind` is the
    finer cause, for logs and tests.
    """

    kind = "error"
    code = "model_error"

    def __init__(self, message: str, *, backend: str = "", model: str = "") -> None:
        # Messages reach people (error frames, HTTP bodies, logs): whatever a client library put in
        # them, a password inside a configured URL is masked.
        message = redact.text(message)
        super().__init__(message)
        self.message = message
        self.backend = backend
        self.model = model


class BackendUnreachable(LLMError):
    kind = "unreachable"
    code = "model_unreachable"


class ModelNotFound(LLMError):
    kind = "model_not_found"
    code = "model_not_found"


class AuthenticationFailed(LLMError):
    kind = "authentication"
    code = "model_auth"


class BackendHTTPError(LLMError):
    kind = "http_error"

    def __init__(self, message: str, *, status: int, backend: str = "", model: str = "") -> None:
        super().__init__(message, backend=backend, model=model)
        self.status = status


class ContextOverflow(LLMError):
    kind = "context_overflow"
    code = "context_overflow"


class StreamInterrupted(LLMError):
    """The model server sent an error line mid-stream or the connection dropped."""

    kind = "stream_interrupted"
    code = "model_interrupted"


class BackendTimeout(LLMError):
    kind = "timeout"
    code = "timeout"


class UnknownBackend(LLMError):
    kind = "unknown_backend"
    code = "unknown_backend"


_OVERFLOW_HINTS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "exceeds the context",
)


def looks_like_overflow(text: str) -> bool:
    lowered = text.lower()
    return any(hint in lowered for hint in _OVERFLOW_HINTS)
