"""The research loop: a `Research` turn (navi/agent/turns.py) answered by plan → search → read →
notes → condense → report, instead of the tool loop.

1. **Plan**: one model call turns the question into at most `max_questions` sub-questions (a
   numbered list; the question itself when the answer has none). It is made before any page is
   read, so nothing a page says can change it; it is stored as the turn's plan (`plan_ready`).
2. For each sub-question, **search**: `web_search` (when on) and `search_documents` (when the
   tools are there) — each a step, as any tool call: `tool_started`/`tool_call`, approvals, stop.
3. **Read**: the best candidates not read yet (URLs the question names first, then search results
   and the links of pages read, ranked by the words they share with the sub-question), up to
   `per_question` a sub-question and `max_sources` in all, each through `web_view`, its text cut
   to the window's source budget.
4. **Notes**: one model call per source, the source quoted in a `<source>` block that says it is
   material, not instructions; its lines are tagged with the source's number.
5. **Condense** the notes when they outgrow their budget (a model call, or a mechanical cut when
   its answer is unusable), so no prompt ever holds more than one source and the notes.
6. **Report**: one model call on the notes; each `[n]` is checked to name a source read that gave
   notes (others are taken out), the numbered sources are listed, and the report is kept as a
   Markdown file in the session's folder, named on the answer (`MessageMeta.files`).

Every prompt fits the run's window: `Budgets.of` splits it between the prompt's fixed part, the
source or notes, and the call's token cap. `Status(phase="researching")` says which step runs (the
jobs list shows it as the job's latest step) and, from the first source on, how many were read.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from navi import prompts, runctx
from navi.agent.binding import RunBinder
from navi.agent.events import AgentEvent, ErrorEvent, PlanReady, Status, StreamEnd, TurnUsage
from navi.agent.persistence import RunWriter
from navi.agent.research import notes as notebook
from navi.agent.research.report import checked, document, file_name, save, save_pdf
from navi.agent.research.sources import (
    SOURCE_CLOSE,
    SOURCE_OPEN,
    Candidate,
    Source,
    cut,
    links,
    named_urls,
    quoted,
    ranked,
    words,
)
from navi.agent.retry import record_failure
from navi.agent.run import RunState
from navi.agent.tool_batch import ToolRunner
from navi.llm.base import CallOptions
from navi.llm.errors import LLMError
from navi.llm.messages import Message, ToolCall
from navi.llm.meta import FileRef, MessageMeta
from navi.llm.tokens import (
    CHARS_PER_TOKEN,
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_tokens,
)
from navi.logging import get_logger
from navi.profiles.base import AgentProfile
from navi.sessions.models import Session
from navi.tools.base import ToolResult
from navi.tools.registry import ToolRegistry

log = get_logger(__name__)

TOOLS = ("web_search", "web_view", "search_documents")
QUESTION_CHARS = 800  # of the question, in each prompt
TEMPERATURE = 0.2
POOL_MAX = 300  # candidates kept
_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$")


@dataclass(frozen=True)
class ResearchConfig:
    max_questions: int = 3  # sub-questions of the plan
    max_sources: int = 8  # sources read, in all
    per_question: int = 3  # sources read for one sub-question
    source_tokens: int = 1500  # most of one source a notes call reads
    notes_tokens: int = 400  # notes condensed beyond this
    max_tokens_plan: int = 120
    max_tokens_notes: int = 200
    max_tokens_report: int = 800
    note_lines: int = 6  # lines of notes from one source
    web_search: bool = True  # False: only the URLs the question names, their links, and documents
    files_dir: str | None = None  # where sessions' files are (SESSION_FILES_DIR); None: no file


@dataclass(frozen=True)
class Budgets:
    """The window split for each call (tokens): a tenth and a bit kept free for the estimate's
    error, a fixed part for the prompt's instructions, question and plan, and the rest."""

    source: int
    notes: int
    plan_out: int
    notes_out: int
    condense_out: int
    report_out: int

    @classmethod
    def of(cls, config: ResearchConfig, window: int, fixed: int) -> Budgets:
        room = window - window // 8 - 64 - fixed
        report_out = min(config.max_tokens_report, max(64, room // 4))  # the caps asked win
        notes_out = min(config.max_tokens_notes, max(32, room // 8))
        notes = min(config.notes_tokens, room - report_out, (room - notes_out) * 2 // 3)
        return cls(
            source=max(100, min(config.source_tokens, room - notes_out)),
            notes=max(100, notes),
            plan_out=min(config.max_tokens_plan, max(32, room // 8)),
            notes_out=notes_out,
            condense_out=max(48, notes // 2),
            report_out=report_out,
        )


class Researcher:
    def __init__(
        self, config: ResearchConfig, num_ctx: int, tools: ToolRegistry, runner: ToolRunner, binder: RunBinder
    ) -> None:
        self.config = config
        self.num_ctx = num_ctx
        self.tools = tools
        self.runner = runner
        self.writer: RunWriter = runner.writer
        self.binder = binder

    async def turn(
        self, session: Session, profile: AgentProfile, ctx: runctx.RunContext, user: Message
    ) -> AsyncGenerator[AgentEvent, None]:
        """The research of `user`'s question, stored already as the last message of `session`.
        A model that fails ends it with the error, kept in the display history as a failed turn's."""
        try:
            run = await self.binder.new_run(
                ctx, profile, list(session.context), persistent=True, stream=False
            )
        except LLMError as exc:
            yield await record_failure(self.writer.sessions, session.id, user, ErrorEvent.of(exc))
            return
        run.counted(session.context_token_count or run.fixed + estimate_messages_tokens(run.context))
        study = _Study(self, run, (user.content or "").strip())
        try:
            async for event in study.events():
                yield event
        except LLMError as exc:
            await self.writer.flush(run)
            yield await record_failure(self.writer.sessions, session.id, user, ErrorEvent.of(exc))
        finally:
            await self.writer.flush(run)


class _Study:
    """One research: its plan, the candidates, the sources read and the notes."""

    def __init__(self, researcher: Researcher, run: RunState, question: str) -> None:
        self.r = researcher
        self.config = researcher.config
        self.run = run
        self.question = question
        self.asked = " ".join(question.split())[:QUESTION_CHARS]
        names = [n for n in TOOLS if researcher.tools.get(n) is not None]
        self.offered = researcher.tools.view(names)
        self.plan: list[str] = []
        self.pool: list[Candidate] = named_urls(question)
        self.tried: set[str] = set()
        self.sources: list[Source] = []
        self.notes: list[str] = []
        self.budgets = Budgets.of(self.config, run.window, self._fixed())
        self.largest = 0  # the largest prompt sent (estimated tokens), for the log

    def _fixed(self) -> int:
        longest = max(
            len(prompts.load(n)) for n in ("research_notes", "research_report", "research_condense")
        )
        plan = self.config.max_questions * 40
        listing = self.config.max_sources * 30
        return int(longest / CHARS_PER_TOKEN) + estimate_tokens(self.asked) + plan + listing + 60

    async def events(self) -> AsyncIterator[AgentEvent]:
        yield Status(phase="researching", detail="planning the sub-questions")
        self.plan = await self._plan()
        text = "\n".join(f"{i}. {q}" for i, q in enumerate(self.plan, 1))
        plan = Message.assistant(text, is_plan=True)
        await self.r.writer.save(self.run, display=[plan], context=[plan])
        self.run.grew(estimate_message_tokens(plan))
        yield PlanReady(plan=text)
        for i, sub in enumerate(self.plan, 1):
            if len(self.sources) >= self.config.max_sources:
                break
            yield Status(phase="researching", detail=f"sub-question {i}/{len(self.plan)}: {sub}"[:200])
            async for event in self._search(sub):
                yield event
            wanted = words(sub) | words(self.asked)
            for _ in range(self.config.per_question):
                pick = ranked(self.pool, wanted, self.tried, 1)
                if not pick or len(self.sources) >= self.config.max_sources:
                    break
                async for event in self._read(pick[0]):
                    yield event
        yield Status(
            phase="researching",
            detail=f"writing the report from {len(self.sources)} sources",
            sources=len(self.sources),
        )
        async for event in self._report():
            yield event

    # --- the model's parts -----------------------------------------------------------------------
    async def _ask(self, system: str, prompt: str, max_tokens: int) -> str:
        messages = [Message.system(system), Message.user(prompt)]
        self.largest = max(self.largest, sum(estimate_message_tokens(m) for m in messages) + max_tokens)
        options = CallOptions(
            model=self.run.model,
            temperature=TEMPERATURE,
            think=False,
            num_ctx=self.r.num_ctx,
            max_tokens=max_tokens,
            kind="research",
        )
        completion = await self.run.llm.complete(messages, options)
        self.run.spent_prompt += completion.usage.prompt_tokens
        self.run.spent_completion += completion.usage.completion_tokens
        self.run.spent_estimated = self.run.spent_estimated or completion.usage.estimated
        return completion.text

    async def _plan(self) -> list[str]:
        system = prompts.load("research_plan").replace("{count}", str(self.config.max_questions))
        reply = await self._ask(system, f"Research question: {self.asked}", self.budgets.plan_out)
        found: list[str] = []
        for line in reply.splitlines():
            match = _NUMBERED.match(line)
            sub = " ".join(match.group(1).split()).strip("*_ ")[:200] if match else ""
            if len(sub) > 2 and sub.lower() not in (q.lower() for q in found):
                found.append(sub)
        return found[: self.config.max_questions] or [self.asked[:200]]

    def _context(self) -> str:
        plan = "\n".join(f"- {q}" for q in self.plan)
        return f"Research question: {self.asked}\nSub-questions:\n{plan}"

    async def _note(self, source: Source) -> None:
        system = prompts.load("research_notes").replace("{count}", str(self.config.note_lines))
        prompt = (
            f"{self._context()}\n\nSource [{source.n}]: {quoted(source.label)[:300]}\n"
            f"{SOURCE_OPEN}\n{quoted(source.text)}\n{SOURCE_CLOSE}\n\n"
            f"The notes from source [{source.n}], or NONE:"
        )
        reply = await self._ask(system, prompt, self.budgets.notes_out)
        source.notes = notebook.of_source(reply, source.n, self.config.note_lines)
        self.notes += source.notes

    async def _condense(self) -> None:
        system = prompts.load("research_condense")
        prompt = f"{self._context()}\n\nNotes:\n" + "\n".join(self.notes) + "\n\nThe condensed notes:"
        reply = await self._ask(system, prompt, self.budgets.condense_out)
        lines = notebook.condensed(reply, {s.n for s in self.sources})
        target = self.budgets.notes * 2 // 3
        if not lines or notebook.size(lines) >= notebook.size(self.notes):
            lines = self.notes  # the model's answer is no shorter: cut instead
        self.notes = notebook.trimmed(lines, target) if notebook.size(lines) > target else lines

    async def _report(self) -> AsyncIterator[AgentEvent]:
        used = [s for s in self.sources if s.notes]
        if used and self.notes:
            listing = "\n".join(f"[{s.n}] {quoted(s.title)[:80]}" for s in used)
            prompt = (
                f"{self._context()}\n\nNotes:\n"
                + "\n".join(self.notes)
                + f"\n\nSources:\n{listing}\n\nThe report:"
            )
            reply = await self._ask(prompts.load("research_report"), prompt, self.budgets.report_out)
        else:
            reply = "None of the sources read says anything about the question."
        text = document(self.question, checked(reply, self.sources), self.sources, self.plan)
        meta = MessageMeta()
        if self.config.files_dir:
            folder = Path(self.config.files_dir) / self.run.ctx.session_id
            try:
                path = await save(folder, file_name(self.asked), text)
                meta.files = [FileRef(name=path.name, path=str(path))]
                pdf = await save_pdf(folder, path, text, f"Research: {self.asked[:200]}")
                meta.files.append(FileRef(name=pdf.name, path=str(pdf)))
            except Exception as exc:  # the report is the answer still (a PDF that failed: the .md)
                log.warning("research.file_not_saved", error=f"{type(exc).__name__}: {exc}")
        answer = Message.assistant(text, metadata=meta)
        await self.r.writer.save(self.run, display=[answer], context=[answer])
        self.run.grew(estimate_message_tokens(answer))
        self.run.final_text = text
        log.info(
            "research.done",
            sources=len(self.sources),
            cited=len(used),
            largest_prompt=self.largest,
            window=self.run.window,
        )
        yield StreamEnd(
            content=text,
            context_tokens=self.run.size,
            max_context_tokens=self.run.window,
            usage=TurnUsage(
                prompt_tokens=self.run.spent_prompt,
                completion_tokens=self.run.spent_completion,
                estimated=self.run.spent_estimated,
            ),
        )

    # --- the tools' parts ------------------------------------------------------------------------
    async def _tool(
        self, name: str, args: dict[str, object], out: list[ToolResult]
    ) -> AsyncIterator[AgentEvent]:
        call = ToolCall(name=name, arguments=dict(args))
        asked = Message.assistant("", tool_calls=[call])
        await self.r.writer.save(self.run, display=[asked], context=[asked])
        self.run.grew(estimate_message_tokens(asked))
        async for event in self.r.runner.batch(self.run, [call], self.offered, [], results=out):
            yield event

    async def _search(self, sub: str) -> AsyncIterator[AgentEvent]:
        if self.config.web_search and "web_search" in self.offered:
            out: list[ToolResult] = []
            async for event in self._tool("web_search", {"query": sub[:500], "max_results": 5}, out):
                yield event
            if out and out[0].success:
                for item in out[0].metadata.get("results") or []:
                    if isinstance(item, dict) and item.get("url"):
                        self._add(
                            Candidate(
                                str(item["url"]), str(item.get("title", "")), str(item.get("snippet", ""))
                            )
                        )
        if "search_documents" in self.offered and len(self.sources) < self.config.max_sources:
            out = []
            async for event in self._tool("search_documents", {"query": sub[:500], "limit": 3}, out):
                yield event
            if out and out[0].success and not out[0].output.startswith("No passage"):
                source = Source(len(self.sources) + 1, "Your documents", f"your documents: {sub}"[:200])
                source.text = cut(out[0].output, self.budgets.source)
                async for event in self._noted(source):
                    yield event

    async def _read(self, candidate: Candidate) -> AsyncIterator[AgentEvent]:
        self.tried.add(candidate.url)
        if "web_view" not in self.offered:
            return
        chars = max(500, min(100_000, int(self.budgets.source * CHARS_PER_TOKEN * 1.5)))
        out: list[ToolResult] = []
        async for event in self._tool(
            "web_view", {"url": candidate.url, "max_chars": chars, "include_links": True}, out
        ):
            yield event
        if not out or not out[0].success or out[0].metadata.get("kind") == "binary":
            return
        result = out[0]
        where = str(result.metadata.get("url") or candidate.url)
        self.tried.add(where)
        text, found = links(result.output)
        for link in found:
            self._add(link)
        title = str(result.metadata.get("title") or candidate.title or where)[:200]
        source = Source(len(self.sources) + 1, title, where, cut(text, self.budgets.source))
        async for event in self._noted(source):
            yield event

    async def _noted(self, source: Source) -> AsyncIterator[AgentEvent]:
        self.sources.append(source)
        yield Status(
            phase="researching",
            detail=f"notes on [{source.n}] {source.title}"[:200],
            sources=len(self.sources),
        )
        await self._note(source)
        if notebook.size(self.notes) > self.budgets.notes:
            yield Status(phase="researching", detail="condensing the notes")
            await self._condense()

    def _add(self, candidate: Candidate) -> None:
        candidate.url = candidate.url.split("#", 1)[0]
        if len(self.pool) < POOL_MAX and candidate.url.startswith(("http://", "https://")):
            self.pool.append(candidate)
