"""The demo script behind `navi fake-model`: enough behaviour to click through Navi by hand.

Every answer thinks briefly, then streams. Words in a message show what Navi can do (`TRIGGERS`,
also printed by `navi fake-model --help` and listed in the README). Summaries keep the lines with
digits; a conversation's title is the first words of its first message.
"""

from __future__ import annotations

import re
import threading

from navi.testing.agent_script import (
    DEFAULT_ASSESSMENT,
    HINT_MARK,
    PLAN_MARK,
    PLANNING_MARK,
    echo_facts_summary,
    kind_of,
)
from navi.testing.script import Reply, Script, ScriptedCall, ScriptRequest

# (words, what a message with one of them shows), in the order they are checked.
TRIGGERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("plan",), "a plan from the planning step before the answer"),
    (("todo", "checklist"), "a call of the todo tool (runs without asking)"),
    (("run", "command"), "a terminal call that asks for your approval first: Allow, Deny or Always"),
    (("code", "markdown"), "an answer with a heading, a list, a table and a Python block"),
    (("fail",), "a model error, with Retry (the retry is answered)"),
    (("slow",), "a slow answer: try Stop, Esc or reloading the page mid-answer"),
)
COMMAND = "echo Hello from the Navi demo"
RICH = """## What the demo can show

- **Bold**, *italic* and `inline code`
- A numbered list, a table and a code block:

| Word | Shows |
|---|---|
| plan | a plan |
| run | an approval |

```python
def greet(name: str) -> str:
    return f"Hello, {name}!"
```

> Point `OLLAMA_HOST` at a real Ollama to chat for real."""


def triggers_help() -> str:
    """The trigger words, a line each (for `navi fake-model --help`)."""
    return "\n".join(f"{' / '.join(words)}: {shows}" for words, shows in TRIGGERS)


def _has(text: str, *words: str) -> bool:
    """Whether a word of `text` starts with one of `words` ("planning" has "plan", "explain" not)."""
    return any(re.search(rf"\b{word}", text, re.IGNORECASE) for word in words)


def demo_title(request: ScriptRequest) -> str:
    """The first words of the conversation's first message, as the naming call quotes it
    ("Conversation:\\nUser: …\\nAssistant: …"), not the quoting around it."""
    text = request.last_user_text
    said = next((line[5:] for line in text.splitlines() if line.startswith("User:")), text)
    words = said.split()[:5]
    title = " ".join(words).strip(" .,;:!?")
    return title[:1].upper() + title[1:] if title else "Demo conversation"


class DemoResponder:
    def __init__(self) -> None:
        self._failed: set[str] = set()  # messages that failed once: their retry is answered
        self._lock = threading.Lock()

    def __call__(self, request: ScriptRequest) -> Reply:
        kind = kind_of(request)
        # What the person typed: without the planning instruction or the plan note after it.
        # (and without the note of listed tools a later message may need, which offers them too)
        text = request.last_user_text
        said = text.split(PLANNING_MARK)[0].split(PLAN_MARK)[0].split(HINT_MARK)[0].strip()
        hinted = text.split(HINT_MARK, 1)[1] if HINT_MARK in text else ""
        if kind == "planning":
            if _has(said, "plan"):
                return Reply(text="1. Write a checklist with todo\n2. Answer the user")
            return Reply(text="DIRECT")
        if kind == "summary":
            return echo_facts_summary(request)
        if kind == "naming":
            return Reply(text=demo_title(request))
        if kind == "assessment":
            return Reply(text=DEFAULT_ASSESSMENT)
        if kind == "facts":
            return Reply(text='{"facts": []}')
        if kind != "turn":
            return Reply(text="NONE")  # no facts to extract, nothing else to say
        last = request.last
        if last is not None and last.role == "tool":
            return self._after_tool(last.name or "tool", last.content or "")
        if _has(said, "todo", "checklist") and "todo" in request.tools:
            return Reply(
                thinking="A checklist will help.",
                tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Read it", "Answer it"]})],
            )
        if _has(said, "run", "command") and ("terminal" in request.tools or "`terminal`" in hinted):
            return Reply(
                thinking="Running a harmless command shows how Navi asks first.",
                tool_calls=[ScriptedCall("terminal", {"command": COMMAND})],
            )
        if _has(said, "code", "markdown"):
            return Reply(thinking="Show the formatting.", text=RICH, chunk_chars=12, delay=0.02)
        if _has(said, "fail"):
            with self._lock:
                first = said not in self._failed
                self._failed.add(said)
            if first:
                return Reply(status=500, error="the demo model failed on purpose; press Retry")
        slow = _has(said, "slow")
        return Reply(
            thinking=f"The user wrote {len(said)} characters. I will answer briefly.",
            text=f"You said: **{said}**\n\n(Navi's fake model: point OLLAMA_HOST at a real Ollama to chat.)"
            + (" This answer streams slowly so you can stop it or reload the page." * 3 if slow else ""),
            chunk_chars=4 if slow else 8,
            delay=0.15 if slow else 0.02,
        )

    @staticmethod
    def _after_tool(name: str, content: str) -> Reply:
        if content.startswith("Error:"):
            return Reply(
                thinking="The call was not run.",
                text=f"The `{name}` call did not run:\n\n> {content[7:300]}\n\nFine — nothing was changed.",
                delay=0.02,
            )
        return Reply(
            thinking="The tool answered; I will report it.",
            text=f"The tool `{name}` answered:\n\n```\n{content[:500]}\n```",
            delay=0.02,
        )


def demo_script() -> Script:
    return Script(responder=DemoResponder())
