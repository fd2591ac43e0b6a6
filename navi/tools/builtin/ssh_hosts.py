"""The SSH hosts file `ssh_exec` reads (setting `SSH_HOSTS_FILE`): named hosts, checked entry by entry.

The file is read on every call, so edits apply without a restart. Its format, and how host keys
are verified, are described in `navi.tools.builtin.ssh`. Relative `key_file`/`known_hosts` paths are
relative to the file's directory; `~` is expanded; unknown fields are rejected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"

_FIELDS = ("host", "port", "username", "key_file", "passphrase", "password", "known_hosts")
_EXAMPLE = (
    '{"hosts": {"nas": {"host": "192.168.1.10", "port": 22, "username": "me", '
    '"key_file": "~/.ssh/id_ed25519"}}}'
)
# OpenSSH StrictHostKeyChecking words someone might put in `known_hosts`; they are not paths.
_POLICY_WORDS = ("accept-new", "yes", "no", "ask", "off", "false", "true", "none")


class SshError(Exception):
    """A problem the model (or the user) can act on; its text becomes the failed result's error."""


@dataclass(frozen=True)
class SshHost:
    """One entry of the hosts file, validated. Frozen and comparable: a changed entry reconnects."""

    name: str
    host: str
    username: str
    port: int = 22
    key_file: str | None = None
    passphrase: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    known_hosts: str | None = None  # an absolute path, or None: do not verify the host key

    @property
    def keyscan(self) -> str:
        """How to record the host's key, without its address (the user fills in the hosts file's values)."""
        return (
            f"ssh-keyscan -p PORT HOST >> {self.known_hosts or DEFAULT_KNOWN_HOSTS}, with the host and port "
            f"of '{self.name}' from the SSH hosts file"
        )


def _resolve(path: str, base: Path) -> str:
    p = Path(path).expanduser()
    return str(p if p.is_absolute() else base / p)


def _optional_str(name: str, entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise SshError(f"host '{name}': `{key}` must be a non-empty string or null")
    return value


def parse_host(name: str, entry: object, base: Path) -> SshHost:
    """Validate one hosts-file entry; `base` is the directory relative paths are resolved against."""
    if not isinstance(entry, dict):
        raise SshError(f"host '{name}' must be a JSON object with at least `host` and `username`")
    unknown = sorted(set(entry) - set(_FIELDS))
    if unknown:
        raise SshError(
            f"host '{name}': unknown field(s) {', '.join(unknown)} (allowed: {', '.join(_FIELDS)})"
        )
    missing = [key for key in ("host", "username") if not entry.get(key)]
    if missing:
        raise SshError(f"host '{name}' is missing {' and '.join(f'`{key}`' for key in missing)}")
    host, username = entry["host"], entry["username"]
    if not isinstance(host, str) or not isinstance(username, str):
        raise SshError(f"host '{name}': `host` and `username` must be strings")
    port = entry.get("port", 22)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise SshError(f"host '{name}': `port` must be an integer from 1 to 65535, not {port!r}")
    key_file = _optional_str(name, entry, "key_file")
    password = _optional_str(name, entry, "password")
    passphrase = _optional_str(name, entry, "passphrase")
    if key_file is None and password is None:
        raise SshError(f"host '{name}' needs `key_file` (a private key path) or `password` to log in")
    known_hosts: str | None = DEFAULT_KNOWN_HOSTS
    if "known_hosts" in entry:
        known_hosts = _optional_str(name, entry, "known_hosts")
        if known_hosts is not None and known_hosts.lower() in _POLICY_WORDS:
            raise SshError(
                f"host '{name}': `known_hosts` is the path of a known_hosts file (or null to skip "
                f"host key verification), not '{known_hosts}'. To trust a new host, record its key: "
                f"ssh-keyscan -p PORT HOST >> {DEFAULT_KNOWN_HOSTS} with the host and port of '{name}' "
                "(after checking the fingerprint)"
            )
    return SshHost(
        name=name,
        host=host,
        username=username,
        port=port,
        key_file=_resolve(key_file, base) if key_file else None,
        passphrase=passphrase,
        password=password,
        known_hosts=_resolve(known_hosts, base) if known_hosts else None,
    )


def load_host(hosts_file: str, name: str) -> SshHost:
    """Read the hosts file now (edits apply without a restart) and return the entry called `name`.

    Only that entry is validated, so one broken entry does not block the others.
    """
    path = Path(hosts_file).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SshError(
            f"the SSH hosts file {path.absolute()} does not exist (setting SSH_HOSTS_FILE). "
            f"Create it with the hosts Navi may use, e.g. {_EXAMPLE}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SshError(f"cannot read the SSH hosts file {path.absolute()}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SshError(
            f"the SSH hosts file {path.absolute()} is not valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from None
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, dict):
        raise SshError(
            f"the SSH hosts file {path.absolute()} must be a JSON object with a `hosts` object "
            f"mapping names to hosts, e.g. {_EXAMPLE}"
        )
    if name not in hosts:
        known = ", ".join(sorted(hosts)) or "none"
        raise SshError(f"there is no SSH host named '{name}' in {path.absolute()}. Known hosts: {known}")
    return parse_host(name, hosts[name], path.absolute().parent)
