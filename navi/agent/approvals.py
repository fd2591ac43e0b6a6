"""Which tool calls wait for the user before they run, and why: one rule per tool.

`NAVI_APPROVAL_MODE` picks the mode for every tool; `NAVI_APPROVAL_OVERRIDES` sets it per tool:

- `auto`: nothing asks.
- `smart` (the default): calls that run programs or code, or change files or remote state, ask —
  `terminal`, `ssh_exec`, `code_exec`, `write_tool`, `run_skill_script`, `write_skill`,
  `filesystem` except its read-only actions, `http_request` except GET, HEAD and OPTIONS, and
  `browser` when it goes to a site this conversation's browser has not been on, submits a form,
  presses a button (a page script may send anything), or types into a password field.
  Everything else runs.
- `always`: every call asks, except the purely internal tools in `INTERNAL` (unless an override
  names one of them).

Tools of MCP servers have no rule of their own: their server's entry says (`ExternalRule`) whether
`smart` mode asks (`ask`, the default) or not (`auto`), or whether their calls are refused in
every mode (`deny`). `always` and `auto` treat them like any tool; an override naming one wins.

The rules read only the call's arguments, after the engine checked them against the tool's schema,
and, for a tool whose arguments alone cannot say (the browser's `click 3`), the facts the tool
gives about them (`Tool.call_facts`: what element 3 is on the page the model saw), so tools know
nothing about approvals. An action or method a rule does not know asks: a tool that
gains an operation is safe before its rule learns of it.

"Always" is remembered per tool, per program (the command's argv[0] as typed) for `terminal`, and
per site for `browser`: `subject()` names what a remembered answer covers. For the `VERSIONED`
tools (a skill's scripts) the policy's `versioned` hook names it from what the call would run as
it is now — the skill and a hash of its files — so a changed file asks again.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["auto", "smart", "always"]
MODES: tuple[Mode, ...] = ("auto", "smart", "always")
Decision = Literal["allow", "deny", "always"]
DECISIONS: tuple[Decision, ...] = ("allow", "deny", "always")

# Never asked in `always` mode: they only read or write the run's own notes and Navi's own docs.
INTERNAL = frozenset({"todo", "scratchpad", "recall", "list_tools", "tool_manual"})
# The filesystem tool's actions that change nothing; every other action (write, append, mkdir,
# move, copy, delete, and any action added later) asks in `smart` mode.
FS_READ_ONLY = frozenset({"read", "list", "find", "info"})
# HTTP methods that only read (RFC 9110's safe methods less TRACE, which the tool does not offer).
HTTP_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
# Programs that run other programs: remembering "always" for one of them would allow anything, so
# for these "Always" is not offered and every call asks.
WRAPPERS = frozenset(
    {
        "sudo", "doas", "su", "env", "nohup", "nice", "ionice", "timeout", "stdbuf", "setsid",
        "xargs", "busybox", "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "perl",
        "ruby", "node", "php", "lua", "ssh", "exec", "eval", "time", "watch", "flock", "chroot",
        "unshare", "nsenter", "runuser", "script", "strace", "gdb",
    }
)  # fmt: skip
SHELL_CHARACTERS = frozenset("|&;<>()$`\n\r")
MAX_SUBJECT = 512  # the longest program name a remembered answer can hold


def _clip(text: Any, limit: int = 120) -> str:
    text = str(text)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def program(command: Any) -> str | None:
    """argv[0] of a terminal command as typed, or None when the command cannot be pinned to one
    program (empty, unbalanced quotes, or shell syntax a shell-less runner would refuse)."""
    if not isinstance(command, str) or any(c in SHELL_CHARACTERS for c in command):
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    return argv[0] if argv else None


def _terminal(args: dict[str, Any]) -> str:
    return f"it runs a program on this machine: {_clip(args.get('command', ''))}"


def _ssh(args: dict[str, Any]) -> str:
    host = _clip(args.get("host", ""), 60)
    return f"it runs a command on the SSH host '{host}': {_clip(args.get('command', ''))}"


def _code(args: dict[str, Any]) -> str:
    return "it runs Python code on this machine"


def _write_tool(args: dict[str, Any]) -> str:
    return f"it writes the tool '{_clip(args.get('name', ''), 60)}' and loads its code into Navi"


def _skill_script(args: dict[str, Any]) -> str:
    skill, script = _clip(args.get("skill", ""), 64), _clip(args.get("script", ""), 120)
    return f"the skill '{skill}' wants to run {script} (in the sandbox)"


def _write_skill(args: dict[str, Any]) -> str:
    return f"it saves the skill '{_clip(args.get('name', ''), 64)}' (instructions and scripts Navi may run)"


def _filesystem(args: dict[str, Any]) -> str | None:
    action = str(args.get("action", "")).lower()
    if action in FS_READ_ONLY:
        return None
    target = _clip(args.get("path", ""))
    if args.get("destination") is not None:
        target += f" → {_clip(args['destination'])}"
    return f"it changes files ({action or 'unknown action'}): {target}"


def _http(args: dict[str, Any]) -> str | None:
    method = str(args.get("method", "")).upper()
    if method in HTTP_SAFE:
        return None
    url = _clip(args.get("url", ""))
    return f"it sends an HTTP {method or 'request'} to {url}, which may change something there"


# The browser's actions that change nothing elsewhere (`open`, `click` and `type` are judged by
# `_browser`; any action added later asks).
BROWSER_QUIET = frozenset({"read", "scroll", "screenshot", "back", "tabs", "close", "select"})


def _is_button(element: Mapping[str, Any]) -> bool:
    """A button that is not a link: a `<button>`, an `<input>` of type button, or anything with the
    role (a link with an address is judged as a link)."""
    tag, kind = str(element.get("tag", "")), str(element.get("type", ""))
    if tag == "a" and element.get("href"):
        return False
    pressed = tag == "button" or (tag == "input" and kind in ("button", "reset"))
    return pressed or element.get("role") == "button"


def _browser(args: dict[str, Any], facts: Mapping[str, Any]) -> str | None:
    action = str(args.get("action", ""))
    element = facts.get("element") or {}
    where = _clip(facts.get("site") or "the page", 80)
    if action == "open":
        if facts.get("profile"):  # the model acts as the user, signed in
            target = _clip(facts.get("site") or args.get("url", ""), 80)
            return f"the browser opens {target} signed in with your profile {_clip(facts['profile'], 40)!r}"
        if facts.get("new_site", True):
            target = facts.get("site") or args.get("url", "")
            return f"the browser goes to a site it has not been on in this conversation: {_clip(target, 80)}"
        return None
    if action == "click":
        label = _clip(element.get("label", ""), 60)
        if element.get("submits"):
            method = str(element["submits"]).upper()
            return f"the click submits a form ({method}) on {where}: {label!r}"
        if facts.get("new_site"):
            return f"the click follows a link to a site not visited yet: {_clip(facts.get('link_site'), 80)}"
        if _is_button(element):  # what it does is the page script's to say: it may send anything
            return f"the click presses a button on {where}, whose page script may send something: {label!r}"
        return None
    if action == "type":
        if element.get("password"):
            return f"it types into a password field on {where}"
        if args.get("submit"):
            return f"it presses Enter in a field on {where}, which submits its form"
        return None
    if action in BROWSER_QUIET:
        return None
    return f"the browser action {_clip(action, 40)!r} is not one the approval rules know"


# Rules that also read the facts the tool gives about the call (`Tool.call_facts`).
FACT_RULES: dict[str, Callable[[dict[str, Any], Mapping[str, Any]], str | None]] = {
    "browser": _browser,
}

# smart mode: tool → the reason its call asks (None: it runs). Tools not listed run.
SMART_RULES: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "terminal": _terminal,
    "ssh_exec": _ssh,
    "code_exec": _code,
    "write_tool": _write_tool,
    "run_skill_script": _skill_script,
    "write_skill": _write_skill,
    "filesystem": _filesystem,
    "http_request": _http,
}


@dataclass(frozen=True)
class ExternalRule:
    """How calls of a tool that comes from outside Navi (an MCP server's) are approved."""

    approval: Literal["ask", "auto", "deny"]
    source: str  # "the MCP server 'git'"
    remote_name: str = ""  # the tool's name there


# Tools whose "always" is remembered for what the call runs as it is now (`Versioned`), never for the
# whole tool: a skill's scripts are approved per skill and version, and a changed file asks again.
VERSIONED = frozenset({"run_skill_script"})


@dataclass(frozen=True)
class Versioned:
    """What a call of a `VERSIONED` tool is remembered by: a subject naming the content (a skill's
    name and the hash of its files), how to say it to people, and an extra reason to show."""

    subject: str
    scope: str
    note: str = ""


@dataclass(frozen=True)
class ApprovalPolicy:
    mode: Mode = "smart"
    overrides: Mapping[str, Mode] = field(default_factory=dict)
    timeout_seconds: float = 300.0  # no answer by then counts as a denial
    # The rule of a tool from outside Navi (MCP servers' tools), None for Navi's own tools.
    external: Callable[[str], ExternalRule | None] = lambda _tool: None
    # (owner, tool, args) → what a `VERSIONED` tool's call is remembered by (None: it cannot be).
    versioned: Callable[[str, str, dict[str, Any]], Versioned | None] = lambda _owner, _tool, _args: None

    def mode_for(self, tool: str) -> Mode:
        return self.overrides.get(tool, self.mode)

    def refusal(self, tool: str) -> str | None:
        """Why no call of `tool` may run at all (its server's entry says `deny`), or None."""
        rule = self.external(tool)
        if rule is None or rule.approval != "deny":
            return None
        return (
            f'calls of {tool} are not allowed: {rule.source} is set to "approval": "deny" in '
            "MCP_SERVERS_FILE. Carry on without it, or tell the user what you wanted to do."
        )

    def reason(self, tool: str, args: dict[str, Any], facts: Mapping[str, Any] | None = None) -> str | None:
        """Why this call must wait for the user, or None when it may run; `facts` are what the
        tool says about the call (`Tool.call_facts`), for the rules in `FACT_RULES`."""
        mode = self.mode_for(tool)
        if mode == "auto":
            return None
        rule = SMART_RULES.get(tool)
        why = rule(args) if rule is not None else None
        if tool in FACT_RULES:
            why = FACT_RULES[tool](args, facts or {})
        external = self.external(tool)
        if external is not None and external.approval != "auto":
            why = f"it runs the tool '{_clip(external.remote_name or tool, 80)}' of {external.source}"
        if mode == "smart" or why is not None:
            return why
        if tool in INTERNAL and tool not in self.overrides:
            return None
        setting = "NAVI_APPROVAL_OVERRIDES" if tool in self.overrides else "NAVI_APPROVAL_MODE"
        return f"every {tool} call asks first ({setting} is always)"


def subject(tool: str, args: dict[str, Any], facts: Mapping[str, Any] | None = None) -> str | None:
    """What an "always" answer to this call is remembered for: "" for the whole tool, the program
    for `terminal`, the site for `browser`, None when it cannot be remembered (the call then asks
    every time)."""
    if tool in VERSIONED:
        return None  # only a `Versioned` subject, which the gate asks the policy for
    if tool == "browser":
        site = str((facts or {}).get("site") or "")
        return f"site:{site}" if site and len(site) <= MAX_SUBJECT else None
    if tool != "terminal":
        return ""
    name = program(args.get("command"))
    if name is None or len(name) > MAX_SUBJECT or name.rsplit("/", 1)[-1] in WRAPPERS:
        return None
    return name


def scope(tool: str, subject: str | None) -> str | None:
    """What "Always" would allow from now on, for people (None: it is not offered)."""
    if subject is None:
        return None
    if tool == "terminal":
        return f"every terminal command that runs {subject}"
    if tool == "browser":
        return f"every browser action on {subject.removeprefix('site:')} (forms, passwords, links)"
    return f"every {tool} call"
