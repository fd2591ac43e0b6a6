"""MCP elicitation: a server's question to the user in the middle of a tool call, shown as a card.

A server asks for input (form mode: a flat JSON Schema of strings, numbers, booleans and enums) or
asks the user to open a page (URL mode). The SDK hands the question to the connection's callback
on either protocol era — a 2025-era server sends `elicitation/create` during the call; a
2026-07-28 one returns `input_required` and the SDK calls again with the answer. Either way it
lands in `Elicitations.ask`, which finds the run the call belongs to, emits
`elicitation_required` into it (the page and `navi chat` draw a card, like an approval), waits for
the user's answer, the run's stop or the timeout, and emits `elicitation_resolved`.

Nothing is answered for the user: the model never sees the question, a run nobody can be asked in
(the OpenAI-compatible API, Navi's own MCP server) settles it as `cancel` at once, and
so do the timeout and a stop. A form's answer is checked against its schema before it is passed
on; a wrong one is refused (`ElicitationInvalid`) and the question keeps waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from navi.logging import get_logger
from navi.protocol import ElicitationAction, ElicitationRequired, ElicitationResolved
from navi.runctx import RunContext

log = get_logger(__name__)

ANSWER_TIMEOUT = 300.0
MAX_MESSAGE = 2_000
MAX_FIELDS = 30
MAX_TEXT = 10_000
MAX_URL = 4_000
MAX_SCHEMA = 20_000
FIELD_TYPES = ("string", "number", "integer", "boolean", "array")
AnsweredBy = Literal["user", "timeout", "stop", "unattended"]
Content = dict[str, str | int | float | bool | list[str]]


class ElicitationNotFound(LookupError):
    def __init__(self, session_id: str, elicitation_id: str) -> None:
        super().__init__(
            f"no question {elicitation_id!r} of an MCP server waits in session {session_id} "
            "(it was answered already, or it never asked)"
        )


class ElicitationInvalid(ValueError):
    """An answer that does not fit the question; the question still waits."""


def _future() -> asyncio.Future[tuple[ElicitationAction, Content | None]]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class Question:
    session_id: str
    elicitation_id: str
    server: str
    tool: str
    message: str
    mode: Literal["form", "url"]
    requested_schema: dict[str, Any] | None
    url: str | None
    is_subagent: bool
    answer: asyncio.Future[tuple[ElicitationAction, Content | None]] = field(default_factory=_future)

    def frame(self) -> ElicitationRequired:
        extra: dict[str, Any] = (
            {"requested_schema": self.requested_schema} if self.mode == "form" else {"url": self.url}
        )
        return ElicitationRequired(
            elicitation_id=self.elicitation_id,
            server=self.server,
            tool=self.tool,
            message=self.message,
            mode=self.mode,
            is_subagent=self.is_subagent,
            **extra,
        )

    def view(self) -> dict[str, Any]:
        """What `GET /sessions/{id}/elicitations` lists (the fields of its `elicitation_required`)."""
        data = self.frame().frame()
        data.pop("type", None)
        return data


@dataclass(frozen=True)
class Answer:
    action: ElicitationAction
    content: Content | None = None
    by: AnsweredBy = "user"


class Elicitations:
    """The questions runs of this process wait on, and where their answers arrive."""

    def __init__(self, timeout_seconds: float = ANSWER_TIMEOUT) -> None:
        self.timeout_seconds = timeout_seconds
        self._pending: dict[tuple[str, str], Question] = {}

    def waiting(self, session_id: str) -> list[Question]:
        return [q for (sid, _), q in self._pending.items() if sid == session_id]

    def answer(
        self, session_id: str, elicitation_id: str, action: ElicitationAction, content: Content | None = None
    ) -> None:
        """Deliver the user's answer. `ElicitationNotFound` when nothing waits for it,
        `ElicitationInvalid` when the content does not fit the form (the question keeps waiting)."""
        question = self._pending.get((session_id, elicitation_id))
        if question is None or question.answer.done():
            raise ElicitationNotFound(session_id, elicitation_id)
        question.answer.set_result(
            (action, passed(question.mode, question.requested_schema, action, content))
        )

    async def ask(
        self,
        ctx: RunContext | None,
        *,
        server: str,
        tool: str,
        message: str,
        requested_schema: dict[str, Any] | None = None,
        url: str | None = None,
    ) -> Answer:
        """Ask the user of `ctx`'s run and wait; never answered for them."""
        mode: Literal["form", "url"] = "url" if url is not None else "form"
        if problem := unusable(requested_schema, url):  # never shown: the server is told `cancel`
            log.warning("mcp_elicitation_refused", server=server, tool=tool, problem=problem)
            return Answer("cancel", by="unattended")
        if ctx is None or ctx.unattended is not None:
            # Nobody to ask (Navi's own MCP server, the OpenAI-compatible API).
            log.info("mcp_elicitation_unattended", server=server, tool=tool)
            if ctx is not None:
                eid = "e-" + secrets.token_hex(8)
                ctx.emit(ElicitationResolved(elicitation_id=eid, action="cancel", by="unattended"))
            return Answer("cancel", by="unattended")
        question = Question(
            session_id=ctx.root_session,
            elicitation_id="e-" + secrets.token_hex(8),
            server=server,
            tool=tool,
            message=message[:MAX_MESSAGE],
            mode=mode,
            requested_schema=requested_schema if mode == "form" else None,
            url=url,
            is_subagent=ctx.is_subagent,
        )
        key = (question.session_id, question.elicitation_id)
        self._pending[key] = question
        try:
            ctx.emit(question.frame())
            answer = await self._wait(question, ctx.stop_event)
        finally:
            if self._pending.get(key) is question:
                del self._pending[key]
        log.info("mcp_elicitation_answered", server=server, tool=tool, action=answer.action, by=answer.by)
        ctx.emit(
            ElicitationResolved(
                elicitation_id=question.elicitation_id,
                action=answer.action,
                by=answer.by,
                is_subagent=ctx.is_subagent,
            )
        )
        return answer

    async def _wait(self, question: Question, stop: asyncio.Event) -> Answer:
        stopped = asyncio.ensure_future(stop.wait())
        try:
            either: set[asyncio.Future[Any]] = {question.answer, stopped}
            await asyncio.wait(either, timeout=self.timeout_seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stopped
        if question.answer.done() and not question.answer.cancelled():
            action, content = question.answer.result()
            return Answer(action, content)
        question.answer.cancel()  # a late answer finds nothing waiting
        return Answer("cancel", by="stop" if stop.is_set() else "timeout")


def passed(
    mode: str, schema: dict[str, Any] | None, action: ElicitationAction, content: Any
) -> Content | None:
    """What of an answer goes to the server: a form's accepted content, checked against its schema
    (`ElicitationInvalid` when it does not fit); nothing for a URL's consent or a refusal. The
    same check wherever the answer arrives (a worker other than the run's checks it against the
    question's stored view before it passes it on)."""
    if action == "accept" and mode == "form":
        return checked(schema or {}, content if isinstance(content, dict) else {})
    return None


def unusable(schema: dict[str, Any] | None, url: str | None) -> str | None:
    """Why a question cannot be shown to the user, or None: a page that is not http(s) (a
    `javascript:` or `file:` address is never offered to open), a form that is not a flat object of
    at most MAX_FIELDS fields, or one too large to be a form."""
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > MAX_URL:
            return "the page to open is not an http(s) address"
        return None
    props = (schema or {}).get("properties")
    if not isinstance(props, dict) or not all(isinstance(v, dict) for v in props.values()):
        return "the form is not an object of fields"
    if len(props) > MAX_FIELDS or len(json.dumps(schema)) > MAX_SCHEMA:
        return f"the form is too large (at most {MAX_FIELDS} fields)"
    if any(v.get("type") not in FIELD_TYPES for v in props.values()):
        return "a field of the form is not text, a number, yes/no or a choice"
    return None


def checked(schema: dict[str, Any], content: dict[str, Any]) -> Content:
    """`content` checked against an elicitation's flat schema (the spec's primitive fields):
    unknown keys, missing required ones, wrong types and values outside an enum are refused."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        props = {}
    unknown = [k for k in content if k not in props]
    if unknown:
        raise ElicitationInvalid(f"unknown field {unknown[0]!r}; the form has: {', '.join(props) or 'none'}")
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    missing = [k for k in required if k not in content]
    if missing:
        raise ElicitationInvalid(f"{missing[0]!r} is required")
    out: Content = {}
    for name, value in content.items():
        out[name] = _field(name, props[name] if isinstance(props[name], dict) else {}, value)
    return out


def _field(name: str, spec: dict[str, Any], value: Any) -> str | int | float | bool | list[str]:
    kind = spec.get("type")
    choices = spec.get("enum")
    if kind == "boolean":
        if not isinstance(value, bool):
            raise ElicitationInvalid(f"{name!r} must be true or false")
        return value
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ElicitationInvalid(f"{name!r} must be a number")
        if kind == "integer" and float(value) != int(value):
            raise ElicitationInvalid(f"{name!r} must be a whole number")
        for bound, ok in (("minimum", lambda b: value >= b), ("maximum", lambda b: value <= b)):
            limit = spec.get(bound)
            if isinstance(limit, int | float) and not ok(limit):
                raise ElicitationInvalid(
                    f"{name!r} must be {'at least' if bound == 'minimum' else 'at most'} {limit}"
                )
        return int(value) if kind == "integer" else value
    if kind == "array":
        given = spec.get("items")
        items: dict[str, Any] = given if isinstance(given, dict) else {}
        allowed = items.get("enum") or [o.get("const") for o in items.get("anyOf", []) if isinstance(o, dict)]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ElicitationInvalid(f"{name!r} must be a list of choices")
        if allowed and any(v not in allowed for v in value):
            raise ElicitationInvalid(f"{name!r}: choose among {', '.join(map(str, allowed))}")
        return list(value)
    if not isinstance(value, str):
        raise ElicitationInvalid(f"{name!r} must be text")
    if len(value) > MAX_TEXT:
        raise ElicitationInvalid(f"{name!r} is too long (at most {MAX_TEXT} characters)")
    options = choices or [o.get("const") for o in spec.get("oneOf", []) if isinstance(o, dict)]
    if options and value not in options:
        raise ElicitationInvalid(f"{name!r}: choose among {', '.join(map(str, options))}")
    for bound, ok in (("minLength", lambda b: len(value) >= b), ("maxLength", lambda b: len(value) <= b)):
        limit = spec.get(bound)
        if isinstance(limit, int) and not ok(limit):
            raise ElicitationInvalid(
                f"{name!r} must have {'at least' if bound == 'minLength' else 'at most'} {limit} characters"
            )
    return value
