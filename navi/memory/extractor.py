"""Reading idle sessions for lasting facts about the person, and keeping the summary current.

A session is read when it has been idle for `MEMORY_STALE_MINUTES` and was not read since its last
activity. Only what the person and the assistant said is read — never the system prompt, the
injected memory, plans, summaries or tool output. The model answers with `category: key = value`
lines; anything else in its answer is ignored. Facts are upserted (a changed value replaces the old
one, a repeated one counts as a confirmation), the summary is rewritten from all facts, and the
session is marked. If the model fails, nothing is written and the session is tried again later.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from datetime import timedelta

from navi import prompts
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.errors import LLMError
from navi.llm.messages import Message, utcnow
from navi.llm.registry import BackendRegistry
from navi.logging import get_logger
from navi.memory.base import Fact, MemoryStore, normalise
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
MAX_TRANSCRIPT = 24_000
MAX_VALUE = 300
SUMMARY_FACTS = 300


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


def transcript(session: Session) -> str:
    """The person's and the assistant's words only, newest last, capped from the start."""
    lines = []
    for msg in session.messages:
        if msg.role not in ("user", "assistant") or msg.is_plan or msg.is_summary or msg.is_compression:
            continue
        if msg.metadata.get("synthetic") or not (msg.content or "").strip():
            continue
        speaker = "Person" if msg.role == "user" else "Assistant"
        lines.append(f"{speaker}: {msg.content.strip()}")  # type: ignore[union-attr]
    text = "\n\n".join(lines)
    return text[-MAX_TRANSCRIPT:]


def fallback_summary(facts: list[Fact]) -> str:
    """A plain list, used when the model cannot write the narrative: accurate, never empty-handed."""
    return "Known facts:\n" + "\n".join(
        f"- {f.category}: {f.key.replace('_', ' ')} = {f.value}" for f in facts
    )


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
    ) -> None:
        self.sessions = sessions
        self.memory = memory
        self.backends = backends
        self.profiles = profiles
        self.stale = timedelta(minutes=stale_minutes)
        self._lock = asyncio.Lock()

    def _model(self) -> tuple[LLMBackend, str]:
        profile = self.profiles.get(self.profiles.default_id)
        return self.backends.get(self.profiles.backend_of(profile)), self.profiles.model_of(profile)

    async def is_due(self, info: SessionInfo) -> bool:
        if as_utc(info.last_active) > utcnow() - self.stale or info.message_count == 0:
            return False
        extracted = await self.memory.get_extracted_at(info.id)
        return extracted is None or extracted < as_utc(info.last_active)

    async def run_pending(self) -> ExtractionReport:
        """Read every due session. Runs one pass at a time; a second caller returns at once."""
        report = ExtractionReport()
        if self._lock.locked():
            return report
        async with self._lock:
            for info in await self.sessions.list():
                if not await self.is_due(info):
                    continue
                session = await self.sessions.get(info.id)
                if session is None:
                    continue
                try:
                    report.facts += await self.extract(session)
                    report.sessions += 1
                except LLMError as exc:
                    log.warning("memory.extract_failed", session_id=info.id, error=str(exc))
                    report.failed.append(info.id)
        if report.sessions:
            log.info("memory.extracted", sessions=report.sessions, facts=report.facts)
        return report

    async def extract(self, session: Session) -> int:
        """Read one session; returns how many facts were stored. Raises `LLMError` (nothing written)."""
        text = transcript(session)
        stored = 0
        if text:
            llm, model = self._model()
            known = await self.memory.get_all_facts(owner=session.owner, limit=200)
            context = "\n".join(f"{f.category}: {f.key} = {f.value}" for f in known) or "(nothing yet)"
            result = await llm.complete(
                [
                    Message.system(prompts.load("memory_extract")),
                    Message.user(f"Already known:\n{context}\n\nConversation:\n\n{text}"),
                ],
                CallOptions(model=model, temperature=0.1, think=False),
            )
            for category, key, value in parse_facts(result.text):
                await self.memory.upsert_fact(
                    category, key, value, owner=session.owner, session_id=session.id
                )
                stored += 1
            if stored:
                await self.refresh_summary(session.owner)
        await self.memory.mark_session_extracted(session.id)
        return stored

    async def refresh_summary(self, owner: str) -> None:
        facts = await self.memory.get_all_facts(owner=owner, limit=SUMMARY_FACTS)
        if not facts:
            return
        llm, model = self._model()
        listing = "\n".join(f"{f.category}: {f.key} = {f.value}" for f in facts)
        try:
            result = await llm.complete(
                [Message.system(prompts.load("memory_summary")), Message.user(listing)],
                CallOptions(model=model, temperature=0.2, think=False),
            )
            summary = result.text.strip()
        except LLMError as exc:
            log.warning("memory.summary_failed", error=str(exc))
            summary = ""
        await self.memory.set_summary(summary or fallback_summary(facts), owner=owner)

    async def periodic(self, interval_minutes: float) -> None:
        """Look for idle sessions every `interval_minutes` (a background task of the server)."""
        while True:
            await asyncio.sleep(interval_minutes * 60)
            try:
                await self.run_pending()
            except Exception as exc:  # keep the loop alive; the next pass tries again
                log.warning("memory.pass_failed", error=str(exc))
