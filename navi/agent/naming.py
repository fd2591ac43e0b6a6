"""Naming a session after its first exchange: a short title from the model, or from the words."""

from __future__ import annotations

from navi import prompts
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.errors import LLMError
from navi.llm.messages import Message

MAX_TITLE = 60


def fallback_title(user_text: str) -> str:
    words = " ".join(user_text.split())
    if len(words) <= 40:
        return words or "New conversation"
    return words[:40].rsplit(" ", 1)[0] + "…"


def clean_title(raw: str) -> str:
    title = raw.strip().splitlines()[0] if raw.strip() else ""
    title = title.strip().strip("\"'`*#").removeprefix("Title:").strip().rstrip(".")
    return title[:MAX_TITLE].strip()


async def name_session(llm: LLMBackend, model: str, user_text: str, answer: str) -> str:
    exchange = f"User: {user_text[:1500]}\n\nAssistant: {answer[:1500]}"
    try:
        result = await llm.complete(
            [Message.system(prompts.load("naming")), Message.user(exchange)],
            CallOptions(model=model, temperature=0.2, think=False, max_tokens=32),
        )
    except LLMError:
        return fallback_title(user_text)
    return clean_title(result.text) or fallback_title(user_text)
