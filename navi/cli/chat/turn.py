"""One turn in the terminal: frames become blocks; finished blocks are printed once, and what can
still change stays in a live region at the bottom (rich `Live`), above a status line.

Printing a block for good only when it is done (and every block before it too) keeps the
scrollback clean: what scrolled away is never redrawn. Streamed text is the exception that makes
long answers work: its lines are printed as soon as they are stable (all but the last few), so the
live region never grows past the screen, and what remains is printed when the text ends.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.spinner import Spinner
from rich.text import Text

from navi.cli.chat.blocks import (
    CUT_OFF,
    SPAWN,
    Block,
    NoticeBlock,
    PlanBlock,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
)
from navi.cli.chat.keys import TypeAhead
from navi.cli.chat.question import Question

TEXT_LIVE_LINES = 6  # the last lines of streaming text kept live (they may still change)
STATUS_LABELS = {
    "starting": "Waiting for Navi",
    "preparing": "Preparing",
    "compressing": "Summarising earlier messages",
    "planning": "Planning",
    "waiting": "Waiting for the model",
    "researching": "Researching",
    "thinking": "Thinking",
    "writing": "Writing",
    "tool": "Running tools",
    "approval": "Waiting for your answer",
    "stopping": "Stopping",
    "reconnecting": "Connection lost; reconnecting (the reply goes on)",
}


Context = tuple[int, int, int | None, tuple[int, int] | None]
NO_CONTEXT: Context = (0, 0, None, None)


def context_of(frame: dict[str, Any]) -> Context:
    """The gauge's figures from a `stream_end` frame or a session's detail (GET /sessions/{id}):
    tokens the model saw, its window, where compression starts, and the turn's read/written tokens
    (a `stream_end` only)."""
    usage = frame.get("usage") if isinstance(frame.get("usage"), dict) else None
    at = frame.get("compress_at_tokens")
    return (
        int(frame.get("context_tokens") or frame.get("context_token_count") or 0),
        int(frame.get("max_context_tokens") or 0),
        int(at) if isinstance(at, int) and at > 0 else None,
        (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)) if usage else None,
    )


def gauge(
    tokens: int, limit: int, compress_at: int | None = None, turn: tuple[int, int] | None = None
) -> str:
    """The context gauge: how full the model's window is, where compression starts, and what the
    last turn read and wrote."""
    if not tokens or not limit:
        return ""
    share = min(1.0, tokens / limit)
    text = f"context {share:.0%} ({tokens:,}/{limit:,} tokens"
    text += f", summary at {min(1.0, compress_at / limit):.0%})" if compress_at else ")"
    if turn is not None:
        text += f" · last turn {turn[0]:,} in, {turn[1]:,} out"
    return text


def gauge_short(tokens: int, limit: int, compress_at: int | None = None, turn: object = None) -> str:
    """The gauge for a narrow terminal: how full the window is, and where compression starts."""
    if not tokens or not limit:
        return ""
    text = f"context {min(1.0, tokens / limit):.0%}"
    return text + (f" (summary at {min(1.0, compress_at / limit):.0%})" if compress_at else "")


def fallback_line(frame: dict[str, Any]) -> str:
    """A `model_fallback` frame as one line: which endpoint was passed over, why, and which is asked."""
    reason = frame.get("reason", "")
    why = f"skipped, {reason}" if frame.get("cooling") else f"failed: {reason}"
    return (
        f"↪ {frame.get('endpoint', '')} ({frame.get('model', '')}) {why} — asking "
        f"{frame.get('next_endpoint', '')} ({frame.get('next_model', '')})"
    )


class Lines:
    """Rendered lines, as a renderable (the live region's crop, the stable part of a text)."""

    def __init__(self, lines: list[list[Segment]]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines:
            yield from line
            yield Segment.line()


class LiveTurn:
    """Draws one turn from its frames. `handle(frame)` returns True once the turn is over."""

    def __init__(
        self, console: Console, *, context: Context = NO_CONTEXT, ahead: TypeAhead | None = None
    ) -> None:
        self.console = console
        self.ahead = ahead  # what the user types meanwhile, shown under the status line
        self.blocks: list[Block] = []
        self.printed = 0  # blocks[:printed] are on screen for good
        self.tools: dict[str, ToolBlock] = {}
        self.spawns: list[ToolBlock] = []  # running spawn_agent calls, innermost last
        self.phase = "starting"
        self.detail = ""
        self.context = context
        self.hint = "Ctrl-C stops"
        self.profile_name = ""  # set by profile_switched
        self.live: Live | None = None
        self.outcome = ""  # "answered", "stopped", "failed"

    # --- the live region ------------------------------------------------------------------------

    def __enter__(self) -> LiveTurn:
        self.live = Live(
            _Region(self),
            console=self.console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush(final=True)
        if self.live is not None:
            self.live.stop()
            self.live = None

    def answer_text(self) -> str:
        """What the answer said, its text blocks joined (no thinking, no tools)."""
        return "\n\n".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def refresh(self) -> None:
        """Print what became stable and redraw the live region (called a few times a second)."""
        self.flush()
        if self.live is not None:
            self.live.refresh()

    def flush(self, *, final: bool = False) -> None:
        """Print, for good, every finished block at the head of the turn, and the stable lines of
        streaming text. `final`: everything, the turn is over."""
        # What is printed is marked so first: printing redraws the live region below it (rich's
        # render hook), which must no longer hold it, or it shows twice until the next redraw.
        while self.printed < len(self.blocks):
            block = self.blocks[self.printed]
            whole = final or block.done
            if not (whole or isinstance(block, TextBlock)):
                return
            if whole:
                self.printed += 1
            if isinstance(block, TextBlock):
                self._flush_text(block, whole)
            else:
                self.console.print(block.final())
            if not whole:
                return

    def _flush_text(self, block: TextBlock, whole: bool) -> None:
        lines = self.console.render_lines(block.final(), self.console.options, pad=False)
        upto = len(lines) if whole else max(block.committed, len(lines) - TEXT_LIVE_LINES)
        if upto > block.committed:
            start, block.committed = block.committed, upto
            self.console.print(Lines(lines[start:upto]), end="")

    def live_lines(self, console: Console, options: ConsoleOptions) -> list[list[Segment]]:
        out: list[list[Segment]] = []
        for block in self.blocks[self.printed :]:
            if isinstance(block, TextBlock):
                out += console.render_lines(block.final(), options, pad=False)[block.committed :]
            else:
                out += console.render_lines(block.live(), options, pad=False)
        out += console.render_lines(self.status_line(), options, pad=False)
        waiting = self.ahead.shown() if self.ahead is not None else ""
        if waiting:
            line = Text(f"› {waiting}", style="green")
            line.append("   (goes after this reply)", style="dim")
            line.no_wrap, line.overflow = True, "ellipsis"
            out += console.render_lines(line, options, pad=False)
        if self.ahead is not None and self.ahead.quit:
            out += console.render_lines(
                Text("(Ctrl-D: quits after this reply)", style="dim"), options, pad=False
            )
        return out

    def status_line(self) -> RenderableType:
        label = STATUS_LABELS.get(self.phase, "Working")
        text = Text(f"{label}{f': {self.detail}' if self.detail else ''}…", style="bold cyan")
        extras = [x for x in (gauge(*self.context), self.hint) if x]
        if extras:
            text.append("  ·  " + "  ·  ".join(extras), style="dim")
        text.no_wrap = True
        text.overflow = "ellipsis"
        return Spinner("dots", text=text, style="cyan")

    # --- frames ---------------------------------------------------------------------------------

    def add(self, block: Block) -> None:
        self._end_text()
        self.blocks.append(block)

    def place(self, block: Block, subagent: bool) -> None:
        """A subagent's blocks go under its running spawn_agent call."""
        parent = self.spawns[-1] if subagent and self.spawns else None
        if parent is not None:
            parent.children.append(block)
        else:
            self.add(block)

    def _end_text(self) -> None:
        if self.blocks and isinstance(self.blocks[-1], TextBlock):
            self.blocks[-1].done = True

    def _end_thinking(self) -> None:
        for block in self.blocks[self.printed :]:
            if isinstance(block, ThinkingBlock):
                block.done = True

    def notice(self, text: str, style: str = "dim") -> None:
        self.add(NoticeBlock(text, style))

    def handle(self, frame: dict[str, Any]) -> bool:
        kind = frame.get("type")
        if kind == "status":
            self.phase, self.detail = str(frame.get("phase", "")), str(frame.get("detail", ""))
        elif kind == "thinking_delta":
            last = self.blocks[-1] if self.blocks else None
            if not (isinstance(last, ThinkingBlock) and not last.done):
                last = ThinkingBlock()
                self.add(last)
            last.text += str(frame.get("delta", ""))
            self.phase, self.detail = "thinking", ""
        elif kind == "thinking_end":
            self._end_thinking()
        elif kind == "turn_thinking":
            if frame.get("thinking"):
                sub = bool(frame.get("is_subagent"))
                self.place(ThinkingBlock(str(frame["thinking"]), done=True, subagent=sub), sub)
        elif kind == "plan_ready":
            self.add(PlanBlock(str(frame.get("plan", ""))))
        elif kind == "tool_started":
            self._tool(frame)
            self.phase, self.detail = "tool", str(frame.get("tool", ""))
        elif kind == "tool_call":
            block = self._tool(frame)
            block.result = str(frame.get("result") or "")
            block.success = bool(frame.get("success", True))
            block.args = frame.get("args", block.args)
            page = frame.get("browser")
            if isinstance(page, dict) and page.get("url"):
                block.page = (" ".join(str(page.get("title") or "").split()), str(page["url"]))
            if block in self.spawns:
                self.spawns.remove(block)
        elif kind == "approval_required":
            block = self._tool(frame)
            block.reason = str(frame.get("reason") or "it may change something")
            block.always_scope = frame.get("always_scope") or None
            self.phase, self.detail = "approval", ""
        elif kind == "approval_resolved":
            asked = self.tools.get(str(frame.get("call_id", "")))
            if asked is not None:
                asked.answer = str(frame.get("decision", "deny"))
                asked.answered_by = str(frame.get("by", "user"))
                asked.answering = False
            self.phase, self.detail = "tool", ""
        elif kind == "elicitation_required":
            self._question(frame)
            self.phase, self.detail = "approval", ""
        elif kind == "elicitation_resolved":
            for block in self.tools.values():
                for question in block.questions:
                    if question.elicitation_id == frame.get("elicitation_id"):
                        question.outcome = str(frame.get("action") or "cancel")
                        question.by, question.sending, question.filling = (
                            str(frame.get("by") or "user"),
                            False,
                            False,
                        )
            self.phase, self.detail = "tool", ""
        elif kind == "stream_delta":
            self._end_thinking()
            last = self.blocks[-1] if self.blocks else None
            if not (isinstance(last, TextBlock) and not last.done):
                last = TextBlock()
                self.add(last)
            last.text += str(frame.get("delta", ""))
            self.phase, self.detail = "writing", ""
        elif kind == "notice":
            self.notice(f"ℹ {frame.get('message', '')}", "yellow")
        elif kind == "model_fallback":
            self.notice(fallback_line(frame), "yellow")
        elif kind == "context_compressed":
            self.notice(
                f"⇣ context compressed: {frame.get('messages_before')} → {frame.get('messages_after')} "
                "messages (earlier ones were summarised)",
                "magenta",
            )
        elif kind == "profile_switched":
            self.profile_name = str(frame.get("profile_name") or frame.get("profile_id") or "")
            self.notice(f"↪ switched to the {self.profile_name} profile", "magenta")
        elif kind == "stream_end":
            self._end_thinking()
            if not any(isinstance(b, TextBlock) for b in self.blocks) and frame.get("content"):
                self.add(TextBlock(str(frame["content"]), done=True))
            self._end_text()
            self.context = context_of(frame)
            if frame.get("finish_reason") == "length":
                self.notice(CUT_OFF, "yellow")
            self.outcome = "answered"
            return True
        elif kind == "stream_stopped":
            self._end_thinking()
            self._end_text()
            self.notice("■ stopped", "yellow")
            self.outcome = "stopped"
            return True
        elif kind == "error" and frame.get("seq") is not None and frame.get("code") != "nothing_to_retry":
            self._end_thinking()
            self._end_text()
            self.notice(f"✗ error: {frame.get('message', '')}  (/retry runs it again)", "bold red")
            self.outcome = "failed"
            return True
        return False

    def _tool(self, frame: dict[str, Any]) -> ToolBlock:
        call_id = str(frame.get("call_id") or "")
        found = self.tools.get(call_id) if call_id else None
        if found is not None:
            return found
        self._end_thinking()
        sub = bool(frame.get("is_subagent"))
        block = ToolBlock(str(frame.get("tool", "tool")), frame.get("args"), call_id, sub)
        if call_id:
            self.tools[call_id] = block
        self.place(block, sub)
        if block.tool == SPAWN and not sub:
            self.spawns.append(block)
        return block

    def _question(self, frame: dict[str, Any]) -> None:
        """An MCP server's question goes under its call (the latest running one of the tool)."""
        running = [b for b in self.tools.values() if b.tool == frame.get("tool") and b.result is None]
        block = running[-1] if running else self._tool({**frame, "args": {}})
        if block not in self.tools.values():
            self.tools[f"question:{frame.get('elicitation_id')}"] = block
        block.questions.append(Question.of(frame))

    def question(self) -> Question | None:
        """The first question of an MCP server still waiting for the user's keys."""
        for block in self.tools.values():
            for question in block.questions:
                if question.open:
                    return question
        return None

    def asking(self) -> list[ToolBlock]:
        return [b for b in self.tools.values() if b.asking and not b.answering]


class _Region:
    """The live region: the open blocks and the status line, cropped to the screen's height (a
    live region taller than the screen cannot be redrawn in place)."""

    def __init__(self, turn: LiveTurn) -> None:
        self.turn = turn

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self.turn.live_lines(console, options)
        height = max(3, console.size.height - 2)
        if len(lines) > height:
            lines = lines[-height:]
        yield Lines(lines)
