"""Naming a session after its first exchange: a short title from the model, or from the words.

A small model's "title" is often no title: a list item, a quoted line with a `Title:` prefix, a
sentence cut by the token cap ("- If you are a user, you may be given a"), or the naming
instructions played back. `clean_title` strips the decoration and returns "" for anything that is
not a usable title; the session is then named from the user's own words (`fallback_title`).
"""

from __future__ import annotations

import re

from navi import prompts
from navi.llm.answers import overlap_share, repeats_itself, words
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.errors import LLMError
from navi.llm.messages import Message

MAX_TITLE = 60
MAX_WORDS = 10
TITLE_CUE = "Title of this conversation, 2 to 6 words:"
USER_PREVIEW = 600
ANSWER_PREVIEW = 400
# Words a finished title does not end on: a title ending on one was cut off mid-phrase.
_DANGLING_WORDS = """
    a an the of to and or but for with without from by at in on into about as than that which who
    whose this these those your my our their his her its you we they i he she it be is are was were
    been being am may might can could will would should shall must do does did have has had not if
    when while because so any some every each no more most very just also only
"""
DANGLING = frozenset(_DANGLING_WORDS.split())
_MARKER = re.compile(r"^(?:[-*•+>]\s*|\d+[.)]\s+|#+\s*)+")
_PREFIX = re.compile(
    r"^(?:(?:session|conversation|chat|suggested|short)\s+)?(?:title|name|topic|subject)\s*[:\-–—]\s*",
    re.IGNORECASE,
)
_SPEAKER = re.compile(r"^(?:user|assistant|person|system)\s*:", re.IGNORECASE)
_QUOTES = "\"'`“”‘’«»„"
_TRAILING = ".,;:!?…-–—/\\|"
# Openings of a reply that talks about the task instead of doing it.
_INSTRUCTION = re.compile(
    r"^(?:if you|you\b|your |as an ai|i |i'm|i am|i'll|sure|certainly|okay|ok\b|here is|here's|"
    r"this is|it is|it's|this conversation|the conversation|the title|a title|title of|give |answer |"
    r"reply |write |please )",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_CLAUSE_SEPARATORS = (": ", "; ", " - ", " – ", " — ", ", ")
_EMPTY_TITLES = {"title", "untitled", "no title", "none", "n a", "new conversation", "conversation", "chat"}


def fallback_title(user_text: str) -> str:
    """The first words of the user's message, without its decoration: list markers, quote marks
    and a `User:`/`Assistant:` speaker at the start of a line ("- milk\n- eggs" → "milk, eggs")."""
    lines, listed = [], False
    for raw in user_text.splitlines():
        line = raw.strip()
        bare = _MARKER.sub("", line)
        listed = listed or (bool(bare) and bare != line and not line.startswith(">"))
        bare = _SPEAKER.sub("", bare).replace("**", "").replace("__", "")
        bare = " ".join(bare.strip(_QUOTES + " \t").split())
        if bare:
            lines.append(bare)
    words_ = (", " if listed else " ").join(lines)
    if len(words_) <= 40:
        return words_ or "New conversation"
    return words_[:40].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _strip(line: str) -> str:
    """One line without list markers, markdown, a `Title:` prefix, quotes or end punctuation."""
    previous = None
    while line != previous:
        previous = line
        line = _MARKER.sub("", line.strip())
        line = line.replace("**", "").replace("__", "").strip("*_` \t")
        line = _PREFIX.sub("", line)
        line = line.strip(_QUOTES + " \t").rstrip(_TRAILING + " \t")
    return " ".join(line.split())


def _trim(title: str, *, cut: bool = False) -> str:
    """`title` without its dangling tail (and, when `cut`, its possibly half last word).

    "" when what is left has fewer than 2 good words: a fragment, not a title.
    """
    parts = title.split()
    if cut:
        parts = parts[:-1]
    trimmed = cut
    while parts and (not words(parts[-1]) or words(parts[-1])[-1] in DANGLING):
        parts.pop()
        trimmed = True
    if not trimmed:
        return title
    good = [w for w in words(" ".join(parts)) if w not in DANGLING]
    return " ".join(parts).rstrip(_TRAILING + " ") if len(good) >= 2 else ""


def _echoes(title: str, instructions: str) -> bool:
    """The title is the naming prompt played back, or a reply that talks about the task."""
    if _INSTRUCTION.match(title):
        return True
    ws = words(title)
    if len(ws) < 3:
        return f" {' '.join(ws)} " in f" {' '.join(words(instructions))} "
    return overlap_share(title, instructions) >= 0.6


def _first_part(title: str) -> str:
    """The first sentence; and of a line too long for a title, its first clause if that can be one."""
    title = _SENTENCE_END.split(title, maxsplit=1)[0].rstrip(_TRAILING + " ")
    if len(title.split()) <= MAX_WORDS and len(title) <= MAX_TITLE:
        return title
    for separator in _CLAUSE_SEPARATORS:
        head = title.split(separator, 1)[0].rstrip(_TRAILING + " ")
        if head != title and 2 <= len(head.split()) <= MAX_WORDS and len(head) <= MAX_TITLE:
            return head
    return title


def clean_title(raw: str, *, cut_off: bool = False) -> str:
    """A usable title from a model's answer, or "" when it has none.

    `cut_off` says the call ended at its token cap: if the title is the answer's last line, its
    last word may be half a word and is dropped with the dangling words before it.
    """
    instructions = prompts.load("naming")
    lines = [line for line in raw.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if _SPEAKER.match(line.strip()):
            return ""  # the model is writing the conversation on, not naming it
        title = _strip(line)
        if not words(title):
            continue  # a bare "Title:" or "---": the title may be on the next line
        if _echoes(title, instructions) or repeats_itself(title):
            return ""  # the instructions, a reply about the task, or a loop: not a title
        # A line that ends on a full stop or a closing quote was finished before the cap hit.
        cut = cut_off and index == len(lines) - 1 and not line.rstrip().endswith(tuple(".!?" + _QUOTES))
        head = _first_part(title)
        if head != title:
            title, cut = head, False  # what is kept ended before the cut
            if _echoes(title, instructions):
                return ""
        if len(title.split()) > MAX_WORDS:
            return ""  # a whole sentence, not a title
        if len(title) > MAX_TITLE:
            title, cut = title[:MAX_TITLE], True  # its last word may now be half a word
        title = _trim(title, cut=cut)
        return "" if " ".join(words(title)) in _EMPTY_TITLES else title
    return ""


async def name_session(
    llm: LLMBackend, model: str, user_text: str, answer: str, *, max_tokens: int = 24
) -> str:
    """A title for the session; never raises. `answer` may be empty (the first turn failed)."""
    # The task is asked again after the conversation: SmolLM2-135M otherwise answers the user's
    # question itself instead of naming it.
    exchange = f"Conversation:\nUser: {user_text[:USER_PREVIEW]}"
    if answer.strip():
        exchange += f"\nAssistant: {answer[:ANSWER_PREVIEW]}"
    exchange += f"\n\n{TITLE_CUE}"
    try:
        result = await llm.complete(
            [Message.system(prompts.load("naming")), Message.user(exchange)],
            CallOptions(model=model, temperature=0.2, think=False, max_tokens=max_tokens, kind="naming"),
        )
    except LLMError:
        return fallback_title(user_text)
    return clean_title(result.text, cut_off=result.finish_reason == "length") or fallback_title(user_text)
