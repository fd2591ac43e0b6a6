"""Whether a mail is from whom its From says: the receiving server's `Authentication-Results`
(RFC 8601) and one unambiguous From.

Navi acts on a mail only when

- it has exactly one From header holding one mailbox (no group, no list), and neither that header
  nor the header block has a parse defect (`email.policy.default`'s `.defects`): what Navi reads
  as the sender is then what any careful parser reads; and
- the topmost `Authentication-Results` header whose authserv-id is the configured one (the
  receiving server prepends its own, so a header of the same id further down may be the sender's
  forgery; headers of other ids are ignored) reports a DKIM `pass` whose signing domain (`header.d`,
  else the domain of `header.i`) is the From domain or a parent of it, or a DMARC `pass` whose
  `header.from` is the From domain. Any `header.from` in that header must be the From domain (else
  the server read another From than Navi did), and a DMARC `fail` refuses whatever DKIM says. An
  SPF pass alone does not count: SPF checks the envelope, not the From.

`trust_local` (NAVI_EMAIL_TRUST_LOCAL_DELIVERY) accepts a mail that carries no such header, as one
delivered by a path that needs none; the From checks still apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.errors import (
    FirstHeaderLineIsContinuationDefect,
    HeaderDefect,
    MisplacedEnvelopeHeaderDefect,
    MissingHeaderBodySeparatorDefect,
)
from email.message import EmailMessage
from email.utils import parseaddr

_HEADER_BLOCK_DEFECTS = (
    HeaderDefect,
    FirstHeaderLineIsContinuationDefect,
    MisplacedEnvelopeHeaderDefect,
    MissingHeaderBodySeparatorDefect,
)
_METHOD = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
MAX_HEADER = 32768  # a longer Authentication-Results is not read (a server's are far shorter)
MAX_HEADERS = 100  # only the topmost are looked at: the server's own is on top


class AuthResultsError(ValueError):
    """An `Authentication-Results` value that does not parse."""


@dataclass
class Result:
    """One result of one method: `dkim=pass header.d=example.org` (property names lower case)."""

    method: str
    result: str
    props: dict[str, str] = field(default_factory=dict)
    ambiguous: bool = False  # a property given twice with different values


@dataclass
class AuthResults:
    authserv_id: str
    results: list[Result]


@dataclass
class _Token:
    kind: str  # "word", "quoted", ";" or "="
    text: str
    spaced: bool  # white space or a comment before it


def _tokens(value: str) -> list[_Token]:
    """The header's tokens: comments dropped (nested, with quoted pairs), quoted strings unquoted."""
    out: list[_Token] = []
    word: list[str] = []
    spaced = False
    i, n = 0, len(value)

    def flush() -> None:
        nonlocal spaced
        if word:
            out.append(_Token("word", "".join(word), spaced))
            word.clear()
            spaced = False

    while i < n:
        ch = value[i]
        if ch == "(":
            flush()
            depth, i = 1, i + 1
            while i < n and depth:
                if value[i] == "\\":
                    i += 1
                elif value[i] == "(":
                    depth += 1
                elif value[i] == ")":
                    depth -= 1
                i += 1
            if depth:
                raise AuthResultsError("a comment is not closed")
            spaced = True
        elif ch == '"':
            flush()
            text: list[str] = []
            i += 1
            while i < n and value[i] != '"':
                if value[i] == "\\" and i + 1 < n:
                    i += 1
                text.append(value[i])
                i += 1
            if i >= n:
                raise AuthResultsError("a quoted string is not closed")
            out.append(_Token("quoted", "".join(text), spaced))
            spaced = False
            i += 1
        elif ch in ";=":
            flush()
            out.append(_Token(ch, ch, spaced))
            spaced = False
            i += 1
        elif ch.isspace():
            flush()
            spaced = True
            i += 1
        elif ch == ")":
            raise AuthResultsError("a ')' closes no comment")
        else:
            word.append(ch)
            i += 1
    flush()
    return out


def authserv_id(value: str) -> str | None:
    """The authserv-id a header names (lower case), or None when it names none readable. Only the
    part before the first ";" is read: a header of the server whose results do not parse is still
    the server's (and refuses the mail)."""
    try:
        tokens = _tokens(value[:MAX_HEADER].partition(";")[0])
    except AuthResultsError:
        return None
    if not tokens or tokens[0].kind not in ("word", "quoted"):
        return None
    return tokens[0].text.lower()


def parse_auth_results(value: str) -> AuthResults:
    """An `Authentication-Results` value: its authserv-id and each result (AuthResultsError when it
    does not parse: a server's own header always does)."""
    if len(value) > MAX_HEADER:
        raise AuthResultsError("longer than a server writes")
    segments: list[list[_Token]] = [[]]
    for token in _tokens(value):
        if token.kind == ";":
            segments.append([])
        else:
            segments[-1].append(token)
    head, rest = segments[0], segments[1:]
    if not head or head[0].kind not in ("word", "quoted") or len(head) > 2:
        raise AuthResultsError("no authserv-id")
    if len(head) == 2 and not head[1].text.isdigit():  # the version, "1"
        raise AuthResultsError(f"{head[1].text!r} after the authserv-id")
    rest = [segment for segment in rest if segment]  # a trailing ";" is tolerated
    if len(rest) == 1 and [t.text.lower() for t in rest[0]] == ["none"]:
        return AuthResults(head[0].text.lower(), [])
    return AuthResults(head[0].text.lower(), [_resinfo(segment) for segment in rest])


def _resinfo(tokens: list[_Token]) -> Result:
    """`method[/version]=result [reason=…] [ptype.property=value …]`."""
    name, at = _key(tokens, 0)
    method = name.partition("/")[0]
    if not _METHOD.match(method) or at >= len(tokens) or tokens[at].kind != "word":
        raise AuthResultsError(f"no method=result in {' '.join(t.text for t in tokens)!r}")
    found = Result(method=method, result=tokens[at].text.lower())
    at += 1
    while at < len(tokens):
        key, at = _key(tokens, at)
        value, at = _value(tokens, at)
        if key in found.props and found.props[key] != value:
            found.ambiguous = True
        found.props.setdefault(key, value)
    return found


def _key(tokens: list[_Token], at: int) -> tuple[str, int]:
    """The words before the next "=" (CFWS allowed around the dot of ptype.property), and where
    its value starts."""
    words: list[str] = []
    while at < len(tokens) and tokens[at].kind == "word":
        words.append(tokens[at].text)
        at += 1
    if not words or at >= len(tokens) or tokens[at].kind != "=":
        raise AuthResultsError(f"{' '.join(words) or 'nothing'} is not followed by '='")
    return "".join(words).lower(), at + 1


def _value(tokens: list[_Token], at: int) -> tuple[str, int]:
    """A value: the tokens that follow one another without space (`"a b"@example.org`, a base64
    `header.b` that holds a '=')."""
    parts: list[str] = []
    while at < len(tokens) and tokens[at].kind != ";" and (not parts or not tokens[at].spaced):
        if tokens[at].kind == "=" and not parts:
            raise AuthResultsError("'=' without a value")
        parts.append(tokens[at].text)
        at += 1
    return "".join(parts), at


# --- the verdict -----------------------------------------------------------------------------------


def sender_of(message: EmailMessage) -> tuple[str, str | None]:
    """(the sender's address, lower case; why the From is not one clear mailbox, or None). The
    address of a refused From is a best guess, for the log."""
    guess = parseaddr(str(message.get("From", "")))[1].strip().lower()
    names = [name for name, _ in message.raw_items() if name.strip().lower() == "from"]
    if len(names) != 1:
        return guess, "no From header" if not names else f"{len(names)} From headers"
    block = [d for d in message.defects if isinstance(d, _HEADER_BLOCK_DEFECTS)]
    if block:
        return guess, f"the header block does not parse cleanly ({_defect(block[0])})"
    header = message["From"]
    defects = list(getattr(header, "defects", ()))
    if defects:
        return guess, f"the From header does not parse cleanly ({_defect(defects[0])})"
    groups = list(getattr(header, "groups", ()))
    if len(groups) != 1 or groups[0].display_name is not None or len(groups[0].addresses) != 1:
        return guess, "the From header is not one mailbox (a group or a list)"
    address = groups[0].addresses[0]
    spec = str(address.addr_spec)
    if not address.username or not address.domain or not spec.isascii() or not spec.isprintable():
        return guess, "the From address is incomplete or not plain ASCII"
    return spec.lower(), None


def _defect(defect: Exception) -> str:
    return f"{type(defect).__name__}: {str(defect)[:80]}"


def refusal(message: EmailMessage, address: str, *, authserv: str, trust_local: bool) -> str | None:
    """Why the mail (from `address`, as `sender_of` read it) is not acted on, or None."""
    if not authserv:
        if trust_local:
            return None
        return "neither NAVI_EMAIL_AUTHSERV_ID nor NAVI_EMAIL_TRUST_LOCAL_DELIVERY is set"
    wanted = authserv.strip().lower()
    headers = [
        str(raw) for name, raw in message.raw_items() if name.strip().lower() == "authentication-results"
    ]
    value = next((" ".join(raw.split()) for raw in headers[:MAX_HEADERS] if authserv_id(raw) == wanted), None)
    if value is None:
        return None if trust_local else f"no Authentication-Results from {wanted}"
    try:
        results = parse_auth_results(value)
    except AuthResultsError as exc:
        return f"the Authentication-Results from {wanted} do not parse: {exc}"
    return judge(results, address.rpartition("@")[2])


def judge(results: AuthResults, domain: str) -> str | None:
    """Why `results` do not authenticate a From in `domain`, or None when they do."""
    domain = _domain(domain)
    passed = False
    for r in results.results:
        read = r.props.get("header.from")
        if read is not None and (r.ambiguous or _domain(read) != domain):
            return f"{results.authserv_id} read the From domain as {_domain(read)!r}, not {domain!r}"
        if r.method == "dmarc" and r.result in ("fail", "permerror"):
            return f"dmarc={r.result} from {results.authserv_id}"
        if r.result != "pass" or r.ambiguous:
            continue
        if r.method == "dmarc" and read is not None:
            passed = True
        elif r.method == "dkim":
            signer = r.props.get("header.d") or r.props.get("header.i", "").rpartition("@")[2]
            passed = passed or aligned(signer, domain)
    if passed:
        return None
    found = ", ".join(f"{r.method}={r.result}" for r in results.results) or "none"
    return f"no DKIM or DMARC pass for {domain} from {results.authserv_id} ({found})"


def aligned(signer: str, domain: str) -> bool:
    """A DKIM signing domain vouches for the From domain: the same, or a parent of it (a key under
    `_domainkey.example.org` is published only by whoever holds example.org)."""
    signer, domain = _domain(signer), _domain(domain)
    return "." in signer and (domain == signer or domain.endswith("." + signer))


def _domain(value: str) -> str:
    return value.rpartition("@")[2].strip().strip("<>").rstrip(".").lower()


__all__ = [
    "AuthResults",
    "AuthResultsError",
    "Result",
    "aligned",
    "judge",
    "parse_auth_results",
    "refusal",
    "sender_of",
]
