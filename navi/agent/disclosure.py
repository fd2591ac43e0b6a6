"""Progressive disclosure of tools: full schemas for the tools a session is likely to need, one line
each for the rest, and `load_tools` to bring in any listed tool's schema.

Every schema sent is read by the model on every call, and on a CPU a cold read of the fixed prompt
is most of the wait. So a run's tools are split, without any model call, into:

- **disclosed** — sent with their schemas: the profile's likely tools (`AgentProfile.core_tools`,
  or `DEFAULT_CORE` when the profile names none), then `load_tools`, then every other tool the
  session has shown it needs — one whose keywords the conversation's first user message holds, one
  it called, one it loaded — in the order the conversation first showed it;
- **listed** — every other tool of the profile, one line each (`name: purpose`) in a fixed place
  of the system message (`index_text`), whatever is disclosed.

What is disclosed is read from the stored context, so it holds for the rest of the session and is
the same in every process. Compression keeps it: the summary carries the tools the messages it
replaced had disclosed (`MessageMeta.disclosed`), and its own words disclose nothing — so the tools
sent before and after a compression are the same, and the model's cache of the system message and
tools (most of a small window) still holds. It only grows
within a session, at the end of the tool list, and the listing never changes. A chat template
renders the tools inside the system message, before the conversation, so any growth makes the
model server read the whole conversation again: that is why a later message's keywords disclose
nothing (its tools stay listed, one `load_tools` call away) — on a 16,384-token window "Remind me
what I said I like" disclosed `schedule` and cost 2,539 tokens re-read (docs/benchmarks.md). Only
a call or a load, which shows the tool is needed, grows the list after the first message.

A later message's keywords are not ignored, though: the listed tools they show a need for are
*appended to that message* as the model reads it (`hinted`: a short note naming them, saying they
may be called at once; a call that misses a schema gets it back). The note belongs to the new
message, after everything cached, and is the same on every later call (it is worked out from the
context, in order), so nothing before it moves; "run the command" in the tenth message reaches
`terminal` without a `load_tools` round trip or a re-read.

A listed tool the model calls without loading it runs when its arguments fit its schema; else the
result is its schema (`schema_answer`) and the model calls again. Any registered tool is handled
alike — built-in, user, MCP — by its name, description and, when it has them, its `keywords`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from navi.llm.messages import Message, ToolSpec
from navi.tools.base import Tool, ToolResult
from navi.tools.registry import ToolView

LOAD_TOOLS = "load_tools"
INDEX_HEADING = "## More tools"
HINT_MARK = "\n\n[Navi: for this message, "  # starts the note `hinted` appends to a later message
# The likely tools of a profile that names none.
DEFAULT_CORE: tuple[str, ...] = ("todo", "scratchpad", "web_search", "memory_search", "recall")
# Words in a user's message that show a built-in tool will be needed (any tool may also declare its
# own `keywords`; a tool's name, or its name with spaces, always counts).
KEYWORDS: dict[str, tuple[str, ...]] = {
    "web_view": ("http://", "https://", "www.", "web page", "webpage", "website", "link"),
    "http_request": ("api", "endpoint", "webhook", "json", "rest", "post request"),
    "filesystem": ("file", "folder", "directory", "read", "write", "save", "document"),
    "code_exec": ("python", "code", "script", "calculate", "compute", "program"),
    "terminal": ("command", "shell", "run", "install", "disk", "process"),
    "ssh_exec": ("ssh", "server", "remote", "host"),
    "image_view": ("image", "photo", "picture", "screenshot", ".png", ".jpg"),
    "memory_forget": ("forget", "remove from memory", "no longer true", "not true any more"),
    "remember": ("keep in mind", "don't forget", "note that"),
    "search_conversations": ("we talked", "last time", "you told me", "earlier conversation", "said before"),
    "reload_tools": ("reload",),
    "write_tool": ("new tool", "write a tool", "make a tool", "create a tool"),
    "list_tools": ("which tools", "what tools", "list tools"),
    "tool_manual": ("manual", "how to use"),
    "spawn_agent": ("subagent", "sub-agent", "in parallel", "delegate"),
    "switch_profile": ("profile", "switch to", "smart home", "server admin", "secretary"),
    "schedule": ("remind", "every day", "every week", "tomorrow", "schedule", "later"),
    "get_current_datetime": ("time", "date", "today", "now", "day is it"),
    "user_notes": ("note", "notes", "jot"),
}
ONE_LINE = 90  # characters of a listed tool's purpose


class LoadTools(Tool):
    """Brings listed tools' schemas into the next model calls of the session."""

    name: ClassVar[str] = LOAD_TOOLS
    description: ClassVar[str] = (
        "Load tools listed under 'More tools' by name; their schemas are yours from the next step on."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        "required": ["names"],
    }
    timeout: ClassVar[float] = 5.0

    def __init__(self, listed: Collection[str]) -> None:
        self.listed = list(listed)

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        names = [str(n) for n in params.get("names", [])]
        known = [n for n in names if n in self.listed]
        unknown = [n for n in names if n not in self.listed]
        if not known:
            listed = ", ".join(self.listed) or "none"
            return ToolResult.fail(f"no such tool to load: {', '.join(unknown)}. Listed tools: {listed}")
        text = f"Loaded: {', '.join(known)}. Call them now."
        if unknown:
            text += f" Not found: {', '.join(unknown)}."
        return ToolResult.ok(text, loaded=known)


def purpose(description: str) -> str:
    """A tool's description cut to its first sentence, on one line."""
    text = " ".join(description.split())
    match = re.search(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s", text)
    first = text[: match.start()] if match else text
    if len(first) <= ONE_LINE:
        return first
    return first[: ONE_LINE - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _pattern(tool: Tool) -> re.Pattern[str]:
    words = {
        tool.name,
        tool.name.replace("_", " "),
        *KEYWORDS.get(tool.name, ()),
        *getattr(tool, "keywords", ()),
    }
    alternatives = "|".join(re.escape(w.lower()) for w in sorted(words, key=len, reverse=True) if w)
    # Each word at the start of a word ("bread" is not "read"); the group keeps the look-behind on
    # every alternative, not the first alone.
    return re.compile(rf"(?<![\w])(?:{alternatives})" if alternatives else r"(?!)", re.IGNORECASE)


@dataclass
class Disclosure:
    """One run's split of its tools; `seen` reads the context as it grows (only new messages)."""

    view: ToolView  # every tool of the run, load_tools included when anything is listed
    core: list[str]  # disclosed from the start, in the view's order
    listed: list[str]  # one line each, in the view's order
    extra: list[str] = field(default_factory=list)  # disclosed later, in order of first need
    _patterns: dict[str, re.Pattern[str]] = field(default_factory=dict)
    _specs: dict[str, ToolSpec] = field(default_factory=dict)
    _scanned: int = 0
    _last_id: str | None = None
    _asked: bool = False  # the first user message has been read (its keywords counted)
    # A later user message's id → the listed tools its keywords show a need for (`hinted`).
    hints: dict[str, list[str]] = field(default_factory=dict)

    @property
    def index_text(self) -> str | None:
        """The listing in the system message: fixed for the profile's tools."""
        if not self.listed:
            return None
        lines = [
            f"- {name}: {purpose(tool.description)}" for name in self.listed if (tool := self.view.get(name))
        ]
        head = f"{INDEX_HEADING}\n\nTo use one of these, call {LOAD_TOOLS} with its name first:"
        return "\n".join([head, *lines])

    def specs(self, context: Sequence[Message]) -> list[ToolSpec]:
        """The schemas of the next call: core, `load_tools`, then what the session showed it needs."""
        self.seen(context)
        names = [*self.core, *([LOAD_TOOLS] if self.listed else []), *self.extra]
        return [spec for name in names if (spec := self._spec(name)) is not None]

    def disclosed(self, context: Sequence[Message]) -> list[str]:
        """The tools `context` disclosed beyond the likely ones, in order of first need."""
        self.seen(context)
        return list(self.extra)

    def _spec(self, name: str) -> ToolSpec | None:
        spec = self._specs.get(name)
        if spec is None and (tool := self.view.get(name)) is not None:
            spec = self._specs[name] = tool.spec()
        return spec

    def seen(self, context: Sequence[Message]) -> None:
        """Read the messages added since the last look (all of them, when the context was rewritten)."""
        n = self._scanned
        if n > len(context) or (n and context[n - 1].id != self._last_id):
            self.extra, n, self._asked, self.hints = [], 0, False, {}
        for msg in context[n:]:
            self._read(msg)
        self._scanned = len(context)
        self._last_id = context[-1].id if context else None

    def _read(self, msg: Message) -> None:
        if not self.listed:
            return
        if msg.is_summary:  # stands for the messages it replaced: what they disclosed, no keywords
            self._asked = True
            self._need(msg.metadata.disclosed or [])
        elif msg.role == "user" and not msg.metadata.synthetic and msg.content:
            text = msg.content
            matched = [n for n in self.listed if self._pattern(n).search(text)]
            if not self._asked:  # the first request only: later ones would move the prompt's prefix
                self._asked = True
                self._need(matched)
            elif hinted := [n for n in matched if n not in self.extra]:
                self.hints[msg.id] = hinted  # appended to that message instead (`hinted`)
        elif msg.role == "assistant" and msg.tool_calls:
            for call in msg.tool_calls:
                if call.name == LOAD_TOOLS:
                    names = call.arguments.get("names") if isinstance(call.arguments, dict) else None
                    if isinstance(names, list):
                        self._need(str(n) for n in names)
                else:
                    self._need([self.view.canonical(call.name)])

    def _pattern(self, name: str) -> re.Pattern[str]:
        pattern = self._patterns.get(name)
        if pattern is None:
            tool = self.view.get(name)
            pattern = self._patterns[name] = _pattern(tool) if tool is not None else re.compile(r"(?!)")
        return pattern

    def _need(self, names: Iterable[str]) -> None:
        for name in names:
            if name in self.listed and name not in self.extra:
                self.extra.append(name)

    def hinted(self, context: Sequence[Message]) -> list[Message]:
        """`context` as the model reads it: each later user message whose keywords show a need for
        listed tools ends with a note giving their schemas, callable at once."""
        self.seen(context)
        if not self.hints:
            return list(context)
        out = []
        for msg in context:
            names = self.hints.get(msg.id)
            specs = [spec for name in names or () if (spec := self._spec(name)) is not None]
            if specs:
                msg = msg.model_copy(update={"content": (msg.content or "") + hint_note(specs)})
            out.append(msg)
        return out

    def is_listed_only(self, name: str, offered: Collection[str]) -> bool:
        return name in self.listed and name not in offered


def disclose(view: ToolView, core_tools: Sequence[str] | None) -> Disclosure:
    """Split `view` for a run: `core_tools` (the profile's likely tools; None: `DEFAULT_CORE`)."""
    wanted = set(DEFAULT_CORE if core_tools is None else core_tools)
    core = [n for n in view.names if n in wanted]
    listed = [n for n in view.names if n not in wanted and n != LOAD_TOOLS]
    tools = [t for n in view.names if (t := view.get(n)) is not None and n != LOAD_TOOLS]
    if listed:
        tools.append(LoadTools(listed))
    return Disclosure(view=ToolView(tools, view.aliases), core=core, listed=listed)


def hint_note(specs: Sequence[ToolSpec]) -> str:
    """The note a later message ends with: the listed tools it seems to need, by name (about a dozen
    tokens: a word can match without the tool being wanted); a call whose arguments miss the schema
    gets the schema back (`schema_answer`) and is made again."""
    names = ", ".join(f"`{spec.name}`" for spec in specs)
    return f"{HINT_MARK}the listed tools {names} may be called directly, without {LOAD_TOOLS}]"


def schema_answer(spec: ToolSpec) -> str:
    """What a call to a listed tool that did not fit its schema gets back: the schema, to call again."""
    schema = json.dumps(spec.parameters, ensure_ascii=False, separators=(",", ":"))
    return (
        f"{spec.name} is loaded now (it was only listed). {spec.description} Its parameters (JSON "
        f"schema): {schema}. Call {spec.name} again with arguments that match it."
    )
