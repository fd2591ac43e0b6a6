"""`MCP_SERVERS_FILE`: the MCP servers Navi starts, in the `mcpServers` shape other clients use.

```json
{"mcpServers": {
  "time": {"command": "mcp-server-time", "args": [], "env": {}, "cwd": "/tmp"},
  "docs": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer …"},
           "profiles": ["secretary"], "approval": "auto", "timeout": 30, "disabled": false}
}}
```

An entry is stdio (`command`, optional `args`, `env`, `cwd`) or streamable HTTP (`url`, optional
`headers`). Navi's own keys: `profiles` (offer the tools only to these profiles), `approval`
(`ask`, `auto` or `deny`: what `smart` approval mode does with their calls), `timeout` (seconds
per call) and `disabled`. Unknown keys are refused, not ignored: a typo such as `"aproval"` would
otherwise silently leave a server's calls unasked or asked. Everything wrong is one `McpConfigError`
naming the file, the server and the problem.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

Approval = Literal["ask", "auto", "deny"]
APPROVALS: tuple[Approval, ...] = ("ask", "auto", "deny")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
MAX_FILE_BYTES = 1_000_000

STDIO_KEYS = {"command", "args", "env", "cwd"}
HTTP_KEYS = {"url", "headers", "oauth"}
NAVI_KEYS = {"profiles", "approval", "timeout", "disabled"}
# Keys other clients write that mean nothing to Navi's transports but are harmless to accept.
TOLERATED_KEYS = {"type", "transport", "description"}

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpConfigError(ValueError):
    """The servers file cannot be used; the message is one line naming the file and the problem."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    oauth: bool = False  # the server issues its own tokens (OAuth): `navi mcp-login NAME` signs in
    oauth_scope: str | None = None
    profiles: tuple[str, ...] | None = None  # None: every profile
    approval: Approval = "ask"
    timeout: float = DEFAULT_TIMEOUT
    disabled: bool = False

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    @property
    def prefix(self) -> str:
        """The server's name as it starts its tools' names: only letters, digits, `_` and `-`."""
        return sanitize(self.name)[:40] or "mcp"

    def describe(self) -> str:
        """Where the server is, for logs and `navi doctor` (never the headers or env values)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        parts = urlsplit(self.url or "")
        return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


def tokens_file(db_path: str) -> str:
    """Where the OAuth tokens of MCP servers live (`oauth.py`): beside the database, like Navi's
    access token file."""
    return str(Path(db_path).expanduser().parent / "navi_mcp_oauth.json")


def sanitize(text: str) -> str:
    """`text` with every character a model backend refuses in a tool name replaced by `_`."""
    return _UNSAFE.sub("_", text)


def load_servers(path: str | Path) -> list[ServerConfig]:
    """The servers in `path`, in file order (disabled ones included); `McpConfigError` when the file
    is missing, unreadable, not JSON, or an entry is wrong."""
    where = str(Path(path).expanduser())
    try:
        raw = Path(where).read_bytes()
    except FileNotFoundError:
        raise McpConfigError(f"MCP_SERVERS_FILE {where}: no such file") from None
    except OSError as exc:
        raise McpConfigError(f"MCP_SERVERS_FILE {where}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise McpConfigError(f"MCP_SERVERS_FILE {where}: larger than {MAX_FILE_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise McpConfigError(f"MCP_SERVERS_FILE {where}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise McpConfigError(
            f"MCP_SERVERS_FILE {where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    return parse_servers(data, where)


def parse_servers(data: Any, where: str = "MCP_SERVERS_FILE") -> list[ServerConfig]:
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise McpConfigError(
            f'MCP_SERVERS_FILE {where}: expected an object with "mcpServers": {{name: entry}}'
        )
    servers: list[ServerConfig] = []
    prefixes: dict[str, str] = {}
    for name, entry in data["mcpServers"].items():
        if not name.strip():
            raise McpConfigError(f"MCP_SERVERS_FILE {where}: a server has an empty name")
        server = _entry(name, entry, f"MCP_SERVERS_FILE {where}: server {name!r}")
        if server.prefix in prefixes:
            raise McpConfigError(
                f"MCP_SERVERS_FILE {where}: servers {prefixes[server.prefix]!r} and {name!r} would give "
                f"their tools the same prefix {server.prefix!r}; rename one"
            )
        prefixes[server.prefix] = name
        servers.append(server)
    return servers


def _entry(name: str, entry: Any, here: str) -> ServerConfig:
    if not isinstance(entry, dict):
        raise McpConfigError(f"{here}: expected an object")
    unknown = set(entry) - STDIO_KEYS - HTTP_KEYS - NAVI_KEYS - TOLERATED_KEYS
    if unknown:
        raise McpConfigError(f"{here}: unknown key {sorted(unknown)[0]!r}")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise McpConfigError(f'{here}: needs either "command" (stdio) or "url" (streamable HTTP), not both')
    common: dict[str, Any] = {
        "name": name,
        "profiles": _profiles(entry.get("profiles"), here),
        "approval": _approval(entry.get("approval", "ask"), here),
        "timeout": _timeout(entry.get("timeout", DEFAULT_TIMEOUT), here),
        "disabled": _bool(entry.get("disabled", False), "disabled", here),
    }
    if has_command:
        stray = set(entry) & HTTP_KEYS
        if stray:
            raise McpConfigError(f'{here}: "{sorted(stray)[0]}" belongs to URL servers, not to command ones')
        command = entry["command"]
        if not isinstance(command, str) or not command.strip() or "\0" in command:
            raise McpConfigError(f'{here}: "command" must be a non-empty string')
        cwd = entry.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not cwd):
            raise McpConfigError(f'{here}: "cwd" must be a folder path')
        return ServerConfig(
            command=command,
            args=tuple(_strings(entry.get("args", []), "args", here)),
            env=_mapping(entry.get("env", {}), "env", here),
            cwd=str(Path(cwd).expanduser()) if cwd else None,
            **common,
        )
    stray = set(entry) & (STDIO_KEYS - {"command"})
    if stray:
        raise McpConfigError(f'{here}: "{sorted(stray)[0]}" belongs to command servers, not to URL ones')
    url = entry["url"]
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise McpConfigError(f'{here}: "url" must be an http:// or https:// address')
    oauth, scope = _oauth(entry.get("oauth", False), here)
    headers = _mapping(entry.get("headers", {}), "headers", here)
    return ServerConfig(url=url, headers=headers, oauth=oauth, oauth_scope=scope, **common)


def _oauth(value: Any, here: str) -> tuple[bool, str | None]:
    """`"oauth": true`, or `{"scope": "read write"}` to ask for those scopes."""
    if isinstance(value, bool):
        return value, None
    if isinstance(value, dict) and set(value) <= {"scope"}:
        scope = value.get("scope")
        if scope is None or (isinstance(scope, str) and scope.strip()):
            return True, scope
    raise McpConfigError(f'{here}: "oauth" must be true, false or {{"scope": "…"}}')


def _strings(value: Any, key: str, here: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and "\0" not in v for v in value):
        raise McpConfigError(f'{here}: "{key}" must be a list of strings')
    return list(value)


def _mapping(value: Any, key: str, here: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) and "\0" not in v for v in value.values()):
        raise McpConfigError(f'{here}: "{key}" must be an object of strings')
    if any(not k or "\0" in k or (key == "env" and "=" in k) for k in value):
        raise McpConfigError(f'{here}: "{key}" has an invalid name')
    return dict(value)


def _profiles(value: Any, here: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(_strings(value, "profiles", here))


def _approval(value: Any, here: str) -> Approval:
    for approval in APPROVALS:
        if value == approval:
            return approval
    raise McpConfigError(f'{here}: "approval" must be one of {", ".join(APPROVALS)} (got {value!r})')


def _timeout(value: Any, here: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT:
        raise McpConfigError(
            f'{here}: "timeout" must be a number of seconds, above 0 and at most {MAX_TIMEOUT:g}'
        )
    return float(value)


def _bool(value: Any, key: str, here: str) -> bool:
    if not isinstance(value, bool):
        raise McpConfigError(f'{here}: "{key}" must be true or false')
    return value
