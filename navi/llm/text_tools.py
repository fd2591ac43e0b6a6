"""Tool calling in plain text, for models whose server has no native tool calls.

llama-server drops `tools` silently when the model's chat template cannot render them, and Ollama
refuses them for models without the "tools" capability. For those models the adapters (through
`LLMBackend.stream_complete`) send no `tools`; instead:

- the system message gets a compact listing of the tools and how to call one;
- earlier calls are shown as the assistant wrote them, `<tool_call>{"name": .., "arguments": {..}}
  </tool_call>`, and results come back as user text in `<tool_response name="..">` blocks, so no
  `tool` role reaches the server;
- the streamed reply is parsed: text outside call blocks streams on as it arrives (only what could
  be the start of a tag is held back), and the calls, from `<tool_call>` blocks or from a reply
  that is nothing but a JSON call object (perhaps fenced), become one `ToolCallsChunk` before the
  final chunk, whose finish reason is then "tool_calls".
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from navi.llm.chunks import Chunk, StreamFinal, TextDelta, ToolCallsChunk
from navi.llm.messages import Message, ToolCall, ToolSpec, decode_lenient, unfence

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
RESULT_OPEN, RESULT_CLOSE = "<tool_response", "</tool_response>"
_TAGS = (CALL_OPEN, RESULT_OPEN)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]{1,200})"')

INSTRUCTIONS = """\
## Tools
You can use the tools listed below. To use one, write a block like this:
<tool_call>{{"name": "TOOL_NAME", "arguments": {{"ARGUMENT": "VALUE"}}}}</tool_call>
Write one block per call and nothing after your calls. Each result comes back to you in a \
<tool_response name="TOOL_NAME"> block; then carry on. When no tool is needed, just answer.

{listing}"""


# --- the prompt ---------------------------------------------------------------------------------
def _type_text(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if isinstance(schema.get("enum"), list):
        return "|".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array":
        items = schema.get("items")
        return f"array of {_type_text(items)}" if isinstance(items, dict) and items else "array"
    if kind == "object" and isinstance(schema.get("properties"), dict) and schema["properties"]:
        return "{" + ", ".join(_signature(schema)) + "}"
    for combo in ("anyOf", "oneOf"):
        if isinstance(schema.get(combo), list):
            return "|".join(_type_text(s) for s in schema[combo])
    return str(kind or "any")


def _signature(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    return [f"{name}{'' if name in required else '?'}: {_type_text(sub)}" for name, sub in props.items()]


def _tool_lines(tool: ToolSpec) -> list[str]:
    params = tool.parameters if isinstance(tool.parameters, dict) else {}
    head = f"- {tool.name}({', '.join(_signature(params))})"
    lines = [f"{head}: {tool.description.strip()}" if tool.description.strip() else head]
    for name, sub in (params.get("properties") or {}).items():
        text = sub.get("description", "").strip() if isinstance(sub, dict) else ""
        if text:
            lines.append(f"    {name}: {' '.join(text.split())}")
    return lines


def tool_instructions(tools: Sequence[ToolSpec]) -> str:
    """The system-prompt section that replaces native tool schemas."""
    listing = "\n".join(line for tool in tools for line in _tool_lines(tool))
    return INSTRUCTIONS.format(listing=listing)


def call_block(call: ToolCall) -> str:
    arguments: Any = call.arguments if call.raw_arguments is None else call.raw_arguments
    body = json.dumps({"name": call.name, "arguments": arguments}, ensure_ascii=False)
    return f"{CALL_OPEN}{body}{CALL_CLOSE}"


def result_block(msg: Message) -> str:
    name = (msg.name or "tool").replace('"', "'")
    return f'{RESULT_OPEN} name="{name}">\n{msg.content or ""}\n{RESULT_CLOSE}'


def to_text_messages(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[Message]:
    """The conversation with tool calls and results as text and the tools in the system prompt."""
    out: list[Message] = []
    for msg in messages:
        if msg.role == "assistant" and msg.tool_calls:
            blocks = "\n".join(call_block(c) for c in msg.tool_calls)
            text = (msg.content or "").rstrip()
            content = f"{text}\n{blocks}" if text.strip() else blocks
            out.append(Message.assistant(content, thinking=msg.thinking, created_at=msg.created_at))
        elif msg.role == "tool":
            out.append(Message.user(result_block(msg), images=msg.images, created_at=msg.created_at))
        else:
            out.append(msg)
    out.append(Message.system(tool_instructions(tools)))
    return out


# --- the reply ----------------------------------------------------------------------------------
def _call_from_object(obj: Any, *, strict_names: set[str] | None) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    for wrapper in ("tool_call", "function"):
        inner = obj.get(wrapper)
        if isinstance(inner, dict) and isinstance(inner.get("name"), str):
            obj = inner
            break
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    key = "arguments" if "arguments" in obj else ("parameters" if "parameters" in obj else None)
    if strict_names is not None and (name not in strict_names or key is None):
        return None
    args = obj.get(key) if key else None
    if isinstance(args, dict) or args is None or isinstance(args, str):
        return ToolCall.from_raw(name.strip(), args)
    return ToolCall.from_raw(name.strip(), json.dumps(args))


def _objects(text: str) -> list[Any] | None:
    """The JSON value(s) in a call block: one object, a list of them, or several in a row."""
    text = unfence(text)
    try:
        value = decode_lenient(text)
    except ValueError:
        pass
    else:
        return value if isinstance(value, list) else [value]
    decoder = json.JSONDecoder()
    found: list[Any] = []
    pos = 0
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return None
        found.append(value)
    return found or None


_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)


def json_in_reply(text: str) -> Any:
    """The JSON value a model was asked to answer with, from what it wrote: fenced, after a
    `<think>` block, between sentences ("Here is the JSON: {...} Hope this helps"), or with the
    usual small-model slips (trailing commas, Python literals). Raises ValueError when none is there.
    """
    text = unfence(_THINK_BLOCK.sub("", text))
    try:
        return decode_lenient(text)
    except ValueError:
        pass
    # The outermost value: whichever bracket opens first.
    pairs = sorted((("{", "}"), ("[", "]")), key=lambda pair: text.find(pair[0]) % (len(text) + 1))
    for opening, closing in pairs:
        start, end = text.find(opening), text.rfind(closing)
        if 0 <= start < end:
            try:
                return decode_lenient(unfence(text[start : end + 1]))
            except ValueError:
                continue
    raise ValueError("it held no JSON value")


def calls_in_block(text: str) -> list[ToolCall] | None:
    """Calls from the inside of a `<tool_call>` block; None when it holds no recognisable call.

    A block that names a tool but whose JSON is beyond repair becomes a failed call the model is
    told about, rather than vanishing.
    """
    objects = _objects(text)
    if objects is not None:
        calls = [_call_from_object(o, strict_names=None) for o in objects]
        if calls and all(c is not None for c in calls):
            return [c for c in calls if c is not None]
    match = _NAME.search(text)
    if match is None:
        return None
    return [
        ToolCall(
            name=match.group(1),
            raw_arguments=text.strip(),
            arguments_error="the tool call is not valid JSON; write it as "
            '{"name": "...", "arguments": {...}}',
        )
    ]


def calls_in_reply(text: str, tool_names: Iterable[str]) -> list[ToolCall] | None:
    """Calls when a whole reply is only a JSON call object (or a list of them) naming known tools."""
    objects = _objects(text)
    if not objects:
        return None
    names = set(tool_names)
    calls = [_call_from_object(o, strict_names=names) for o in objects]
    if all(c is not None for c in calls):
        return [c for c in calls if c is not None]
    return None


def _held_suffix(text: str) -> int:
    """Length of the longest tail of `text` that could begin one of the tags."""
    best = 0
    for tag in _TAGS:
        for size in range(min(len(tag) - 1, len(text)), best, -1):
            if text.endswith(tag[:size]):
                best = size
                break
    return best


def _may_be_bare_json(text: str) -> bool:
    """Whether a reply that starts like this may still turn out to be only a JSON call."""
    s = text.lstrip()
    if not s or s.startswith("{"):
        return True
    if not s.startswith("```"):
        return "```".startswith(s)
    line, newline, rest = s[3:].partition("\n")
    lang = line.strip().lower()
    if not newline:
        return "json".startswith(lang)
    return lang in ("", "json") and (not rest.strip() or rest.lstrip().startswith("{"))


class TextToolParser:
    """Splits a streamed reply into text to show now and the tool calls in it."""

    def __init__(self, tool_names: Iterable[str]) -> None:
        self.tool_names = set(tool_names)
        self.calls: list[ToolCall] = []
        self._buf = ""
        self._mode = "start"  # start → text ⇄ call | skip

    def feed(self, text: str) -> str:
        """Take the next piece of the reply; return the text that can be shown already."""
        self._buf += text
        if self._mode == "start":
            if _may_be_bare_json(self._buf):
                return ""
            self._mode = "text"
        return self._scan(final=False)

    def finish(self) -> str:
        """The reply ended: parse what was held back and return the text still to show."""
        if self._mode == "start":
            calls = calls_in_reply(self._buf, self.tool_names) if self._buf.strip() else None
            if calls:
                self.calls.extend(calls)
                self._buf = ""
                return ""
            self._mode = "text"
        return self._scan(final=True)

    def _scan(self, *, final: bool) -> str:
        out: list[str] = []
        while True:
            if self._mode == "text":
                hits = [(i, tag) for tag in _TAGS if (i := self._buf.find(tag)) >= 0]
                if not hits:
                    keep = 0 if final else _held_suffix(self._buf)
                    out.append(self._buf[: len(self._buf) - keep])
                    self._buf = self._buf[len(self._buf) - keep :]
                    break
                i, tag = min(hits)
                out.append(self._buf[:i])
                self._buf = self._buf[i + len(tag) :]
                self._mode = "call" if tag == CALL_OPEN else "skip"
                continue
            close = CALL_CLOSE if self._mode == "call" else RESULT_CLOSE
            end = self._buf.find(close)
            # A model that never closes a call but opens the next one has closed the first.
            reopen = self._buf.find(CALL_OPEN) if self._mode == "call" else -1
            if reopen >= 0 and (end < 0 or reopen < end):
                end, close = reopen, ""
            if end < 0 and not final:
                break
            body = self._buf if end < 0 else self._buf[:end]
            self._buf = "" if end < 0 else self._buf[end + len(close) :]
            if self._mode == "call":
                calls = calls_in_block(body)
                if calls is None:
                    out.append(f"{CALL_OPEN}{body}{close if end >= 0 else ''}")
                else:
                    self.calls.extend(calls)
            # A `<tool_response>` the model wrote itself is invented: it is dropped.
            self._mode = "text"
            if end < 0:
                break
        return "".join(out)


async def parse_stream(stream: AsyncIterator[Chunk], tools: Sequence[ToolSpec]) -> AsyncIterator[Chunk]:
    """`stream` with tool calls taken out of its text (see the module docstring)."""
    parser = TextToolParser(t.name for t in tools)
    native: list[ToolCall] = []
    async for chunk in stream:
        if isinstance(chunk, TextDelta):
            shown = parser.feed(chunk.text)
            if shown:
                yield TextDelta(text=shown)
        elif isinstance(chunk, ToolCallsChunk):
            native.extend(chunk.tool_calls)
        elif isinstance(chunk, StreamFinal):
            rest = parser.finish()
            if rest:
                yield TextDelta(text=rest)
            calls = [*native, *parser.calls]
            if calls:
                yield ToolCallsChunk(tool_calls=calls)
                chunk = dataclasses.replace(chunk, finish_reason="tool_calls")
            yield chunk
        else:
            yield chunk
