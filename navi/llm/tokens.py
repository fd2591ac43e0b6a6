"""Token estimates, used only where a backend reports no count of its own.

The backends' counts (`prompt_eval_count`/`eval_count`, `usage`) are the truth; this estimate is a
deliberately cautious stand-in (about four characters per token, images at a flat cost) so that
context budgeting errs towards sending less, never more.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from navi.llm.messages import Message

CHARS_PER_TOKEN = 3.5
IMAGE_TOKENS = 768
MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def estimate_message_tokens(msg: Message) -> int:
    total = MESSAGE_OVERHEAD + estimate_tokens(msg.content or "")
    total += IMAGE_TOKENS * len(msg.images)
    for call in msg.tool_calls:
        total += estimate_tokens(call.name) + estimate_tokens(call.arguments_json())
    return total


def estimate_messages_tokens(messages: Iterable[Message]) -> int:
    return sum(estimate_message_tokens(m) for m in messages)
