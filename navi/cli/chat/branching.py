"""`navi chat`'s commands for the conversation's tree (docs/api.md#branches): /edit TEXT runs your
last message again with new text, /regenerate asks for another answer to it, /branch shows and
switches between the versions (each old version stays); /continue goes on with an answer the length
limit cut off (docs/api.md#continue)."""

from __future__ import annotations

from typing import Any

from navi.cli.chat.app import Chat
from navi.cli.chat.connection import NotConnected


async def _path(chat: Chat) -> list[dict[str, Any]] | None:
    if chat.session is None or chat.conn is None:
        chat.error("nothing here yet: the conversation starts with its first message")
        return None
    messages: list[dict[str, Any]] = (await chat.remote.session(chat.session["id"]))["messages"]
    return messages


def _last_question(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((m for m in reversed(messages) if m.get("role") == "user" and not m.get("is_summary")), None)


async def _run(chat: Chat, frame: dict[str, Any]) -> None:
    assert chat.conn is not None
    try:
        await chat.conn.send(frame)
    except NotConnected as exc:
        chat.error(str(exc))
        return
    await chat.follow()


async def cmd_edit(chat: Chat, arg: str) -> bool:
    if not arg:
        chat.error("/edit TEXT: the new text of your last message (the old one stays: /branch)")
        return True
    messages = await _path(chat)
    question = _last_question(messages) if messages is not None else None
    if messages is not None and question is None:
        chat.error("there is no message of yours to edit yet")
    if question is None:
        return True
    chat.say("Edited: a new version of your last message (/branch switches between them)")
    await _run(chat, {"type": "edit", "message_id": question["id"], "content": arg})
    return True


async def cmd_regenerate(chat: Chat, arg: str) -> bool:
    messages = await _path(chat)
    question = _last_question(messages) if messages is not None else None
    if messages is not None and question is None:
        chat.error("there is no answer to regenerate yet")
    if question is None:
        return True
    chat.say("Another answer (the old one stays: /branch switches between them)")
    await _run(chat, {"type": "regenerate", "message_id": question["id"]})
    return True


async def cmd_continue(chat: Chat, arg: str) -> bool:
    """/continue: the rest of the latest answer, which its length limit cut off."""
    messages = await _path(chat)
    if messages is None:
        return True
    last = messages[-1] if messages else None
    if (
        last is None
        or last.get("role") != "assistant"
        or (last.get("metadata") or {}).get("finish_reason") != "length"
    ):
        chat.error("there is no cut-off answer to continue: only the latest answer, when cut off, can be")
        return True
    await _run(chat, {"type": "continue", "message_id": last["id"]})
    return True


async def cmd_branch(chat: Chat, arg: str) -> bool:
    """/branch: the versions at the latest point that has several; /branch prev|next|N: show one."""
    messages = await _path(chat)
    if messages is None or chat.session is None:
        return True
    forks = [m for m in messages if len(m.get("siblings") or []) > 1]
    if not forks:
        chat.say("This conversation has one version: /edit or /regenerate make another.")
        return True
    here = forks[-1]
    siblings, index = here["siblings"], int(here.get("sibling_index", 0))
    if not arg:
        what = "your message" if here.get("role") == "user" else "the answer"
        chat.say(
            f"Version {index + 1} of {len(siblings)} of {what} — /branch prev, /branch next or /branch N"
        )
        return True
    wanted = {"prev": index - 1, "next": index + 1}.get(arg.lower())
    if wanted is None and arg.isdigit():
        wanted = int(arg) - 1
    if wanted is None or not 0 <= wanted < len(siblings):
        chat.error(f"/branch prev, next or a number from 1 to {len(siblings)}")
        return True
    session_id = chat.session["id"]
    await chat.remote.request("POST", f"/sessions/{session_id}/branch", json={"message_id": siblings[wanted]})
    await chat.open(session_id)
    chat.say(f"Version {wanted + 1} of {len(siblings)}")
    return True
