"""A session's stored display history as blocks, for what `navi chat` shows when it opens one; and
what a turn that ended while the connection was down said in the end."""

from __future__ import annotations

import re
from typing import Any

from navi.cli.chat.blocks import (
    CUT_OFF,
    Block,
    NoticeBlock,
    PlanBlock,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    UserBlock,
)

# Navi appends the uploaded files' paths to the user's text for the model; they are shown as names.
FILES_SUFFIX = re.compile(r"\n\n\[Uploaded files on disk:\n[\s\S]*\]$")


def user_text(message: dict[str, Any]) -> str:
    return FILES_SUFFIX.sub("", str(message.get("content") or ""))


def history_blocks(messages: list[dict[str, Any]]) -> list[Block]:
    blocks: list[Block] = []
    tools: dict[str, ToolBlock] = {}
    for m in messages:
        role, meta = m.get("role"), m.get("metadata") or {}
        if role == "user":
            files = [str(f.get("name", "")) for f in meta.get("files") or [] if isinstance(f, dict)]
            blocks.append(UserBlock(user_text(m), files, len(m.get("images") or [])))
        elif role == "assistant" and m.get("is_compression"):
            before, after = meta.get("messages_before"), meta.get("messages_after")
            detail = f": {before} → {after} messages" if before is not None else ""
            blocks.append(
                NoticeBlock(f"⇣ context compressed{detail} (earlier ones were summarised)", "magenta")
            )
        elif role == "assistant" and m.get("is_plan"):
            blocks.append(PlanBlock(str(m.get("content") or "")))
        elif role == "assistant" and isinstance(meta.get("error"), dict):
            blocks.append(NoticeBlock(f"✗ error: {meta['error'].get('message', '')}", "bold red"))
        elif role == "assistant":
            if m.get("thinking"):
                blocks.append(ThinkingBlock(str(m["thinking"]), done=True))
            if m.get("content"):
                blocks.append(TextBlock(str(m["content"]), done=True))
            for call in m.get("tool_calls") or []:
                block = ToolBlock(
                    str(call.get("name", "tool")), call.get("arguments"), str(call.get("id", ""))
                )
                tools[block.call_id] = block
                blocks.append(block)
            if m.get("stopped"):
                blocks.append(NoticeBlock("■ stopped", "yellow"))
            elif meta.get("finish_reason") == "length" and not m.get("tool_calls"):  # parts joined already
                blocks.append(NoticeBlock(CUT_OFF, "yellow"))
        elif role == "tool":
            found = tools.get(str(m.get("tool_call_id", "")))
            if found is None:
                found = ToolBlock(str(m.get("name") or "tool"))
                blocks.append(found)
            found.result = str(m.get("content") or "")
            found.success = meta.get("status", "ok") == "ok"
            page = meta.get("page")
            if isinstance(page, dict) and page.get("url"):
                found.page = (" ".join(str(page.get("title") or "").split()), str(page["url"]))
    for block in tools.values():
        if block.result is None:
            block.result = "(no result stored)"
    return blocks


def last_turn_start(messages: list[dict[str, Any]], turns: int) -> int:
    """The index where the last `turns` exchanges begin (at a user message)."""
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    return starts[-turns] if len(starts) >= turns else 0


def holds(message: dict[str, Any], message_id: str) -> bool:
    """Whether the shown `message` is stored message `message_id` (or, an answer joined from
    continuations, has it as one of its parts)."""
    parts = (message.get("metadata") or {}).get("parts") or []
    return message.get("id") == message_id or message_id in parts


def spans(messages: list[dict[str, Any]], turns: int, at: str | None = None) -> list[tuple[int, int]]:
    """The [start, end) ranges of `messages` that opening a session draws: the last `turns`
    exchanges, and first the exchange of message `at` (a search hit) when it is older than those."""
    start = last_turn_start(messages, turns)
    found = next((i for i, m in enumerate(messages) if holds(m, at)), None) if at else None
    if found is None or found >= start:
        return [(start, len(messages))]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    first = max((i for i in users if i <= found), default=0)
    end = min((i for i in users if i > found), default=len(messages))
    return [(first, len(messages))] if end >= start else [(first, end), (start, len(messages))]


def final_answer(messages: list[dict[str, Any]]) -> str:
    """The latest turn's last answer text (after the last user message), '' when it has none."""
    for m in reversed(messages):
        if m.get("role") == "user":
            break
        meta = m.get("metadata") or {}
        if (
            m.get("role") == "assistant"
            and not m.get("is_plan")
            and not meta.get("error")
            and m.get("content")
        ):
            return str(m["content"])
    return ""
