"""The pieces a turn is drawn from in the terminal: thinking, the plan, tool calls, text, notices.

Each block renders twice over its life: `live()` while it can still change (it sits in the live
region at the bottom of the screen), `final()` once it is done (printed once, above, for good).
The same blocks draw a session's history when it is opened, so a turn looks the same streamed and
read back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.segment import Segment
from rich.spinner import Spinner
from rich.text import Text

from navi.cli.chat.question import Question

CUT_OFF = "✂ the reply was cut off at its length limit (/continue goes on with it)"

SPAWN = "spawn_agent"
CODE_THEME = "monokai"
THINKING_TAIL = 6  # lines of thinking shown while it streams
NESTED_TAIL = 8  # a running subagent's latest calls shown under its spawn_agent line


def one_line(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: max(1, limit - 1)].rstrip() + "…"


def args_summary(args: Any, limit: int = 70) -> str:
    """A tool call's arguments as `key=value …`, short enough for one line."""
    if not isinstance(args, dict) or not args:
        return ""
    parts = []
    for key, value in args.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={one_line(shown, 40)}")
    return one_line(" ".join(parts), limit)


def result_summary(result: str, limit: int = 80) -> str:
    lines = [ln for ln in (result or "").splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return one_line(lines[0], limit - len(more)) + more


class Trimmed:
    """`inner` without blank lines above or below (rich's Markdown opens a list with one)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.inner, options, pad=False)
        blank = [not "".join(seg.text for seg in line).strip() for line in lines]
        start = blank.index(False) if False in blank else len(lines)
        end = len(lines) - (blank[::-1].index(False) if False in blank else 0)
        for line in lines[start:end]:
            yield from line
            yield Segment.line()


def markdown(text: str) -> RenderableType:
    return Trimmed(Markdown(text, code_theme=CODE_THEME))


class Block:
    done = True

    def live(self) -> RenderableType:
        return self.final()

    def final(self) -> RenderableType:
        raise NotImplementedError


@dataclass
class ThinkingBlock(Block):
    text: str = ""
    done: bool = False
    subagent: bool = False

    def live(self) -> RenderableType:
        tail = self.text.rstrip().splitlines()[-THINKING_TAIL:]
        body = Text("\n".join(tail), style="dim italic")
        return Group(Text("💭 thinking…", style="dim"), Padding(body, (0, 0, 0, 3)))

    def final(self) -> RenderableType:
        words = len(self.text.split())
        who = "subagent thought" if self.subagent else "thought"
        line = Text(f"💭 {who} · {words} word{'s' if words != 1 else ''} — ", style="dim")
        line.append(one_line(self.text, 70), style="dim italic")
        line.no_wrap = True
        line.overflow = "ellipsis"
        return line


@dataclass
class PlanBlock(Block):
    text: str = ""

    def final(self) -> RenderableType:
        return Panel(
            markdown(self.text),
            title="Plan",
            title_align="left",
            border_style="cyan",
            padding=(0, 1),
        )


@dataclass
class ToolBlock(Block):
    tool: str
    args: Any = None
    call_id: str = ""
    subagent: bool = False
    result: str | None = None
    success: bool = True
    children: list[Block] = field(default_factory=list)
    # approval: the reason while it asks; then the answer ("allow", "deny", "always") and who gave it
    reason: str | None = None
    always_scope: str | None = None
    answer: str | None = None
    answered_by: str = ""
    answering: bool = False
    # the browser tool's page after the call: (title, url), from the frame's `browser`
    page: tuple[str, str] | None = None
    # an MCP server's questions during the call (elicitation), in the order asked
    questions: list[Question] = field(default_factory=list)

    @property
    def done(self) -> bool:  # type: ignore[override]
        return self.result is not None

    @property
    def asking(self) -> bool:
        return self.reason is not None and self.answer is None and self.result is None

    def _head(self, mark: RenderableType | None, style: str) -> Text:
        line = Text()
        line.append(self.tool, style=f"bold {style}")
        shown = args_summary(self.args)
        if shown:
            line.append(f"  {shown}", style="dim")
        if self.result is not None:
            line.append("  → ", style="dim")
            line.append(result_summary(self.result), style="" if self.success else "red")
        line.no_wrap = True
        line.overflow = "ellipsis"
        return line

    def _approval(self) -> list[RenderableType]:
        if self.reason is None:
            return []
        if self.answer is not None:
            outcome = {
                "allow": ("allowed", "green"),
                "always": ("allowed, and remembered: Navi will not ask again for this", "green"),
            }.get(self.answer)
            if outcome is None:
                by = {"timeout": "nobody answered in time", "stop": "stopped"}.get(
                    self.answered_by, "declined"
                )
                outcome = (f"not run: {by}", "yellow")
            return [Text(f"   {outcome[0]}", style=outcome[1])]
        if self.result is not None:
            return []
        lines: list[RenderableType] = [
            Text(f"   Navi asks before running this: {self.reason}", style="yellow")
        ]
        if self.answering:
            lines.append(Text("   answering…", style="dim"))
        else:
            choice = Text("   Allow? ", style="bold yellow")
            choice.append("[y] yes  [n] no", style="bold")
            if self.always_scope:
                choice.append(f"  [a] always ({self.always_scope})", style="bold")
            lines.append(choice)
        return lines

    def _render(self, live: bool) -> RenderableType:
        if self.result is not None:
            mark: RenderableType = Text(
                "✓ " if self.success else "✗ ", style="green" if self.success else "red"
            )
        elif self.asking:
            mark = Text("? ", style="bold yellow")
        else:
            mark = Spinner("dots", style="cyan") if live else Text("… ", style="dim")
        head = self._head(mark, "" if self.result is not None else "cyan")
        if isinstance(mark, Spinner):
            mark.text = head
            top: RenderableType = mark
        else:
            top = Text.assemble(mark, head)  # type: ignore[arg-type]
            top.no_wrap = True
            top.overflow = "ellipsis"
        parts: list[RenderableType] = [top, *self._approval()]
        for question in self.questions:
            parts.extend(question.render())
        if self.page is not None:
            title, url = self.page
            line = Text("   ▭ ", style="dim")
            line.append(title or "(untitled)", style="bold")  # the page's words, shown as plain text
            line.append(f"  {url}", style="dim underline")
            line.no_wrap = True
            line.overflow = "ellipsis"
            parts.append(line)
        children = self.children
        if live and len(children) > NESTED_TAIL:
            parts.append(Text(f"   … {len(children) - NESTED_TAIL} earlier calls", style="dim"))
            children = children[-NESTED_TAIL:]
        for child in children:
            parts.append(Padding(child.live() if live else child.final(), (0, 0, 0, 3)))
        return Group(*parts)

    def live(self) -> RenderableType:
        return self._render(True)

    def final(self) -> RenderableType:
        return self._render(False)


@dataclass
class TextBlock(Block):
    text: str = ""
    done: bool = False
    committed: int = 0  # lines already printed above the live region

    def final(self) -> RenderableType:
        return markdown(self.text)


@dataclass
class NoticeBlock(Block):
    text: str
    style: str = "dim"

    def final(self) -> RenderableType:
        return Text(self.text, style=self.style)


@dataclass
class UserBlock(Block):
    text: str
    files: list[str] = field(default_factory=list)
    images: int = 0

    def final(self) -> RenderableType:
        line = Text("› ", style="bold green")
        line.append(self.text)
        extras = [f"📎 {name}" for name in self.files]
        if self.images:
            extras.append(f"🖼 {self.images} image{'s' if self.images > 1 else ''}")
        if extras:
            line.append("\n  " + "  ".join(extras), style="dim")
        return line
