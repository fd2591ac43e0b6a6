"""An MCP server's question in `navi chat` (elicitation_required), drawn under its tool call.

The keys answer it, as y / n answer an approval: for a page to open (URL mode), `y` says the user
will open it (the address is shown whole; Navi opens nothing) and `n` declines. For a form, `e`
starts filling it in — one field after the other, typed on the question's own line, Enter to
confirm (an optional field may be left empty), Ctrl-U to clear — and `n` declines. Nothing is
filled in for the user: a field starts empty (or at the schema's default, which is shown).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from navi.cli.chat.keys import BACKSPACES, ENTER

Value = str | int | float | bool | list[str]
YES, NO = ("y", "yes", "true", "1"), ("n", "no", "false", "0")


@dataclass
class Field:
    name: str
    spec: dict[str, Any]
    required: bool
    of_type: str = ""  # the schema's type: string, number, integer, boolean

    @property
    def label(self) -> str:
        return str(self.spec.get("description") or self.spec.get("title") or self.name)

    def choices(self) -> list[str]:
        if isinstance(self.spec.get("enum"), list):
            return [str(v) for v in self.spec["enum"]]
        return [str(o.get("const")) for o in self.spec.get("oneOf", []) if isinstance(o, dict)]

    def hint(self) -> str:
        of_type = self.of_type
        if self.choices():
            return " / ".join(self.choices())
        if of_type == "boolean":
            return "y / n"
        if of_type in ("number", "integer"):
            return "a whole number" if of_type == "integer" else "a number"
        return "text"

    def read(self, typed: str) -> tuple[Value | None, str]:
        """The value typed (None: left empty), or an error saying what to type."""
        text = typed.strip()
        if not text:
            if "default" in self.spec:
                return self.spec["default"], ""
            return None, "required" if self.required else ""
        of_type = self.of_type
        choices = self.choices()
        if choices:
            if text.isdigit() and 1 <= int(text) <= len(choices):
                return choices[int(text) - 1], ""
            return (text, "") if text in choices else (None, f"choose among {', '.join(choices)}")
        if of_type == "boolean":
            low = text.lower()
            return (True, "") if low in YES else (False, "") if low in NO else (None, "type y or n")
        if of_type in ("number", "integer"):
            try:
                number = float(text)
            except ValueError:
                return None, f"type {self.hint()}"
            if of_type == "integer":
                return (int(number), "") if number.is_integer() else (None, "type a whole number")
            return number, ""
        return typed, ""


@dataclass
class Question:
    elicitation_id: str
    server: str
    message: str
    url: str | None = None
    fields: list[Field] = field(default_factory=list)
    filling: bool = False  # `e` was pressed: keys go to the current field
    at: int = 0  # the field being typed
    typed: str = ""
    values: dict[str, Value] = field(default_factory=dict)
    error: str = ""
    sending: bool = False
    outcome: str = ""  # "accept", "decline", "cancel" once settled
    by: str = ""

    @classmethod
    def of(cls, frame: dict[str, Any]) -> Question:
        given = frame.get("requested_schema")
        schema: dict[str, Any] = given if isinstance(given, dict) else {}
        listed = schema.get("properties")
        props: dict[str, Any] = listed if isinstance(listed, dict) else {}
        required = set(schema.get("required") or [])
        return cls(
            elicitation_id=str(frame.get("elicitation_id", "")),
            server=str(frame.get("server", "")),
            message=str(frame.get("message", "")),
            url=str(frame["url"]) if frame.get("mode") == "url" and frame.get("url") else None,
            fields=[_field(n, s if isinstance(s, dict) else {}, n in required) for n, s in props.items()],
        )

    @property
    def open(self) -> bool:
        return not self.outcome and not self.sending

    def key(self, char: str) -> tuple[str, dict[str, Value] | None] | None:
        """A key pressed while the question waits; (action, content) once it is answered."""
        if not self.filling:
            low = char.lower()
            if low == "n":
                return "decline", None
            if self.url is not None and low == "y":
                return "accept", None
            if self.url is None and low in ("e", *ENTER):
                self.filling, self.at, self.typed, self.values = True, 0, "", {}
                return self._skip_done()
            return None
        if char in ENTER:
            current = self.fields[self.at]
            value, problem = current.read(self.typed)
            if problem:
                self.error = f"{current.label}: {problem}"
                return None
            if value is not None:
                self.values[current.name] = value
            self.at, self.typed, self.error = self.at + 1, "", ""
            return self._skip_done()
        if char in BACKSPACES:
            self.typed = self.typed[:-1]
        elif char == "\x15":
            self.typed = ""
        elif char.isprintable():
            self.typed += char
        return None

    def _skip_done(self) -> tuple[str, dict[str, Value] | None] | None:
        if self.at >= len(self.fields):
            self.filling = False
            return "accept", dict(self.values)
        return None

    def refused(self, message: str) -> None:
        """Navi refused the answer (`bad_answer`): say why and start the form again."""
        self.sending, self.filling, self.error = False, False, message

    def render(self) -> list[RenderableType]:
        lines: list[RenderableType] = [
            Text(f"   The MCP server “{self.server}” asks: {self.message}", style="yellow")
        ]
        if self.url is not None:
            lines.append(Text(f"   page: {self.url}", style="underline"))
        if self.outcome:
            said = {"accept": ("answered", "green"), "decline": ("declined", "yellow")}.get(self.outcome)
            if self.by in ("timeout", "stop", "unattended") or said is None:
                said = (
                    {"timeout": "nobody answered in time", "stop": "stopped"}.get(self.by, "dismissed"),
                    "yellow",
                )
            lines.append(Text(f"   {said[0]}", style=said[1]))
            return lines
        if self.error:
            lines.append(Text(f"   ✗ {self.error}", style="red"))
        if self.sending:
            lines.append(Text("   answering…", style="dim"))
        elif self.filling:
            current = self.fields[self.at]
            for done in self.fields[: self.at]:
                lines.append(Text(f"   {done.label}: {self.values.get(done.name, '—')}", style="dim"))
            prompt = Text(
                f"   {current.label}{' *' if current.required else ''} ({current.hint()}): ", style="bold"
            )
            prompt.append(self.typed + "▏")
            lines.append(prompt)
        else:
            choice = Text("   Answer? ", style="bold yellow")
            choice.append(
                "[y] I will open it  [n] decline" if self.url is not None else "[e] fill in  [n] decline",
                style="bold",
            )
            lines.append(choice)
        return lines


def _field(name: str, spec: dict[str, Any], required: bool) -> Field:
    return Field(name, spec, required, of_type=str(spec.get("type") or ""))
