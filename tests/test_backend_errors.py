"""Every client exception of every backend, translated: the `LLMError` class, its message, its status.

The three backends share one translation (`navi.llm.failures`); each only says what its client's
exceptions mean and how it words them. These cases pin the words a user sees, exception by
exception, streaming and not.
"""

from __future__ import annotations

import json

import anthropic
import httpx
import httpx2
import ollama
import openai
import pytest

from navi.llm.anthropic_backend import AnthropicBackend
from navi.llm.base import LLMBackend
from navi.llm.errors import (
    AuthenticationFailed,
    BackendHTTPError,
    BackendTimeout,
    BackendUnreachable,
    ContextOverflow,
    LLMError,
    ModelNotFound,
    StreamInterrupted,
)
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.openai_backend import OpenAIBackend

MODEL = "m:1b"
OLLAMA_AT = "http://ollama.local:11434"
SERVER_AT = "http://user:secret@models.local:8080/v1"  # the password never shows
SHOWN_AT = "http://user:***@models.local:8080/v1"
ANTHROPIC_AT = "https://proxy.local"
REQUEST = httpx2.Request("POST", "http://models.local/v1/chat")


def _response(status: int) -> httpx2.Response:
    return httpx2.Response(status, request=REQUEST)


def _openai_status(cls: type[openai.APIStatusError], status: int, body: object) -> openai.APIStatusError:
    return cls("message from the client", response=_response(status), body=body)


def _anthropic_status(
    cls: type[anthropic.APIStatusError], status: int, body: object
) -> anthropic.APIStatusError:
    return cls("message from the client", response=_response(status), body=body)


# (exception, streaming) → (class, message, HTTP status or None)
Case = tuple[BaseException, bool, type[LLMError], str, int | None]

OLLAMA: list[Case] = [
    (
        ollama.ResponseError(f"model '{MODEL}' not found", 404),
        False,
        ModelNotFound,
        f"model '{MODEL}' is not available on Ollama at {OLLAMA_AT} — run `ollama pull {MODEL}`",
        None,
    ),
    (
        ollama.ResponseError("model is not found here", 400),
        False,
        ModelNotFound,
        f"model '{MODEL}' is not available on Ollama at {OLLAMA_AT} — run `ollama pull {MODEL}`",
        None,
    ),
    (
        ollama.ResponseError("the input exceeds the context length", 500),
        False,
        ContextOverflow,
        f"the conversation no longer fits {MODEL}'s context: the input exceeds the context length",
        None,
    ),
    (
        ollama.ResponseError("out of memory"),
        True,
        StreamInterrupted,
        "Ollama reported an error mid-stream: out of memory",
        None,
    ),
    (
        ollama.ResponseError("GPU on fire", 500),
        False,
        BackendHTTPError,
        "Ollama answered HTTP 500: GPU on fire",
        500,
    ),
    (
        httpx.ConnectError("refused"),
        False,
        BackendUnreachable,
        f"cannot reach Ollama at {OLLAMA_AT} — is `ollama serve` running?",
        None,
    ),
    (
        ConnectionError("refused"),
        True,
        BackendUnreachable,
        f"cannot reach Ollama at {OLLAMA_AT} — is `ollama serve` running?",
        None,
    ),
    (
        httpx.ReadTimeout("slow"),
        True,
        BackendTimeout,
        f"Ollama at {OLLAMA_AT} did not answer within 12s",
        None,
    ),
    (
        httpx.RemoteProtocolError("peer closed"),
        True,
        StreamInterrupted,
        "the connection to Ollama dropped mid-stream: peer closed",
        None,
    ),
    (
        httpx.ReadError(""),
        False,
        StreamInterrupted,
        "the connection to Ollama dropped: ",  # an exception without words says none
        None,
    ),
    (
        json.JSONDecodeError("Expecting value", "{", 1),
        True,
        StreamInterrupted,
        "the connection to Ollama dropped mid-stream: Expecting value: line 1 column 2 (char 1)",
        None,
    ),
    (RuntimeError("weird"), False, LLMError, "Ollama call failed: weird", None),
]

OPENAI: list[Case] = [
    (
        openai.APITimeoutError(REQUEST),
        False,
        BackendTimeout,
        f"the model server at {SHOWN_AT} did not answer within 12s",
        None,
    ),
    (
        openai.APIConnectionError(request=REQUEST),
        False,
        BackendUnreachable,
        f"cannot reach the OpenAI-compatible server at {SHOWN_AT} — is it running? (check OPENAI_BASE_URL)",
        None,
    ),
    (
        openai.APIConnectionError(request=REQUEST),
        True,
        StreamInterrupted,
        f"the connection to {SHOWN_AT} dropped mid-stream",
        None,
    ),
    (
        _openai_status(openai.AuthenticationError, 401, None),
        False,
        AuthenticationFailed,
        f"{SHOWN_AT} refused the API key — set OPENAI_API_KEY",
        None,
    ),
    (
        _openai_status(openai.NotFoundError, 404, {"error": {"message": "no such model"}}),
        False,
        ModelNotFound,
        f"model '{MODEL}' was not found at {SHOWN_AT}: no such model",
        None,
    ),
    (
        _openai_status(openai.BadRequestError, 400, {"error": {"message": "maximum context length is 8192"}}),
        False,
        ContextOverflow,
        f"the conversation no longer fits {MODEL}'s context: maximum context length is 8192",
        None,
    ),
    (
        _openai_status(openai.InternalServerError, 500, {"error": "GPU on fire"}),
        True,
        BackendHTTPError,
        f"{SHOWN_AT} answered HTTP 500: GPU on fire",
        500,
    ),
    (
        _openai_status(openai.APIStatusError, 502, "not json"),
        False,
        BackendHTTPError,
        f"{SHOWN_AT} answered HTTP 502: message from the client",
        502,
    ),
    (
        httpx2.ReadTimeout("slow"),
        True,
        BackendTimeout,
        f"the model server at {SHOWN_AT} stopped answering for 12s",
        None,
    ),
    (
        httpx2.RemoteProtocolError("peer closed"),
        True,
        StreamInterrupted,
        f"the connection to {SHOWN_AT} dropped mid-stream: peer closed",
        None,
    ),
    (
        openai.APIError("overloaded", REQUEST, body=None),
        True,
        StreamInterrupted,
        "the model server reported an error mid-stream: overloaded",
        None,
    ),
    (RuntimeError("weird"), False, LLMError, "model call failed: weird", None),
]

ANTHROPIC: list[Case] = [
    (anthropic.APITimeoutError(REQUEST), False, BackendTimeout, "Anthropic did not answer within 12s", None),
    (
        anthropic.APIConnectionError(request=REQUEST),
        False,
        BackendUnreachable,
        f"cannot reach Anthropic at {ANTHROPIC_AT} — check the network or ANTHROPIC_BASE_URL",
        None,
    ),
    (
        anthropic.APIConnectionError(request=REQUEST),
        True,
        StreamInterrupted,
        "the connection to Anthropic dropped mid-stream",
        None,
    ),
    (
        _anthropic_status(anthropic.AuthenticationError, 401, None),
        False,
        AuthenticationFailed,
        "Anthropic refused the API key — set ANTHROPIC_API_KEY",
        None,
    ),
    (
        _anthropic_status(anthropic.APIStatusError, 200, {"error": {"message": "Overloaded"}}),
        True,
        StreamInterrupted,
        "Anthropic reported an error mid-stream: Overloaded",
        None,
    ),
    (
        _anthropic_status(anthropic.APIStatusError, 200, {"error": {"message": "Overloaded"}}),
        False,
        BackendHTTPError,
        "Anthropic answered HTTP 200: Overloaded",
        200,
    ),
    (
        _anthropic_status(anthropic.NotFoundError, 404, {"error": {"message": f"model: {MODEL}"}}),
        False,
        ModelNotFound,
        f"Anthropic has no model '{MODEL}': model: {MODEL}",
        None,
    ),
    (
        _anthropic_status(anthropic.BadRequestError, 400, {"error": {"message": "prompt is too long"}}),
        True,
        ContextOverflow,
        f"the conversation no longer fits {MODEL}'s context: prompt is too long",
        None,
    ),
    (
        _anthropic_status(anthropic.InternalServerError, 500, {"type": "error"}),
        False,
        BackendHTTPError,
        "Anthropic answered HTTP 500: {'type': 'error'}",
        500,
    ),
    (httpx2.ReadTimeout("slow"), True, BackendTimeout, "Anthropic stopped answering for 12s", None),
    (
        httpx2.RemoteProtocolError("peer closed"),
        True,
        StreamInterrupted,
        "the connection to Anthropic dropped mid-stream: peer closed",
        None,
    ),
    (
        anthropic.APIError("bad event", REQUEST, body=None),
        True,
        StreamInterrupted,
        "Anthropic stream failed: bad event",
        None,
    ),
    (
        json.JSONDecodeError("Expecting value", "{", 1),
        True,
        StreamInterrupted,
        "Anthropic stream failed: Expecting value: line 1 column 2 (char 1)",
        None,
    ),
    (RuntimeError("weird"), False, LLMError, "Anthropic call failed: weird", None),
]


BY_KIND = {"ollama": OLLAMA, "openai": OPENAI, "anthropic": ANTHROPIC}


def _backend(kind: str) -> LLMBackend:
    if kind == "ollama":
        return OllamaBackend(OLLAMA_AT, timeout=12)
    if kind == "openai":
        return OpenAIBackend(SERVER_AT, "key", timeout=12)
    return AnthropicBackend("key", ANTHROPIC_AT, timeout=12)


CASES = (
    [("ollama", *c) for c in OLLAMA]
    + [("openai", *c) for c in OPENAI]
    + [("anthropic", *c) for c in ANTHROPIC]
)


@pytest.mark.parametrize(
    ("kind", "exc", "streaming", "cls", "message", "status"),
    CASES,
    ids=[f"{c[0]}-{type(c[1]).__name__}-{'stream' if c[2] else 'call'}" for c in CASES],
)
async def test_each_client_exception_becomes_the_error_a_user_can_act_on(
    kind: str, exc: BaseException, streaming: bool, cls: type[LLMError], message: str, status: int | None
) -> None:
    backend = _backend(kind)
    try:
        error = backend._errors.translate(exc, MODEL, streaming=streaming)  # type: ignore[attr-defined]
    finally:
        await backend.aclose()
    assert type(error) is cls
    assert str(error) == message
    assert error.backend == kind
    assert getattr(error, "status", None) == status


async def test_an_error_already_translated_passes_through() -> None:
    for kind in ("ollama", "openai", "anthropic"):
        backend = _backend(kind)
        done = ModelNotFound("already said", backend=kind)
        try:
            assert backend._errors.translate(done, MODEL) is done  # type: ignore[attr-defined]
        finally:
            await backend.aclose()
