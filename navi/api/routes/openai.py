"""The OpenAI-compatible API: `POST /v1/chat/completions` (streaming and not) and `GET /v1/models`.

Every profile is a model. A request is one Navi turn, run by the `RunManager` like a page's
message: one turn per session (409 `busy` otherwise), planning, tools, compression and memory as
always, and the frames every page of the session sees. Which history the turn has:

- With an `X-Session-Id` header, the session's own: only the request's last message (the user's)
  is added, and the session's profile answers (the `model` must still name a profile).
- Without it, the request's messages are the conversation: a new session of the `model` profile
  is seeded with all but the last, which is answered; its id comes back in `X-Session-Id`, so
  the client can go on with it.

Frames become OpenAI's deltas: `stream_delta` → `content`, `thinking_delta` →
`reasoning_content`; `stream_end` gives `finish_reason` and `usage`. Nobody can answer an approval
here, so calls that need one are denied at once (`NAVI_OPENAI_API_APPROVALS=allow` runs them) and
the answer ends with a note saying so. A client that goes away mid-stream does not stop the turn:
it goes on and is saved, as when a page disconnects.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Header, Request
from fastapi.responses import JSONResponse, StreamingResponse

from navi.api.deps import RunsDep, RuntimeDep
from navi.api.openai_wire import (
    ChatRequest,
    OpenAIError,
    Shape,
    error_body,
    history,
    last_message,
    model_card,
    sse,
    usage_of,
)
from navi.api.routing import api_router
from navi.api.runs import AgentRun, RunActive, Subscriber
from navi.compose import Runtime
from navi.llm.messages import Message
from navi.runctx import Unattended
from navi.sessions.models import is_session_id

router = api_router(prefix="/v1", tags=["openai"])  # bodies through navi.safejson, as everywhere
SESSION_HEADER = "X-Session-Id"
# A turn's error → the HTTP status of a non-streaming answer (the rest: the model side failed).
RUN_ERROR_STATUS = {"session_not_found": 404, "context_overflow": 400, "busy": 409, "internal": 500}


def _status(code: str) -> int:
    return RUN_ERROR_STATUS.get(code, 502)


def denied_note(tools: list[str]) -> str:
    names = ", ".join(dict.fromkeys(tools))
    calls = "call" if len(tools) == 1 else "calls"
    return (
        f"[Navi did not run {len(tools)} tool {calls} ({names}) that need your approval: nobody can "
        "approve them through this API. Approve them from Navi's page, or set "
        "NAVI_OPENAI_API_APPROVALS=allow.]"
    )


@dataclass
class Answer:
    """One turn's frames read as OpenAI's answer: the deltas to send, then how it ended.

    Text of every model call of the turn is shown, as the page shows it: steps that called tools
    first, each separated from the next by a blank line, then the answer.
    """

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)  # call id → tool, for the denied note
    denied: list[str] = field(default_factory=list)
    end: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    stopped: bool = False
    _text_step: bool = False  # text arrived since the latest tool call
    _new_step: bool = False  # a tool ran since the latest text
    _new_thought: bool = False  # … since the latest reasoning

    @property
    def done(self) -> bool:
        return self.end is not None or self.error is not None or self.stopped

    @property
    def finish_reason(self) -> str:
        return str((self.end or {}).get("finish_reason") or "stop")

    def _text(self, text: str) -> dict[str, Any]:
        if self._new_step and self.content:
            text = f"\n\n{text}"
        self._new_step, self._text_step = False, True
        self.content.append(text)
        return {"content": text}

    def read(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        """The deltas one frame makes (often none)."""
        kind = frame.get("type")
        if kind == "stream_delta":
            return [self._text(str(frame.get("delta", "")))]
        if kind == "thinking_delta":
            text = str(frame.get("delta", ""))
            if self._new_thought and self.reasoning:
                text = f"\n\n{text}"
            self._new_thought = False
            self.reasoning.append(text)
            return [{"reasoning_content": text}]
        if kind == "tool_started":
            self.tools[str(frame.get("call_id", ""))] = str(frame.get("tool", ""))
            self._new_step = self._new_thought = True
            self._text_step = False
        elif kind == "approval_resolved" and frame.get("by") == "unattended":
            self.denied.append(self.tools.get(str(frame.get("call_id", "")), "a tool"))
        elif kind == "stream_end":
            self.end = frame
            out = []
            final = str(frame.get("content") or "")
            if final and not self._text_step:  # an answer no delta carried (Navi's own words)
                out.append(self._text(final))
            if self.denied:
                self._new_step = True
                out.append(self._text(denied_note(self.denied)))
            return out
        elif kind == "stream_stopped":
            self.stopped = True
        elif kind == "error":
            self.error = frame
        return []

    def failure(self) -> tuple[int, str, str]:
        """(status, code, message) of a turn that ended without an answer."""
        frame = self.error or {"code": "no_answer", "message": "the turn ended without an answer"}
        code = str(frame.get("code") or "internal")
        return _status(code), code, str(frame.get("message") or "the turn failed")


async def _frames(sub: Subscriber) -> AsyncIterator[dict[str, Any]]:
    """The run's frames for this request, until they end."""
    while True:
        item = await sub.queue.get()
        if isinstance(item, Subscriber):
            if item.dropped:
                yield {"type": "error", "code": "too_slow", "message": "the client fell too far behind"}
            return
        yield item


async def _read(sub: Subscriber, answer: Answer) -> None:
    async for frame in _frames(sub):
        answer.read(frame)
        if answer.done:
            return


async def _stream(
    run: AgentRun, sub: Subscriber, shape: Shape, answer: Answer, include_usage: bool
) -> AsyncIterator[bytes]:
    try:
        yield sse(shape.chunk({"role": "assistant", "content": ""}, usage=include_usage))
        async for frame in _frames(sub):
            for delta in answer.read(frame):
                yield sse(shape.chunk(delta, usage=include_usage))
            if answer.done:
                break
        if answer.error is not None or not answer.done:
            status, code, message = answer.failure()
            yield sse(error_body(message, code, status))
            return
        yield sse(shape.chunk({}, answer.finish_reason, usage=include_usage))
        if include_usage:
            yield sse(shape.usage_chunk(usage_of(answer.end)))
        yield sse("[DONE]")
    finally:  # the client went away or the answer is complete; the run goes on either way
        run.unsubscribe(sub)


async def _seed(runtime: Runtime, profile_id: str, messages: list[Message]) -> str:
    """A new session holding the request's history (all but the message it answers)."""
    session = await runtime.sessions.create(profile_id)
    for hook in runtime.session_created_hooks:
        runtime.background(hook(session.id))
    if messages:
        await runtime.sessions.append(session.id, display=messages, context=messages)
    return session.id


@router.get("/models", summary="Navi's profiles, as OpenAI models")
async def list_models(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    created = int(request.app.state.started_at)
    return {"object": "list", "data": [model_card(p.id, p.name, created) for p in runtime.profiles.all()]}


@router.get("/models/{model_id}", summary="One profile, as an OpenAI model")
async def get_model(model_id: str, request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    if model_id not in runtime.profiles:
        raise _unknown_model(model_id, runtime)
    return model_card(model_id, runtime.profiles.get(model_id).name, int(request.app.state.started_at))


def _unknown_model(model: str, runtime: Runtime) -> OpenAIError:
    return OpenAIError(
        404,
        "model_not_found",
        f"The model '{model}' does not exist: Navi's models are its profiles "
        f"({', '.join(runtime.profiles.ids())}); GET /v1/models lists them.",
        param="model",
    )


@router.post("/chat/completions", summary="Run a Navi turn, answered in OpenAI's chat format")
async def chat_completions(
    body: ChatRequest,
    request: Request,
    runtime: RuntimeDep,
    runs: RunsDep,
    x_session_id: Annotated[str | None, Header(description="Continue this Navi session")] = None,
) -> Any:
    body.check()
    if body.model not in runtime.profiles:
        raise _unknown_model(body.model, runtime)
    last = last_message(body.messages)
    if x_session_id is not None:
        session = (
            await runtime.sessions.get(x_session_id, display=False) if is_session_id(x_session_id) else None
        )
        if session is None:
            raise OpenAIError(404, "session_not_found", f"no session '{x_session_id}'", param=SESSION_HEADER)
        session_id, model = session.id, runtime.profiles.of_session(session.profile_id).id
    else:
        session_id, model = await _seed(runtime, body.model, history(body.messages)), body.model
    headers = {SESSION_HEADER: session_id}
    unattended: Unattended = request.app.state.openai_approvals
    try:
        run = runs.start(session_id, last.content or "", last.images, planning=True, unattended=unattended)
    except RunActive as exc:
        raise OpenAIError(409, "busy", str(exc), headers=headers) from None
    sub = run.subscribe()
    shape, answer = Shape(run.run_id, model), Answer()
    if body.stream:
        return StreamingResponse(
            _stream(run, sub, shape, answer, body.include_usage),
            media_type="text/event-stream",
            headers={**headers, "Cache-Control": "no-cache"},
        )
    try:
        await _read(sub, answer)
    finally:
        run.unsubscribe(sub)
    if answer.error is not None or not answer.done:
        status, code, message = answer.failure()
        # The message is stored and the failure recorded: a retry by the client would send it twice.
        raise OpenAIError(status, code, message, headers={**headers, "x-should-retry": "false"})
    completion = shape.completion(
        "".join(answer.content), "".join(answer.reasoning), answer.finish_reason, usage_of(answer.end)
    )
    return JSONResponse(completion, headers=headers)
