"""One translation of model-client exceptions into `LLMError`s, shared by every backend.

A backend says two things: what its client's exception means (a function returning a `Failure`)
and how it words each outcome for its users (`Wording`). The rest is here, once: which error class
each outcome is, that a connection lost mid-stream is an interrupted stream rather than an
unreachable server, that a server's words about the context length are an overflow, and the order
those are judged in (a missing model first, then an overflow, then an error reported mid-stream,
then any other HTTP status).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from navi.llm.errors import (
    AuthenticationFailed,
    BackendHTTPError,
    BackendTimeout,
    BackendUnreachable,
    ContextOverflow,
    LLMError,
    ModelNotFound,
    StreamInterrupted,
    looks_like_overflow,
)

FailureKind = Literal[
    "connection",  # no connection could be made, or it broke (an unreachable server unless streaming)
    "no_answer",  # the request timed out before the server answered
    "stalled",  # the transport timed out while reading the answer
    "dropped",  # the connection broke while reading the answer
    "auth",  # the server refused the credentials
    "status",  # the server answered with an error status
    "stream_error",  # the server reported an error in the middle of a stream
    "stream_failed",  # the stream could not be read (an event the client could not parse)
    "other",
]

OVERFLOW = "the conversation no longer fits {model}'s context: {text}"


@dataclass(frozen=True)
class Failure:
    """What a client's exception means, in terms every backend shares."""

    kind: FailureKind
    text: str = ""  # the server's or the client's own words
    status: int = 0  # "status": the HTTP status
    not_found: bool = False  # "status": the server does not have the model
    mid_stream: bool = False  # "status": reported inside a stream, not as the answer's status


@dataclass(frozen=True)
class Wording:
    """How one backend words each outcome, as `str.format` templates.

    Placeholders: `{where}` (the server's address, a password in it masked), `{model}`,
    `{timeout}` (seconds), `{status}`, `{text}` (the server's or client's words), `{mid}`
    (" mid-stream" while streaming, else "").
    """

    unreachable: str
    no_answer: str
    stalled: str
    dropped: str
    not_found: str
    http: str
    stream_error: str
    failed: str
    connection_lost: str = ""  # a connection error while streaming; "" counts it as unreachable
    auth: str = ""  # "" when the backend has no credentials (`failed` is used)
    stream_failed: str = ""  # "" when its client never fails that way (`stream_error` is used)


@dataclass(frozen=True)
class Translator:
    """One backend's translation: its wording and its reading of its client's exceptions."""

    wording: Wording
    failure_of: Callable[[BaseException, bool], Failure]  # (exception, streaming) → Failure
    backend: str
    where: str
    timeout: float

    def unreachable(self) -> BackendUnreachable:
        return BackendUnreachable(self.wording.unreachable.format(where=self.where), backend=self.backend)

    def translate(self, exc: BaseException, model: str, *, streaming: bool = False) -> LLMError:
        """The `LLMError` for `exc`, raised by the client during a call for `model`."""
        if isinstance(exc, LLMError):
            return exc
        failure = self.failure_of(exc, streaming)
        words = self.wording
        kind = failure.kind

        def said(template: str) -> str:
            return template.format(
                where=self.where,
                model=model,
                timeout=self.timeout,
                status=failure.status,
                text=failure.text,
                mid=" mid-stream" if streaming else "",
            )

        about = {"backend": self.backend, "model": model}
        if kind == "connection":
            if streaming and words.connection_lost:
                return StreamInterrupted(said(words.connection_lost), **about)
            return self.unreachable()
        if kind == "no_answer":
            return BackendTimeout(said(words.no_answer), **about)
        if kind == "stalled":
            return BackendTimeout(said(words.stalled), **about)
        if kind == "dropped":
            return StreamInterrupted(said(words.dropped), **about)
        if kind == "auth" and words.auth:
            return AuthenticationFailed(said(words.auth), **about)
        if kind == "status":
            if failure.not_found:
                return ModelNotFound(said(words.not_found), **about)
            if looks_like_overflow(failure.text):
                return ContextOverflow(said(OVERFLOW), **about)
            if failure.mid_stream:
                return StreamInterrupted(said(words.stream_error), **about)
            return BackendHTTPError(said(words.http), status=failure.status, **about)
        if kind == "stream_error":
            return StreamInterrupted(said(words.stream_error), **about)
        if kind == "stream_failed":
            return StreamInterrupted(said(words.stream_failed or words.stream_error), **about)
        return LLMError(said(words.failed), **about)
