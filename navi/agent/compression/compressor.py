"""The compressor: when a context is compressed, and one pass of it (a summary, or Navi's own
condensing when the model cannot summarise), with what it remembers per session.

The loop asks it before a model call (`in_turn.py`), the post-turn worker after an answer
(navi/agent/workers.py's `CompressionWorker`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from navi.agent.compression.condense import condense_context
from navi.agent.compression.continued import ConversationPrompt, compress_continuing
from navi.agent.compression.summary import (
    SUMMARY_IMAGES,
    CompressionResult,
    FutileCompressions,
    SummaryRejected,
    compress_context,
    note,
    shrank,
)
from navi.agent.events import ContextCompressed, Notice
from navi.llm.base import LLMBackend
from navi.llm.calls import CallStopped
from navi.llm.errors import LLMError
from navi.llm.messages import Message
from navi.llm.meta import MessageMeta
from navi.llm.tokens import estimate_messages_tokens
from navi.logging import get_logger
from navi.sessions.state import COMPRESSION, SessionState
from navi.sessions.store import SessionStore

log = get_logger(__name__)


@dataclass
class CompressionSettings:
    enabled: bool = True
    threshold: float = 0.8
    keep_recent: int = 10
    temperature: float = 0.3
    max_input_tokens: int = 3_000
    max_tokens: int = 768  # the cap of each summary call


@dataclass(frozen=True, kw_only=True)
class Pass:
    """How one compression pass goes: Navi's own condensing (`condense`, within `budget_tokens`)
    or a summary; the numbers of recent turns to keep, tried in order while the result is not
    `enough` (given the conversation's estimated tokens); the tools the context had disclosed,
    which the summary carries; and the conversation's prompt as the model server holds it cached
    (after an answer), which the summary then extends."""

    condense: bool
    keeps: Sequence[int]
    budget_tokens: int
    enough: Callable[[int], bool] = lambda _conversation: True
    disclosed: Sequence[str] = ()
    prompt: ConversationPrompt | None = None


def condense_budget(window: int) -> int:
    """Tokens Navi's own condensation of the earlier conversation may take: a quarter of the window."""
    return max(128, window // 4)


async def reads_images(llm: LLMBackend, model: str) -> bool:
    """Whether the server says `model` reads images ("vision"); unknown counts as no."""
    try:
        return (await llm.model_info(model)).supports("vision")
    except LLMError:
        return False


class CompressionFailed(Exception):
    """The summary call failed; the context was left as it was (already logged)."""


def summary_failed(exc: Exception) -> Notice:
    """What the user is told when the earlier conversation could not be summarised."""
    return Notice(message=f"The earlier conversation could not be summarised ({exc}); it is kept as it was.")


@dataclass
class Compressed:
    context: list[Message]
    tokens: int
    event: ContextCompressed
    condensed: bool = False  # by Navi itself, not summarised by the model


@dataclass
class PassOutcome:
    """What one compression pass did: `done` when the context got smaller (stored, and the one
    event to send), `failure` when a summary call failed (the context is as `done` left it)."""

    done: Compressed | None = None
    failure: CompressionFailed | None = None


class ContextCompressor:
    """Decides when to compress and does it: summary in, marker in the display, counts reset."""

    def __init__(
        self, settings: CompressionSettings, sessions: SessionStore, state: SessionState | None = None
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        # What it found about each session, kept with the session (`COMPRESSION`) for whichever
        # worker runs its next turn: a context a pass could not shrink (`futile`), and whether the
        # model wrote no usable summary (`unsummarisable`: Navi condenses the session itself from
        # then on, instead of spending two failing calls every turn).
        self.state = state if state is not None else SessionState()
        self.futile = FutileCompressions(self.state)
        # Models whose summary at the end of the conversation's prompt was unusable: they get a
        # request of their own from then on (for as long as the server runs). Per model, not per
        # session: each worker learns it with one failed call.
        self.no_continuing: set[str] = set()
        # Told the messages a pass took out of a stored session's context (the memory flush).
        self.on_dropped: Callable[[str, list[Message]], None] | None = None

    def needed(self, tokens: int, window: int) -> bool:
        return self.settings.enabled and tokens >= self.settings.threshold * window

    def starts_at(self, window: int) -> int | None:
        """The context size (tokens) from which a session of this window is compressed; None when
        compression is off."""
        return int(self.settings.threshold * window) if self.settings.enabled and window else None

    async def may_run(self, session_id: str, context: Sequence[Message], persistent: bool = True) -> bool:
        """False while the context is one a pass could not shrink and has not grown since."""
        return await self.futile.allows(session_id, context, persistent)

    async def unsummarisable(self, session_id: str, persistent: bool = True) -> bool:
        """Whether the session's model wrote no usable summary (Navi condenses it itself)."""
        found = await self.state.of(persistent).get(session_id, COMPRESSION) or {}
        return bool(found.get("unsummarisable"))

    async def run_pass(
        self,
        session_id: str,
        context: Sequence[Message],
        llm: LLMBackend,
        model: str,
        *,
        overhead_tokens: int,
        persistent: bool,
        plan: Pass,
    ) -> PassOutcome:
        """One compression pass as `plan` says: summarise (or condense) all but `plan.keeps[0]`
        turns, then all but each next number of turns while the result is not `plan.enough`.
        Raises `CallStopped`.

        A step that makes nothing smaller is skipped. The pass is stored and announced once, and
        only if the context got smaller; a pass that could not shrink it is not run again until
        the context has grown.
        """
        condense, prompt = plan.condense, plan.prompt
        if not await self.futile.allows(session_id, context, persistent):
            return PassOutcome()
        current: list[Message] = list(context)
        last: CompressionResult | None = None
        calls = 0
        failure: CompressionFailed | None = None
        for keep in dict.fromkeys(plan.keeps):
            if condense:
                step = condense_context(current, keep_recent=keep, budget_tokens=plan.budget_tokens)
            else:
                try:
                    step = await self._summarise(session_id, current, llm, model, keep, prompt, persistent)
                except CompressionFailed as exc:
                    failure = exc
                    break
            if step is None or not shrank(current, step.context):
                continue
            current, last, calls = step.context, step, calls + step.calls
            if plan.enough(estimate_messages_tokens(current)):
                break
        if last is None:
            if failure is None:  # it ran and could not shrink this context
                await self.futile.failed(session_id, context, persistent)
            return PassOutcome(failure=failure)
        await self.futile.forget(session_id, persistent)
        last.summary.metadata.disclosed = list(plan.disclosed) or None
        done = await self._apply(session_id, context, last, overhead_tokens, persistent, calls, condense)
        return PassOutcome(done=done, failure=failure)

    async def _summarise(
        self,
        session_id: str,
        context: Sequence[Message],
        llm: LLMBackend,
        model: str,
        keep: int,
        prompt: ConversationPrompt | None = None,
        persistent: bool = True,
    ) -> CompressionResult | None:
        """The model's summary of all but `keep` turns: at the end of `prompt` when there is one
        and the window has room there, else in a request of its own. Raises `CompressionFailed`
        (logged)."""
        settings = self.settings
        failed = 0
        try:
            if prompt is not None and model not in self.no_continuing:
                try:
                    continued = await compress_continuing(
                        context,
                        prompt,
                        llm,
                        keep_recent=keep,
                        temperature=settings.temperature,
                        max_tokens=settings.max_tokens,
                    )
                except SummaryRejected as exc:
                    log.info(
                        "compression.continuing_failed", session_id=session_id, model=model, error=str(exc)
                    )
                    self.no_continuing.add(model)
                    failed = 1
                else:
                    if continued is not None:
                        return continued
            result = await compress_context(
                context,
                llm,
                model,
                keep_recent=keep,
                temperature=self.settings.temperature,
                max_input_tokens=self.settings.max_input_tokens,
                max_tokens=self.settings.max_tokens,
                images=SUMMARY_IMAGES if await reads_images(llm, model) else 0,
            )
            if result is not None:
                result.calls += failed
            return result
        except CallStopped:
            raise  # the user stopped: not a failure, and nothing was changed
        except Exception as exc:  # the model or the network failed, or the summary was unusable
            log.warning("compression.failed", session_id=session_id, error=str(exc))
            if isinstance(exc, SummaryRejected):
                await note(self.state.of(persistent), session_id, unsummarisable=True)
            raise CompressionFailed(str(exc)) from exc

    async def _apply(
        self,
        session_id: str,
        context: Sequence[Message],
        result: CompressionResult,
        overhead_tokens: int,
        persistent: bool,
        calls: int,
        condensed: bool,
    ) -> Compressed:
        # `result` may come from the pass's last step: what it replaced is counted from `context`.
        summarized = len(context) - result.kept
        kept = result.context[1:]
        # Until the next model call reports a real count, the context size is an estimate.
        tokens = overhead_tokens + estimate_messages_tokens(result.context)
        meta = result.summary.metadata
        meta.messages_summarized = summarized
        meta.tokens_before = estimate_messages_tokens(context) - estimate_messages_tokens(kept)
        meta.tokens_after = estimate_messages_tokens([result.summary])
        if not condensed:
            meta.summary_calls = calls
        event = ContextCompressed(messages_before=len(context), messages_after=len(result.context))
        if persistent:
            how = "condensed by Navi (the model could not summarise them)" if condensed else "summarised"
            marker = Message.assistant(
                f"Context compressed: {summarized} earlier messages were {how}; "
                f"{result.kept} recent messages are kept as they were.",
                is_compression=True,
                metadata=MessageMeta(
                    messages_before=event.messages_before, messages_after=event.messages_after
                ),
            )
            await self.sessions.replace_context(session_id, result.context, context_token_count=tokens)
            await self.sessions.append(session_id, display=[marker])
            if self.on_dropped is not None:
                self.on_dropped(session_id, list(context[:summarized]))
        log.info(
            "compression.done",
            session_id=session_id,
            before=len(context),
            after=len(result.context),
            condensed=condensed,
        )
        return Compressed(context=result.context, tokens=tokens, event=event, condensed=condensed)
