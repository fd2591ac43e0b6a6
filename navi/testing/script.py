"""Scripts for fake models: what the next model turn says, how fast, and how it fails.

One `Script` drives both the in-process `ScriptedBackend` and the HTTP `FakeModelServer`, so a
test can describe a conversation once and run it through either. Replies are taken from a queue;
when the queue is empty a responder function (or the default echo) decides.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from navi.llm.errors import LLMError
from navi.llm.messages import Message


@dataclass
class ScriptedCall:
    """A tool call the fake model makes. A `str` for arguments is sent raw (it may be broken JSON)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    text: str = ""
    thinking: str = ""
    tool_calls: list[ScriptedCall] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    chunk_chars: int = 8
    delay: float = 0.0
    first_delay: float = 0.0
    # Failures, each used by the HTTP fake (status/error/drop) or the in-process backend (exception).
    status: int | None = None
    error: str | None = None
    error_after: int | None = None
    drop_after: int | None = None
    exception: LLMError | None = None
    # The model the server says answered (Ollama's final object), when not the one asked: a server
    # or router that served the call with another model.
    served_model: str | None = None
    # Replace each streamed text piece by the server's clock when it is sent (`<unix time>|`), so a
    # client can measure the delay each chunk picked up (the streaming benchmark).
    stamp: bool = False
    # In-process only: wait on this event once `wait_after` pieces were yielded.
    wait_for: asyncio.Event | None = None
    wait_after: int = 0
    # The HTTP fake: wait on this (set from any thread) once `wait_after` pieces were sent, so a
    # test holds an answer mid-stream until it saw what it waits for (at most a minute).
    hold: threading.Event | None = None

    def pieces(self) -> list[tuple[str, str]]:
        """The streamed pieces in order: ("thinking", text) then ("text", text)."""
        out: list[tuple[str, str]] = []
        size = max(1, self.chunk_chars)
        for kind, body in (("thinking", self.thinking), ("text", self.text)):
            out.extend((kind, body[i : i + size]) for i in range(0, len(body), size))
        return out


@dataclass
class ScriptRequest:
    """What a fake model was asked, normalised to Navi messages whatever the wire format."""

    api: str
    model: str
    messages: list[Message]
    tools: list[str]
    stream: bool = True
    options: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    # How the streamed reply ended: "pending", "completed" or "aborted" (the client went away).
    outcome: str = "pending"

    @property
    def last_user_text(self) -> str:
        for msg in reversed(self.messages):
            if msg.role == "user":
                return msg.content or ""
        return ""

    @property
    def system_text(self) -> str:
        return "\n".join(m.content or "" for m in self.messages if m.role == "system")

    @property
    def last(self) -> Message | None:
        return self.messages[-1] if self.messages else None


Responder = Callable[[ScriptRequest], "Reply | str"]


def echo(request: ScriptRequest) -> Reply:
    return Reply(text=f"You said: {request.last_user_text}")


class Script:
    """A thread-safe queue of replies plus a fallback responder, recording every request."""

    def __init__(
        self,
        replies: list[Reply | str] | None = None,
        responder: Responder | None = None,
        *,
        record: bool = True,
    ) -> None:
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.responder: Responder = responder or echo
        self.record = record  # off for long-running servers (benchmarks), where requests would pile up
        self.requests: list[ScriptRequest] = []
        for reply in replies or []:
            self.enqueue(reply)

    def enqueue(self, *replies: Reply | str) -> Script:
        with self._lock:
            for reply in replies:
                self._queue.append(Reply(text=reply) if isinstance(reply, str) else reply)
        return self

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    @property
    def pending(self) -> int:
        return len(self._queue)

    def next_reply(self, request: ScriptRequest) -> Reply:
        with self._lock:
            if self.record:
                self.requests.append(request)
            reply: Reply | str | None = self._queue.popleft() if self._queue else None
        if reply is None:
            reply = self.responder(request)
        return Reply(text=reply) if isinstance(reply, str) else reply
