"""The demo script behind `navi fake-model`: a model that thinks briefly and echoes.

Good enough to click through the product by hand without a real model.
"""

from __future__ import annotations

from navi.testing.script import Reply, Script, ScriptRequest


def demo_responder(request: ScriptRequest) -> Reply:
    last = request.last
    if last is not None and last.role == "tool":
        return Reply(
            text=f"The tool `{last.name or 'tool'}` answered:\n\n```\n{(last.content or '')[:500]}\n```"
        )
    said = request.last_user_text.strip()
    return Reply(
        thinking=f"The user wrote {len(said)} characters. I will answer briefly.",
        text=f"You said: **{said}**\n\n(Navi's fake model: point OLLAMA_HOST at a real Ollama to chat.)",
        delay=0.02,
    )


def demo_script() -> Script:
    return Script(responder=demo_responder)
