"""The OpenAI-compatible API: `POST /v1/chat/completions` (streaming and not) and `GET /v1/models`.

Every profile is a model. A request is one Navi turn, run by the `RunManager` like a page's
message: one turn per session (409 `busy` otherwise), planning, tools, compression and memory as
always, and the frames every page of the session sees. Which history the turn has:

- With an `X-Session-Id` header, the session's own: only the request's last message (the user's)
  is added, and the session's profile answers (the `model` must still name a profile). An id no
  session has yet makes a new session with exactly that id (the client chose it), seeded with the
  request's messages like one without the header; another user's id is 404 as if it did not exist.
- Without it, the request's messages are the conversation: a new session of the `model` profile
  is seeded with all but the last, which is answered; its id comes back in `X-Session-Id`, so
  the client can go on with it.

A collection of the user's documents joins the turn when the `X-Navi-Collection` header names it
(its name, percent-encoded when not ASCII, or its id) or the model's name ends with
`+docs=NAME` (`secretary+docs=Work`): the turn's answer is given the collection's best passages
for the message (navi/agent/quoting.py), as it is given the collections attached to the session.
It is recorded with the message (`collections`), not attached to the session: the next request
reads it only if it names it again. An unknown collection is 404 `collection_not_found`.

Frames become OpenAI's deltas: `stream_delta` → `content`, `thinking_delta` →
`reasoning_content`; `stream_end` gives `finish_reason` and `usage`. Nobody can answer an approval
here, so calls that need one are denied at once (`NAVI_OPENAI_API_APPROVALS=allow` runs them) and
the answer ends with a note saying so. A client that goes away mid-stream does not stop the turn:
it goes on and is saved, as when a page disconnects.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import unquote

from fastapi import Header, Request
from fastapi.responses import JSONResponse, StreamingResponse

from navi.agent.turns import NewMessage, TurnOptions
from navi.api.deps import ConfigDep, CurrentUser, RunsDep, RuntimeDep
from navi.api.openai_wire import (
    ChatRequest,
    OpenAIError,
    Shape,
    bad_request,
    error_body,
    history,
    last_message,
    model_card,
    split_model,
    sse,
    usage_of,
)
from navi.api.routing import api_router
from navi.api.turns import Answer, frames, new_session, own_or_new_session, wait_for
from navi.compose import Runtime
from navi.protocol import Sender
from navi.runctx import Unattended
from navi.runs import RunActive, Subscriber
from navi.sessions.models import is_session_id

router = api_router(prefix="/v1", tags=["openai"])  # bodies through navi.safejson, as everywhere
SESSION_HEADER = "X-Session-Id"
COLLECTION_HEADER = "X-Navi-Collection"
# A turn's error → the HTTP status of a non-streaming answer (the rest: the model side failed).
RUN_ERROR_STATUS = {"session_not_found": 404, "context_overflow": 400, "busy": 409, "internal": 500}
APPROVALS_SETTING = "NAVI_OPENAI_API_APPROVALS"  # named in the note about denied calls


def shown(value: str) -> str:
    """A header's value echoed in an error: never a 10 kB one."""
    return value if len(value) <= 64 else f"{value[:64]}…"


def _status(code: str) -> int:
    return RUN_ERROR_STATUS.get(code, 502)


def _failure(answer: Answer) -> tuple[int, str, str]:
    code, message = answer.failure()
    return _status(code), code, message


async def _stream(
    sub: Subscriber | None, shape: Shape, answer: Answer, include_usage: bool
) -> AsyncIterator[bytes]:
    try:
        yield sse(shape.chunk({"role": "assistant", "content": ""}, usage=include_usage))
        async for frame in frames(sub):
            for delta in answer.read(frame):
                yield sse(shape.chunk(delta, usage=include_usage))
            if answer.done:
                break
        if answer.error is not None or not answer.done:
            status, code, message = _failure(answer)
            yield sse(error_body(message, code, status))
            return
        yield sse(shape.chunk({}, answer.finish_reason, usage=include_usage))
        if include_usage:
            yield sse(shape.usage_chunk(usage_of(answer.end)))
        yield sse("[DONE]")
    finally:  # the client went away or the answer is complete; the run goes on either way
        if sub is not None:
            sub.close()


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


async def _collections(runtime: Runtime, user: str, refs: list[tuple[str, str]]) -> tuple[str, ...]:
    """The ids of the user's collections named by `refs` ((name or id, where it was given))."""
    ids: list[str] = []
    for ref, where in refs:
        found = await runtime.retrieval.collection(user, ref) if runtime.retrieval is not None else None
        if found is None:  # another user's collection is as unknown as a missing one
            raise OpenAIError(
                404,
                "collection_not_found",
                f"no collection '{shown(ref)}' among your documents' collections",
                param=where,
            )
        if found.id not in ids:
            ids.append(found.id)
    return tuple(ids)


@router.post("/chat/completions", summary="Run a Navi turn, answered in OpenAI's chat format")
async def chat_completions(
    body: ChatRequest,
    runtime: RuntimeDep,
    runs: RunsDep,
    config: ConfigDep,
    user: CurrentUser,
    x_session_id: Annotated[str | None, Header(description="Continue this Navi session")] = None,
    x_navi_collection: Annotated[
        str | None, Header(description="A collection of your documents (name or id) this turn reads")
    ] = None,
) -> Any:
    body.check()
    profile_id, named = split_model(body.model)
    if profile_id not in runtime.profiles:
        raise _unknown_model(profile_id, runtime)
    refs = [(named, "model")] if named else []
    if x_navi_collection is not None and x_navi_collection.strip():
        refs.append((unquote(x_navi_collection.strip()), COLLECTION_HEADER))
    collections = await _collections(runtime, user, refs)
    last = last_message(body.messages)
    if x_session_id is not None:
        if not is_session_id(x_session_id):
            raise bad_request(
                f"{SESSION_HEADER} must be a Navi session id, a lowercase UUID such as "
                f"3f2e8a1c-5b7d-4e9f-a0c2-6d4b8e1f3a57 (got {shown(x_session_id)!r})",
                "invalid_session_id",
                SESSION_HEADER,
            )
        session = await own_or_new_session(
            runtime, x_session_id, user, profile_id, lambda: history(body.messages)
        )
        if session is None:  # another user's: answered as a missing session always was
            raise OpenAIError(404, "session_not_found", f"no session '{x_session_id}'", param=SESSION_HEADER)
        session_id, model = session.id, runtime.profiles.of_session(session.profile_id).id
    else:
        seeded = await new_session(runtime, profile_id, user, messages=history(body.messages))
        session_id, model = seeded.id, body.model
    headers = {SESSION_HEADER: session_id}
    unattended: Unattended = config.openai_approvals
    try:
        sender = Sender(collections=collections) if collections else None
        asked = NewMessage(last.content or "", last.images, sender=sender)
        # A program waits for the answer: nobody to notify.
        run = await runs.start(session_id, asked, TurnOptions(unattended=unattended, purpose="api"))
    except RunActive as exc:
        raise OpenAIError(409, "busy", str(exc), headers=headers) from None
    shape, answer = Shape(run.run_id, model), Answer(setting=APPROVALS_SETTING)
    if body.stream:
        sub = await runs.followers.follow(session_id, run_id=run.run_id)
        return StreamingResponse(
            _stream(sub, shape, answer, body.include_usage),
            media_type="text/event-stream",
            headers={**headers, "Cache-Control": "no-cache"},
        )
    await wait_for(runs, run, answer)
    if answer.error is not None or not answer.done:
        status, code, message = _failure(answer)
        # The message is stored and the failure recorded: a retry by the client would send it twice.
        raise OpenAIError(status, code, message, headers={**headers, "x-should-retry": "false"})
    completion = shape.completion(
        answer.text, "".join(answer.reasoning), answer.finish_reason, usage_of(answer.end)
    )
    return JSONResponse(completion, headers=headers)
