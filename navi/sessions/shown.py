"""Stored history as Navi shows it outside a run: credentials in tool-call arguments masked.

The model asked for them (an `Authorization` header for `http_request`, a URL with a password), so
the stored buffers keep them: a later turn may need the same call again. What Navi hands out of the
store — the history views the page and the debug panel read, and session archives, which are files
meant to travel — masks them (`navi.redact`): header values named Authorization, Cookie, X-Api-Key
and the like, passwords in URLs, credential-named query values. Message text is shown as written.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from navi import redact
from navi.llm.messages import Message, ToolCall
from navi.sessions import tree
from navi.sessions.continuations import joined
from navi.sessions.models import Session


def arguments(args: dict[str, Any]) -> dict[str, Any]:
    masked: dict[str, Any] = redact.data(args)
    return masked


def _call(call: ToolCall) -> ToolCall:
    raw = call.raw_arguments
    return call.model_copy(
        update={"arguments": arguments(call.arguments), "raw_arguments": redact.text(raw) if raw else raw}
    )


def message(msg: Message) -> Message:
    if not msg.tool_calls:
        return msg
    return msg.model_copy(update={"tool_calls": [_call(c) for c in msg.tool_calls]})


def messages(msgs: list[Message]) -> list[Message]:
    return [message(m) for m in msgs]


class ShownMessage(Message):
    """A message of a shown path with its place among its siblings (the messages that share its
    parent: other edits of a question, other answers to it), so a client can draw ‹ 2/3 ›."""

    siblings: list[str] = Field(default_factory=list)
    sibling_index: int = 0


def path(session: Session) -> list[ShownMessage]:
    """`session.messages` (a path of its tree) as shown, each with its siblings, continuations
    joined to the answers they continue (navi/sessions/continuations.py)."""
    places = tree.siblings([m.id for m in session.messages], session.parents)
    shown: list[ShownMessage] = []
    for msg in messages(session.messages):
        place = places[msg.id]
        shown.append(
            ShownMessage.model_construct(
                **dict(msg), siblings=place.siblings, sibling_index=place.sibling_index
            )
        )
    return joined(shown)
