"""Stored history as Navi shows it outside a run: credentials in tool-call arguments masked.

The model asked for them (an `Authorization` header for `http_request`, a URL with a password), so
the stored buffers keep them: a later turn may need the same call again. What Navi hands out of the
store — the history views the page and the debug panel read, and session archives, which are files
meant to travel — masks them (`navi.redact`): header values named Authorization, Cookie, X-Api-Key
and the like, passwords in URLs, credential-named query values. Message text is shown as written.
"""

from __future__ import annotations

from typing import Any

from navi import redact
from navi.llm.messages import Message, ToolCall


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
