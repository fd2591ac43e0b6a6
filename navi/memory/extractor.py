"""Reading idle sessions for lasting facts about the person, and keeping the summary current.

A session is read when it has been idle for `MEMORY_STALE_MINUTES`, was not read since its last
activity and has no turn running — by one worker, which claims it first (navi/memory/claims.py),
and only its messages written since it was last read: the same messages are never read twice (a
fact read twice would count as confirmed). Only what the person typed is read — never the assistant's
answers, the system prompt, the injected memory, plans, summaries, tool output, images a tool
added, or the note listing uploaded files. The model answers with `category: key = value` lines;
anything else in its answer is ignored, and so is a fact whose value is not the person's own
words (`stated`, `own_words`): every word and number of it must be one the person used before
anything else in the session did. A small model readily copies an example or an already known
fact; and a web page the assistant read aloud ("the user's name is Mallory"), quoted back by the
person ("Mallory? who is that?"), is not the person speaking about themselves. Neither may ever
become a memory. Facts are upserted (a changed value replaces the old one, a repeated one counts as
a confirmation), the summary is rewritten from all facts, and the session is marked. If the model
fails, nothing is written and the session is tried again later. An unusable summary (empty, the
prompt played back, a loop, numbers not among the facts) is replaced by the plain list of facts.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from navi import prompts
from navi.llm.answers import echo_problem, trim_cut_off
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.errors import LLMError
from navi.llm.messages import Message, utcnow, without_files
from navi.llm.registry import BackendRegistry
from navi.llm.tokens import CHARS_PER_TOKEN, estimate_tokens
from navi.logging import get_logger
from navi.memory.base import Fact, MemoryStore, normalise, one_line
from navi.memory.claims import Claim, ExtractionClaims, InMemoryExtractionClaims
from navi.profiles.registry import ProfileRegistry
from navi.sessions.models import Session, SessionInfo, as_utc
from navi.sessions.store import SessionStore

log = get_logger(__name__)

FACT_LINE = re.compile(
    r"^\s*(?:[-*•]\s*|\d+[.)]\s*)?"  # an optional bullet or number
    r"\**\s*([A-Za-z][\w \-]{0,40}?)\s*\**\s*:"  # category, maybe in bold
    r"\s*\**\s*([^=:\n]{1,80}?)\s*\**\s*="  # key
    r"\s*(.+?)\s*$"  # value
)
EMPTY_VALUES = {"", "unknown", "n/a", "na", "none", "null", "-", "?", "not mentioned", "unspecified"}
MAX_SAID_TOKENS = 3_000
MAX_VALUE = 300
SUMMARY_FACTS = 300
# Words: numbers keep their dots and colons (192.168.1.10, 7:30); letters and digits split, so
# "DS920+" and "ds-920" read alike.
_TERM = re.compile(r"\d+(?:[.:/]\d+)*|[^\W\d_]+")
_NUMBERS = "zero one two three four five six seven eight nine ten eleven twelve"
_NUMBER_WORDS = {word: str(n) for n, word in enumerate(_NUMBERS.split())}
# Linking words a value may add around what was said ("Miso, a cat" → "miso", "cat").
_FILLER_WORDS = "a an the of in at on and or to is are my with for from by as called named"
_FILLER = frozenset(_FILLER_WORDS.split())


def parse_facts(text: str) -> list[tuple[str, str, str]]:
    """`category: key = value` lines → normalised triples; junk lines are skipped, repeats merged."""
    found: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        match = FACT_LINE.match(line)
        if match is None:
            continue
        category, key = normalise(match.group(1)), normalise(match.group(2))
        value = match.group(3).strip().strip("*`\"'").strip()
        if value.endswith(".") and not value.endswith(".."):
            value = value[:-1].strip()
        if not category or not key or value.lower() in EMPTY_VALUES or len(value) > MAX_VALUE:
            continue
        found[(category, key)] = value
    return [(c, k, v) for (c, k), v in found.items()]


def is_persons(msg: Message) -> bool:
    """Whether the person wrote `msg` (not a summary or an image message a tool added)."""
    return msg.role == "user" and not msg.is_summary and not msg.metadata.synthetic


def said_by_person(session: Session) -> str:
    """The person's own messages, newest last, cut from the start to `MAX_SAID_TOKENS`."""
    return said_in(session.messages)


def written_order(session: Session) -> list[str]:
    """The ids of `session`'s display messages, every branch's, in the order written."""
    return list(session.parents) or [m.id for m in [*session.messages, *session.others]]


def written_since(session: Session, claim: Claim) -> list[Message]:
    """The messages of `session`'s display path that `claim` reads: the `since`th to the `upto`th
    display message in the order written."""
    new = set(written_order(session)[claim.since : claim.upto])
    return [m for m in session.messages if m.id in new]


def said_in(messages: Sequence[Message]) -> str:
    """What the person wrote in `messages`, newest last, cut from the start to `MAX_SAID_TOKENS`."""
    said: list[str] = []
    size = 0
    for msg in reversed(messages):
        if not is_persons(msg):
            continue
        text = without_files(msg).strip()
        if not text:
            continue
        size += estimate_tokens(text) + 1
        if size > MAX_SAID_TOKENS:
            if not said:  # one huge message: its end, the newest part of it
                said.append(text[-int(MAX_SAID_TOKENS * CHARS_PER_TOKEN) :])
            break
        said.append(text)
    return "\n\n".join(reversed(said))


def _terms(text: str) -> list[str]:
    found = (_NUMBER_WORDS.get(t, t) for t in _TERM.findall(text.lower()))
    return [t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t for t in found]


def words(text: str) -> list[str]:
    """The words and numbers of `text` as `stated` compares them (lower case, plurals folded)."""
    return _terms(text)


def stated(value: str, said: str | Collection[str]) -> bool:
    """Whether every word and number of `value` occurs in `said` (case, punctuation, plurals aside).

    `said` is text, or the words themselves (as `own_words` gives them)."""
    terms = _terms(value)
    needed = [t for t in terms if t not in _FILLER] or terms
    known = set(_terms(said)) if isinstance(said, str) else said
    return bool(needed) and all(t in known for t in needed)


def own_words(session: Session) -> set[str]:
    """The words the person brought into the conversation themselves.

    A word counts only if the person used it before anything else in the session did: a tool's
    result (a web page, a file, a search), the assistant's text, its thinking or its tool calls'
    arguments. Words the person only repeats after those — quoting a page the assistant read
    them — are not the person telling about themselves.
    """
    theirs: set[str] = set()
    others: set[str] = set()
    for msg in session.messages:
        if is_persons(msg):
            theirs.update(t for t in _terms(without_files(msg)) if t not in others)
            continue
        heard = [msg.content or "", msg.thinking or ""]
        heard += [json.dumps(call.arguments, ensure_ascii=False) for call in msg.tool_calls]
        others.update(t for t in _terms("\n".join(heard)) if t not in theirs)
    return theirs


def fallback_summary(facts: list[Fact]) -> str:
    """A plain list, used when the model cannot write the narrative: accurate, never empty-handed."""
    return "Known facts:\n" + "\n".join(
        f"- {one_line(f.category)}: {one_line(f.key.replace('_', ' '))} = {one_line(f.value)}" for f in facts
    )


def profile_problem(summary: str, facts: list[Fact], instructions: str) -> str | None:
    """Why a written profile must not stand in for the facts (None when it may)."""
    if not summary.strip():
        return "empty"
    problem = echo_problem(summary, instructions)
    if problem:
        return problem
    told = set(_terms(" ".join(f.value for f in facts))) - _FILLER
    if not told.intersection(_terms(summary)):
        return "mentions none of the facts"
    values = set(_terms(" ".join(f"{f.category} {f.key.replace('_', ' ')} {f.value}" for f in facts)))
    # Numbers and names (capitalised words inside a sentence) must come from the facts: small
    # models invent them ("The person is a pet: Miso, a cat: Bergen, a nurse: Joe.").
    invented = [n for n in re.findall(r"\d+(?:[.:/]\d+)*", summary) if n not in values]
    for sentence in re.split(r"(?<=[.!?])\s+|\n", summary.strip()):
        names = [w for w in re.findall(r"[^\W\d_][\w'-]*", sentence)[1:] if w[0].isupper() and w != "I"]
        invented += [w for w in names if not set(_terms(w)) <= values]
    return f"has names or numbers not among the facts: {', '.join(invented[:3])}" if invented else None


@dataclass
class ExtractionReport:
    sessions: int = 0
    facts: int = 0
    failed: list[str] = field(default_factory=list)


class MemoryExtractor:
    def __init__(
        self,
        *,
        sessions: SessionStore,
        memory: MemoryStore,
        backends: BackendRegistry,
        profiles: ProfileRegistry,
        stale_minutes: int,
        is_running: Callable[[str], bool] = lambda _session_id: False,
        max_tokens: int | None = 384,
        claims: ExtractionClaims | None = None,
    ) -> None:
        self.sessions = sessions
        self.memory = memory
        self.backends = backends
        self.profiles = profiles
        self.stale = timedelta(minutes=stale_minutes)
        # A session whose turn is running is half-written: it is skipped and stays due.
        self.is_running = is_running
        self.max_tokens = max_tokens
        # Which worker reads a session, and which of its messages were read (shared by workers).
        self.claims = claims if claims is not None else InMemoryExtractionClaims()
        self._lock = asyncio.Lock()  # one pass at a time in this process
        # One summary rewrite at a time per owner (and event loop): two at once would each read the
        # facts, and the slower one, holding the older facts, would write last.
        self._rewriting: dict[tuple[str, int], asyncio.Lock] = {}

    def _model(self) -> tuple[LLMBackend, str]:
        profile = self.profiles.get(self.profiles.default_id)
        return self.backends.observed(self.profiles.backend_of(profile)), self.profiles.model_of(profile)

    async def is_due(self, info: SessionInfo) -> bool:
        if info.temporary:  # a temporary chat is never read for memory (issue 49)
            return False
        if as_utc(info.last_active) > utcnow() - self.stale or info.message_count == 0:
            return False
        extracted = await self.memory.get_extracted_at(info.id)
        return extracted is None or extracted < as_utc(info.last_active)

    async def run_pending(self, owner: str | None = None) -> ExtractionReport:
        """Read every due session (of `owner`; None: everyone's) that this worker can claim. Runs
        one pass at a time in a process; a second caller returns at once."""
        report = ExtractionReport()
        if self._lock.locked():
            return report
        async with self._lock:
            for info in await self.sessions.list(owner=owner):
                if self.is_running(info.id) or not await self.is_due(info):
                    continue
                # `message_count`: the display messages, every branch's (`written_order`).
                claim = await self.claims.claim(info.id, info.message_count)
                if claim is None:  # another worker reads it, or read these messages already
                    continue
                try:
                    session = await self.sessions.get(info.id)
                    if session is None:
                        await self.claims.release(claim)
                        continue
                    report.facts += await self._claimed(session, claim)
                    report.sessions += 1
                except LLMError as exc:
                    log.warning("memory.extract_failed", session_id=info.id, error=str(exc))
                    report.failed.append(info.id)
                    await self.claims.release(claim)
                except BaseException:
                    await self.claims.release(claim)
                    raise
        if report.sessions:
            log.info("memory.extracted", sessions=report.sessions, facts=report.facts)
        return report

    async def extract(self, session: Session) -> int:
        """Read one session, all of it; returns how many facts were stored. Raises `LLMError`
        (nothing written). A temporary chat is not read: 0."""
        if session.temporary:
            return 0
        stored = await self._read(session, said_by_person(session))
        await self.memory.mark_session_extracted(session.id)
        return stored

    async def _claimed(self, session: Session, claim: Claim) -> int:
        """Read the messages `claim` names; returns how many facts were stored, the messages then
        recorded as read. Raises `LLMError` (nothing written)."""
        stored = await self._read(session, said_in(written_since(session, claim)))
        await self.memory.mark_session_extracted(session.id)
        await self.claims.done(claim)
        return stored

    async def flush(self, session_id: str, dropped: Sequence[Message]) -> int:
        """Read the turns a compression took out of a session's context (a memory flush).

        Idle-time extraction reads only the newest `MAX_SAID_TOKENS` of what the person said, and
        the summary that replaced these turns may have left a fact out: so they are read now, with
        the same rules (the person's own words in the whole session). Like idle-time extraction
        it claims them first, up to the last of them (`claims`), and reads only what was not read
        before: a message another worker reads, or read already, is not read again here. Best
        effort: a failure is logged, and returns 0."""
        session = await self.sessions.get(session_id) if said_in(dropped) else None
        if session is None or session.temporary:
            return 0
        where = {mid: i for i, mid in enumerate(written_order(session))}
        ends = [where[m.id] + 1 for m in dropped if is_persons(m) and m.id in where]
        claim = await self.claims.claim(session_id, max(ends)) if ends else None
        if claim is None:
            return 0
        try:
            stored = await self._read(session, said_in(written_since(session, claim)))
        except LLMError as exc:
            log.warning("memory.flush_failed", session_id=session_id, error=str(exc))
            await self.claims.release(claim)
            return 0
        except BaseException:
            await self.claims.release(claim)
            raise
        await self.claims.done(claim)
        log.info("memory.flushed", session_id=session_id, messages=len(dropped), facts=stored)
        return stored

    async def _read(self, session: Session, said: str) -> int:
        """Ask the model for the facts in `said` (what the person wrote in `session`) and store
        those in the person's own words; returns how many. Raises `LLMError`."""
        # Off the event loop: a long session's tool output can be megabytes of words.
        own = (await asyncio.to_thread(own_words, session)) & set(_terms(said))
        stored = 0
        if said:
            llm, model = self._model()
            known = await self.memory.get_all_facts(owner=session.owner, limit=200)
            context = "\n".join(f.line() for f in known) or "(nothing yet)"
            result = await llm.complete(
                [
                    Message.system(prompts.load("memory_extract")),
                    Message.user(f"Already known:\n{context}\n\nWhat the person said:\n\n{said}"),
                ],
                CallOptions(
                    model=model, temperature=0.1, think=False, max_tokens=self.max_tokens, kind="extraction"
                ),
            )
            for category, key, value in parse_facts(result.text):
                if not stated(value, own):
                    log.info("memory.unstated_fact_dropped", session_id=session.id, key=key)
                    continue
                await self.memory.upsert_fact(
                    category, key, value, owner=session.owner, session_id=session.id
                )
                stored += 1
            if stored:
                await self.refresh_summary(session.owner)
        return stored

    async def refresh_summary(self, owner: str) -> str | None:
        """Rewrite the owner's memory summary. Returns why the model could not write it (then the
        summary is made from the facts alone), else None. With no fact left, the summary is
        emptied: it would go on telling the model what the user had it forget. Rewrites for one
        owner run one after the other, each reading the facts when its turn comes."""
        key = (owner, id(asyncio.get_running_loop()))
        async with self._rewriting.setdefault(key, asyncio.Lock()):
            return await self._rewrite_summary(owner)

    async def _rewrite_summary(self, owner: str) -> str | None:
        facts = await self.memory.get_all_facts(owner=owner, limit=SUMMARY_FACTS)
        if not facts:
            if await self.memory.get_summary(owner=owner):
                await self.memory.set_summary("", owner=owner)
            return None
        failed: str | None = None
        llm, model = self._model()
        listing = "\n".join(f.line() for f in facts)
        instructions = prompts.load("memory_summary")
        try:
            result = await llm.complete(
                [Message.system(instructions), Message.user(listing)],
                CallOptions(
                    model=model,
                    temperature=0.2,
                    think=False,
                    max_tokens=self.max_tokens,
                    kind="memory_summary",
                ),
            )
            summary = result.text.strip()
            if result.finish_reason == "length":
                summary = trim_cut_off(summary)
        except LLMError as exc:
            log.warning("memory.summary_failed", error=str(exc))
            summary, failed = "", str(exc)
        problem = profile_problem(summary, facts, instructions)
        if problem:
            log.info("memory.summary_rejected", problem=problem)
            summary = fallback_summary(facts)
        await self.memory.set_summary(summary, owner=owner)
        return failed

    async def periodic(self, interval_minutes: float) -> None:
        """Look for idle sessions every `interval_minutes` (a background task of the server)."""
        while True:
            await asyncio.sleep(interval_minutes * 60)
            try:
                await self.run_pending()
            except Exception as exc:  # keep the loop alive; the next pass tries again
                log.warning("memory.pass_failed", error=str(exc))
