"""A turn asked for by a client that waits for its answer instead of following frames on a page:
the OpenAI-compatible API (`routes/openai.py`) and Navi's MCP server (`navi/api/mcp_server.py`).

Both start the turn through `RunManager.start` like a page's message, follow it (`Followers.follow`,
as every client of a run does) and read its frames into an `Answer`. Both run unattended (nobody
can answer an approval there), so the answer ends with a note naming the calls that were denied
and the setting that would allow them.
A new session for such a client is made by `new_session`, the one place a session is created for a
user (the REST route uses it too), so the hooks that follow a new session always run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from navi.compose import Runtime
from navi.llm.messages import Message
from navi.protocol import ErrorEvent
from navi.runs import AgentRun, RunManager, Subscriber
from navi.sessions.models import Session
from navi.sessions.store import SessionExists


def denied_note(tools: list[str], setting: str, surface: str = "this API") -> str:
    """What an unattended answer adds when calls were denied: which, and how to allow them."""
    names = ", ".join(dict.fromkeys(tools))
    calls = "call" if len(tools) == 1 else "calls"
    return (
        f"[Navi did not run {len(tools)} tool {calls} ({names}) that need your approval: nobody can "
        f"approve them through {surface}. Approve them from Navi's page, or set {setting}=allow.]"
    )


@dataclass
class Answer:
    """One turn's frames read as a waiting client's answer: the text deltas, then how it ended.

    Text of every model call of the turn is shown, as the page shows it: steps that called tools
    first, each separated from the next by a blank line, then the answer. `setting` and `surface`
    name, in the note about denied calls, what would allow them and where they were asked for.
    """

    setting: str
    surface: str = "this API"
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
    def text(self) -> str:
        return "".join(self.content)

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
                out.append(self._text(denied_note(self.denied, self.setting, self.surface)))
            return out
        elif kind == "stream_stopped":
            self.stopped = True
        elif kind == "error":
            self.error = frame
        return []

    def failure(self) -> tuple[str, str]:
        """(code, message) of a turn that ended without an answer."""
        frame = self.error or {"code": "no_answer", "message": "the turn ended without an answer"}
        return str(frame.get("code") or "internal"), str(frame.get("message") or "the turn failed")


async def frames(sub: Subscriber | None) -> AsyncIterator[dict[str, Any]]:
    """The run's frames for this subscriber, until they end (none without a run to follow)."""
    while sub is not None:
        item = await sub.queue.get()
        if isinstance(item, Subscriber):
            if item.dropped:
                yield ErrorEvent(message="the client fell too far behind", code="too_slow").frame()
            return
        yield item


async def read(sub: Subscriber, answer: Answer) -> None:
    """Read the run's frames into `answer` until it is done (or the frames end)."""
    async for frame in frames(sub):
        answer.read(frame)
        if answer.done:
            return


async def wait_for(runs: RunManager, run: AgentRun, answer: Answer) -> Answer:
    """Follow `run` until its answer (or its failure) is known; `answer` holds it then."""
    sub = await runs.followers.follow(run.session_id, run_id=run.run_id)
    if sub is None:  # gone already (it cannot be, for a run just started): no answer
        return answer
    try:
        await read(sub, answer)
    finally:
        sub.close()
    return answer


async def new_session(
    runtime: Runtime,
    profile_id: str,
    owner: str,
    *,
    name: str | None = None,
    messages: Sequence[Message] = (),
    session_id: str | None = None,
    temporary: bool = False,
) -> Session:
    """A new session of `owner` (holding `messages`, when a client brings its history; with the id
    the client chose, when it names one: `SessionExists` if it is taken); the hooks that follow a
    new session (memory extraction) are started in the background."""
    session = await runtime.sessions.create(
        profile_id, owner=owner, name=name, session_id=session_id, temporary=temporary
    )
    for hook in runtime.session_created_hooks:
        runtime.background(hook(session.id))
    if messages:
        history = list(messages)
        await runtime.sessions.append(session.id, display=history, context=history)
    return session


async def own_or_new_session(
    runtime: Runtime,
    session_id: str,
    owner: str,
    profile_id: str,
    messages: Callable[[], Sequence[Message]],
) -> Session | None:
    """The session a client names by id (a valid session id): `owner`'s own, or a new one with
    exactly that id when no session has it yet (a client may choose its ids), seeded like any new
    session with `messages()`. None when the id is another user's: never revealed, never taken over."""
    session = await runtime.sessions.get(session_id, owner=owner, display=False)
    if session is not None:
        return session
    history = messages()  # read before creating: a history that fails to parse leaves nothing behind
    try:
        return await new_session(runtime, profile_id, owner, messages=history, session_id=session_id)
    except SessionExists:  # taken since: by a request of this caller's running alongside, or not theirs
        return await runtime.sessions.get(session_id, owner=owner, display=False)
