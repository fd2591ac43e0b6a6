"""A real `LLMBackend` whose turns come from a `Script` instead of a model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.chunks import Chunk, FinishReason, StreamFinal, TextDelta, ThinkingDelta, ToolCallsChunk, Usage
from navi.llm.errors import ModelNotFound, StreamInterrupted
from navi.llm.messages import Message, ToolCall, ToolSpec
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens
from navi.testing.script import Reply, Script, ScriptRequest


class ScriptedBackend(LLMBackend):
    """Runs the script in-process. Records requests and how each stream ended.

    `models=None` accepts any model name; otherwise unknown names raise `ModelNotFound` as Ollama would.
    """

    name = "scripted"

    def __init__(
        self,
        script: Script | list[Reply | str] | None = None,
        *,
        context_length: int = 65536,
        capabilities: tuple[str, ...] = ("completion", "tools", "thinking", "vision"),
        models: list[str] | None = None,
        server: str = "",
    ) -> None:
        self.server = server  # what `model_info` says serves the model ("llama.cpp", "ollama", …)
        self.script = script if isinstance(script, Script) else Script(script)
        self.context_length = context_length
        self.capabilities = capabilities
        self.models = models
        self.completed_streams = 0
        self.aborted_streams = 0
        self.options: list[CallOptions] = []

    @property
    def requests(self) -> list[ScriptRequest]:
        return self.script.requests

    def enqueue(self, *replies: Reply | str) -> ScriptedBackend:
        self.script.enqueue(*replies)
        return self

    async def _stream(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        if self.models is not None and options.model not in self.models:
            raise ModelNotFound(
                f"model '{options.model}' is not available — run `ollama pull {options.model}`"
            )
        self.options.append(options)
        request = ScriptRequest(
            api="scripted",
            model=options.model,
            messages=[m.model_copy(deep=True) for m in messages],
            tools=[t.name for t in tools or ()],
            options={
                "temperature": options.temperature,
                "think": options.think,
                "num_ctx": options.num_ctx,
                "max_tokens": options.max_tokens,
            },
        )
        reply = self.script.next_reply(request)
        done = False
        try:
            if reply.first_delay:
                await asyncio.sleep(reply.first_delay)
            if reply.exception is not None and reply.error_after is None:
                raise reply.exception
            for count, (kind, text) in enumerate(reply.pieces()):
                if reply.wait_for is not None and count == reply.wait_after:
                    await reply.wait_for.wait()
                if reply.error_after is not None and count == reply.error_after:
                    raise reply.exception or StreamInterrupted(reply.error or "scripted mid-stream error")
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                yield ThinkingDelta(text=text) if kind == "thinking" else TextDelta(text=text)
            if reply.wait_for is not None and reply.wait_after >= len(reply.pieces()):
                await reply.wait_for.wait()
            if reply.error_after is not None:
                raise reply.exception or StreamInterrupted(reply.error or "scripted mid-stream error")
            calls = [ToolCall.from_raw(c.name, c.arguments, call_id=c.id) for c in reply.tool_calls]
            if calls:
                yield ToolCallsChunk(tool_calls=calls)
            reason: FinishReason = (
                "tool_calls" if calls else ("length" if reply.finish_reason == "length" else "stop")
            )
            usage = Usage(
                prompt_tokens=reply.prompt_tokens
                if reply.prompt_tokens is not None
                else estimate_messages_tokens(messages),
                completion_tokens=reply.completion_tokens
                if reply.completion_tokens is not None
                else estimate_tokens(reply.thinking + reply.text),
            )
            done = True
            yield StreamFinal(finish_reason=reason, usage=usage, model=options.model)
        finally:
            if done:
                self.completed_streams += 1
            else:
                self.aborted_streams += 1

    async def model_info(self, model: str) -> ModelInfo:
        if self.models is not None and model not in self.models:
            raise ModelNotFound(f"model '{model}' is not available — run `ollama pull {model}`")
        return ModelInfo(
            name=model, context_length=self.context_length, capabilities=self.capabilities, server=self.server
        )

    async def list_models(self) -> list[str]:
        return list(self.models or [])

    async def status(self) -> ServerStatus:
        return ServerStatus(ok=True, detail="scripted backend")
