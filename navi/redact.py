"""Hiding secrets in text Navi shows or writes: logs, error messages, exports.

One set of rules, used wherever a value leaves Navi for a person or a file:

- a password inside a URL (`http://user:pw@host`) becomes `user:***@host`;
- query values named like credentials (`?token=…`, `api_key=…`) become `***`;
- header lines and fields named Authorization, Cookie, X-Api-Key and the like keep their name, lose
  their value (`Bearer ***` keeps the scheme, so a reader still sees which kind was sent);
- in structured data, any key named like a credential has its value replaced.

These are best-effort filters for text Navi did not choose to print (an exception, a URL someone
configured); they are no substitute for not logging a secret in the first place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MASK = "***"

# Names (lower case, "-" as "_") whose values are credentials, in headers, query strings, JSON keys.
SECRET_NAMES = frozenset(
    {
        "authorization",
        "proxy_authorization",
        "cookie",
        "set_cookie",
        "x_api_key",
        "api_key",
        "apikey",
        "x_auth_token",
        "auth_token",
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "signature",
        "sig",
        "key",
    }
)
# In structured data a key named `key` is usually not a secret (a cache key, a setting's name).
_SECRET_KEYS = SECRET_NAMES - {"key", "sig", "signature"}

_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^\s/?#'\"<>@]*@)?")
_QUERY = re.compile(r"([?&])([A-Za-z0-9_.\-]+)=([^&#\s'\"<>;]*)")
_HEADER_NAMES = r"authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token"
_HEADER = re.compile(rf"(?i)\b({_HEADER_NAMES})(['\"]?\s*[:=]\s*['\"]?)([^\r\n'\"]+)")
# A bearer credential in free text: 8+ token characters, at least one of them not a letter (so
# "Bearer authentication" in a sentence is left alone).
_BEARER = re.compile(r"(?i)\b(bearer)\s+(?=[A-Za-z]*[0-9._~+/=\-])[A-Za-z0-9._~+/=\-]{8,}")


def _name(raw: str) -> str:
    return raw.strip().lower().replace("-", "_")


def _userinfo(match: re.Match[str]) -> str:
    scheme, info = match.group(1), match.group(2)
    if not info:
        return scheme
    user, sep, _password = info[:-1].partition(":")
    return f"{scheme}{user}:{MASK}@" if sep else f"{scheme}{info}"


def _query(match: re.Match[str]) -> str:
    sep, name, value = match.groups()
    if value and _name(name) in SECRET_NAMES:
        return f"{sep}{name}={MASK}"
    return match.group(0)


def _header(match: re.Match[str]) -> str:
    name, sep, value = match.groups()
    scheme = value.strip().split(" ", 1)
    kept = f"{scheme[0]} " if len(scheme) == 2 and scheme[0].lower() in ("bearer", "basic", "token") else ""
    return f"{name}{sep}{kept}{MASK}"


def url(value: str) -> str:
    """A URL (or text holding URLs) with passwords and credential-like query values masked."""
    return _QUERY.sub(_query, _URL.sub(_userinfo, value)) if value else value


def text(value: str) -> str:
    """Any text with the secrets it may hold masked (URLs, query strings, header lines, schemes)."""
    if not value:
        return value
    value = _URL.sub(_userinfo, value)
    value = _QUERY.sub(_query, value)
    value = _HEADER.sub(_header, value)
    return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", value)


def is_secret_name(name: str) -> bool:
    """Whether a field or header called `name` holds a credential."""
    return _name(name) in _SECRET_KEYS


def secret_value(value: Any) -> Any:
    """What a credential's value becomes: the mask, keeping an auth scheme's name."""
    if isinstance(value, str):
        scheme = value.strip().split(" ", 1)
        if len(scheme) == 2 and scheme[0].lower() in ("bearer", "basic", "token"):
            return f"{scheme[0]} {MASK}"
        return MASK if value else value
    return MASK if value not in (None, "", [], {}) else value


def data(value: Any) -> Any:
    """A copy of JSON-like data with credential-named keys masked and every string filtered."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return {
            k: secret_value(v) if isinstance(k, str) and is_secret_name(k) else data(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(data(v) for v in value)
    return value


def header_pairs(headers: Mapping[str, str]) -> dict[str, str]:
    """Request or response headers as a dict safe to log."""
    return {k: secret_value(v) if is_secret_name(k) else text(v) for k, v in headers.items()}
