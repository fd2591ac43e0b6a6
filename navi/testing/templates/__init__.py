"""Chat templates as data, rendered the way model servers render them.

`gemma3-it.jinja` behaves as Gemma 3's instruct template (strict user/model alternation, the system
text folded into the first user turn, no tools); `chatml-tools.jinja` is a ChatML template that
carries tools the Hermes/Qwen way. Tests render Navi's messages through them to prove that every
shape Navi sends is accepted; llama-server takes them with `--chat-template-file`; the prompt
benchmark counts what tool schemas cost through the tools one.

Rendering uses jinja2's sandbox, as Hugging Face's `apply_chat_template` does, with the same two
additions templates expect: `raise_exception` and a `tojson` that does not HTML-escape.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).parent
GEMMA3 = "gemma3-it.jinja"
CHATML_TOOLS = "chatml-tools.jinja"


class TemplateError(Exception):
    """The template refused the conversation (its `raise_exception`)."""


def path(name: str) -> Path:
    """The file of a template, e.g. for llama-server's `--chat-template-file`."""
    return TEMPLATES / name


def _raise(message: str) -> None:
    raise TemplateError(message)


def _tojson(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


@cache
def _compiled(name: str) -> Any:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise
    env.filters["tojson"] = _tojson
    return env.from_string(path(name).read_text(encoding="utf-8"))


def render(
    name: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    add_generation_prompt: bool = True,
    bos_token: str = "<bos>",
) -> str:
    """The prompt text a server would build from OpenAI-style `messages` (and `tools`)."""
    return str(
        _compiled(name).render(
            messages=messages,
            tools=tools,
            add_generation_prompt=add_generation_prompt,
            bos_token=bos_token,
            eos_token="",
        )
    )
