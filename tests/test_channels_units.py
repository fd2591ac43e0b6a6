"""The channel framework's parts without servers: the allowlist and thread store (in memory, on
SQLite, on PostgreSQL), how a mail is read (what the person wrote, threads, authentication
results, hostile headers), how answers are split, how Matrix answers are rendered and the channel
configured, and `navi channels`."""

from __future__ import annotations

import asyncio
import dataclasses
import email
import email.policy
from collections.abc import AsyncIterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from navi.channels.base import split_text
from navi.channels.email import EmailChannel, EmailSettings, unquoted
from navi.channels.mailauth import AuthResultsError, aligned, judge, parse_auth_results, sender_of
from navi.channels.sqlstore import SqlChannelStore
from navi.channels.store import ChannelError, ChannelStore, InMemoryChannelStore
from navi.sessions.models import Session
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.sessions import SqlSessionStore
from tests.helpers.cli import run_navi

CHANNEL = EmailChannel(
    EmailSettings(
        address="navi@example.net",
        imap_host="imap.invalid",
        smtp_host="smtp.invalid",
        username="n",
        password="p",
        authserv_id="mx.example.net",
    )
)
PASS = "mx.example.net; dkim=pass header.d=example.org header.i=@example.org"


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[ChannelStore, list[str]]]:
    """A channel store and two sessions it may name (rows of the sessions table when SQL)."""
    if request.param == "memory":
        yield InMemoryChannelStore(), ["s-one", "s-two"]
        return
    url = (
        sqlite_url(str(tmp_path / "navi.db"))
        if request.param == "sqlite"
        else postgres_url(request.getfixturevalue("pg_url"))
    )
    db = Database(url)
    await migrate.upgrade(db)
    sessions = SqlSessionStore(db, str(tmp_path / "files"))
    made: list[Session] = [await sessions.create("general", owner="ana") for _ in range(2)]
    try:
        yield SqlChannelStore(db), [s.id for s in made]
    finally:
        await db.dispose()


async def test_the_allowlist_and_threads(store: tuple[ChannelStore, list[str]]) -> None:
    channels, (one, two) = store
    assert await channels.user_of("email", "ana@example.org") is None
    await channels.allow("email", "ana@example.org", "local")
    await channels.allow("email", "ana@example.org", "ana")  # listed again: the new user counts
    await channels.allow("email", "bob@example.org", "bob")
    assert await channels.user_of("email", "ana@example.org") == "ana"
    assert await channels.user_of("matrix", "ana@example.org") is None
    assert [(a.address, a.user) for a in await channels.allowed("email")] == [
        ("ana@example.org", "ana"),
        ("bob@example.org", "bob"),
    ]
    assert await channels.deny("email", "bob@example.org") is True
    assert await channels.deny("email", "bob@example.org") is False
    with pytest.raises(ChannelError):
        await channels.allow("e mail", "x@y", "ana")
    with pytest.raises(ChannelError):
        await channels.allow("email", "a b@c", "ana")

    long_key = "x" * 2000 + "@example.org"  # a hostile Message-ID: stored by its digest
    await channels.link("email", ["m1@example.org", long_key], one, "ana")
    await channels.link("email", ["m2@example.org"], two, "ana")
    await channels.link("email", ["m1@example.org"], two, "ana")  # known: its first session keeps it
    assert await channels.session_of("email", ["nope", long_key], "ana") == one
    assert await channels.session_of("email", ["m2@example.org", "m1@example.org"], "ana") == two
    assert await channels.session_of("email", ["m1@example.org"], "ana") == one
    assert await channels.session_of("email", ["m1@example.org"], "bob") is None  # not bob's thread
    assert await channels.session_of("email", [], "ana") is None


def mail(body: str = "Hello", **headers: str) -> bytes:
    """A mail as the receiving server mx.example.net delivers it (its results on top: `PASS`)."""
    message = EmailMessage()
    if results := headers.pop("Authentication_Results", PASS):
        message["Authentication-Results"] = results
    message["From"] = headers.pop("From", "Ana <Ana@Example.org>")
    message["To"] = "navi@example.net"
    message["Subject"] = headers.pop("Subject", "Re: RE: Plans")
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(body)
    return message.as_bytes()


def test_a_mail_is_read_as_the_person_wrote_it() -> None:
    raw = mail(
        "Yes, Tuesday.\n\nOn Mon, 2 Feb 2026 at 10:00, Navi <navi@example.net> wrote:\n> When?\n",
        Message_ID="<m3@example.org>",
        In_Reply_To="<m2@example.net>",
        References="<m1@example.org> <m2@example.net>",
    )
    incoming = CHANNEL.parse(raw)
    assert incoming is not None
    assert incoming.sender == "ana@example.org"
    assert incoming.text == "Yes, Tuesday."
    assert incoming.key == "m3@example.org"
    assert incoming.thread == ["m2@example.net", "m1@example.org"]
    assert incoming.title == "Plans"
    assert incoming.refused is None


def test_navi_s_own_mail_and_mail_without_a_sender_are_not_read() -> None:
    assert CHANNEL.parse(mail(From="Navi <NAVI@example.net>")) is None
    nobody = CHANNEL.parse(mail(From="nobody"))  # refused (and so logged), nothing of it read
    assert nobody is not None and nobody.refused is not None and nobody.text == ""


def test_only_the_receiving_server_s_pass_for_the_from_domain_lets_a_mail_in() -> None:
    def refused(results: str | None = PASS, **headers: str) -> str | None:
        incoming = CHANNEL.parse(mail(Authentication_Results=results or "", **headers))
        assert incoming is not None
        return incoming.refused

    assert refused() is None
    assert refused("mx.example.net; dmarc=pass header.from=example.org") is None
    assert refused(None) == "no Authentication-Results from mx.example.net"
    assert refused("mx.example.org; dkim=pass header.d=example.org") == (
        "no Authentication-Results from mx.example.net"
    )
    assert refused("mx.example.net; spf=pass smtp.mailfrom=ana@example.org") == (
        "no DKIM or DMARC pass for example.org from mx.example.net (spf=pass)"
    )
    assert refused("mx.example.net; dkim=pass header.d=evil.example").startswith("no DKIM or DMARC")
    assert refused("mx.example.net; dkim=pass header.d=example.org; dmarc=fail header.from=example.org") == (
        "dmarc=fail from mx.example.net"
    )
    assert refused("mx.example.net; dkim=fail header.d=example.org").startswith("no DKIM or DMARC")
    assert refused("mx.example.net; dkim=pass header.i=ana@example.org") is None
    assert refused("MX.Example.NET; dkim=pass header.d=EXAMPLE.org.") is None
    assert refused("mx.example.net; dkim=pass header.i=@mail.example.org").startswith("no DKIM")
    assert refused("mx.example.net; dkim=pass header.d=example.org; dmarc=pass header.from=evil.example") == (
        "mx.example.net read the From domain as 'evil.example', not 'example.org'"
    )
    assert refused("mx.example.net; dkim=pass header.d=example.org (") == (
        "the Authentication-Results from mx.example.net do not parse: a comment is not closed"
    )
    # The topmost header of the configured server counts: one of its id further down may be forged.
    raw = mail(Authentication_Results="mx.example.net; dkim=none").replace(
        b"From:", b"Authentication-Results: " + PASS.encode() + b"\r\nFrom:", 1
    )
    incoming = CHANNEL.parse(raw)
    assert incoming is not None and incoming.refused is not None
    assert "dkim=none" in incoming.refused
    # Without an authserv-id nothing passes, unless local delivery is trusted.
    for authserv, trust, expected in [
        ("", False, "neither NAVI_EMAIL_AUTHSERV_ID nor NAVI_EMAIL_TRUST_LOCAL_DELIVERY is set"),
        ("", True, None),
    ]:
        settings = dataclasses.replace(CHANNEL.settings, authserv_id=authserv, trust_local_delivery=trust)
        assert settings.refuses_all == (None if trust else expected + ": every mail is refused")
        incoming = EmailChannel(settings).parse(mail(Authentication_Results="mx.example.net; dkim=none"))
        assert incoming is not None and incoming.refused == expected
    trusting = EmailChannel(dataclasses.replace(CHANNEL.settings, trust_local_delivery=True))
    parsed = trusting.parse(mail(Authentication_Results="mx.other.example; dkim=none"))
    assert parsed is not None and parsed.refused is None  # none of the server's: a local delivery
    parsed = trusting.parse(mail(Authentication_Results="mx.example.net; dkim=none"))
    assert parsed is not None and parsed.refused is not None  # the server's results still count


def test_authentication_results_are_parsed_as_rfc_8601_writes_them() -> None:
    value = (
        'mx.example.net 1; dkim/1 = pass (2048-bit key; "unprotected") reason="good; signed"'
        " header . d=Example.ORG header.i=@example.org header.b=Ab/c+d=; spf=softfail"
        ' smtp.mailfrom="ana smith"@example.org;dmarc=pass (p=reject) header.from=example.org;'
    )
    parsed = parse_auth_results(value)
    assert parsed.authserv_id == "mx.example.net"
    dkim, spf, dmarc = parsed.results
    assert (dkim.method, dkim.result) == ("dkim", "pass")
    assert dkim.props == {
        "reason": "good; signed",
        "header.d": "Example.ORG",
        "header.i": "@example.org",
        "header.b": "Ab/c+d=",
    }
    assert spf.props == {"smtp.mailfrom": "ana smith@example.org"}
    assert (dmarc.result, dmarc.props["header.from"]) == ("pass", "example.org")
    assert parse_auth_results('"mx.example.net"; none').results == []
    # As big providers write them: every one parses, and vouches for example.org.
    for written in (
        "mx.google.com; dkim=pass header.i=@example.org header.s=google header.b=Ab/cDe+F;"
        " arc=none; spf=pass (google.com: domain of ana@example.org designates 192.0.2.1 as"
        " permitted sender) smtp.mailfrom=ana@example.org; dmarc=pass (p=NONE sp=NONE dis=NONE)"
        " header.from=example.org",
        "mx.example.net; spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=example.org; dkim=pass"
        " (signature was verified) header.d=example.org;dmarc=pass action=none"
        " header.from=example.org;compauth=pass reason=100",
        "mx.example.net; arc=none (no signatures found); dkim=pass (2048-bit rsa key sha256)"
        " header.d=example.org header.i=@example.org header.b=AbCd header.a=rsa-sha256"
        " x-bits=2048; dmarc=none policy.published-domain-policy=none (p=none,d=none)"
        " header.from=example.org; x-tls=pass smtp.version=TLSv1.3 smtp.bits=256/256",
    ):
        assert judge(parse_auth_results(written), "example.org") is None, written
    for bad in ("", "; dkim=pass", "mx x; dkim=pass", "mx; dkim", "mx; dkim=pass header.d", "mx; =pass"):
        with pytest.raises(AuthResultsError):
            parse_auth_results(bad)
    twice = parse_auth_results("mx; dkim=pass header.d=example.org header.d=evil.example").results[0]
    assert twice.ambiguous
    assert aligned("example.org", "example.org") and aligned("example.org", "mail.example.org")
    assert not aligned("mail.example.org", "example.org") and not aligned("org", "example.org")
    assert not aligned("le.org", "example.org")


def test_a_from_must_be_one_clear_mailbox() -> None:
    def sender(*froms: bytes) -> tuple[str, str | None]:
        raw = b"".join(b"From: " + f + b"\r\n" for f in froms) + b"Subject: x\r\n\r\nhi\r\n"
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        return sender_of(message)

    assert sender(b'"Ana Smith" <Ana@Example.org>') == ("ana@example.org", None)
    assert sender(b"=?utf-8?q?Ana_M=C3=BCller?= <ana@example.org>") == ("ana@example.org", None)
    assert sender(b"Ana <ana@example.org>", b"eve@evil.example")[1] == "2 From headers"
    assert sender()[1] == "no From header"
    for bad in (
        b"Friends: ana@example.org;",
        b"ana@example.org, eve@evil.example",
        b"ana@example.org (x) <eve@evil.example>",
        b"=?utf-8?q?ana=40example=2Eorg?= (eve@evil.example)",
        b"=?utf-8?q?ana?=@example.org",
        b"ana@m\xc3\xbcller.example",
        b"Ana <ana@example.org>\r\nFrom : eve@evil.example",
        b"Ana <ana@example.org>\r\nno colon\r\nFrom: eve@evil.example",
    ):
        address, why = sender(bad)
        assert why is not None, bad


def test_quoted_text_and_signatures_are_cut() -> None:
    assert unquoted("Fine.\n> quoted\n>> deeper\nThanks") == "Fine.\nThanks"
    assert unquoted("Hi\n-- \nAna, CEO\n") == "Hi"
    assert unquoted("Top\n\n-----Original Message-----\nFrom: x") == "Top"


def test_hostile_headers_do_not_crash_the_reader() -> None:
    raw = (
        b"Authentication-Results: " + PASS.encode() + b"\r\n"
        b"From: Ana <ana@example.org>\r\n"
        b"Message-ID: <" + b"a" * 5000 + b">\r\n"
        b"References: " + b" ".join(b"<r%d@x>" % i for i in range(5000)) + b"\r\n"
        b"Subject: \xff\xfe broken\r\n"
        b"Content-Type: multipart/mixed; boundary=zzz\r\n\r\n"
        b"--zzz\r\nContent-Type: text/plain\r\n\r\nhi\r\n--zzz--\r\n"
    )
    incoming = CHANNEL.parse(raw)
    assert incoming is not None
    assert incoming.text == "hi"
    assert len(incoming.thread) <= 100
    assert len(incoming.key) <= 500
    broken = CHANNEL.parse(raw.replace(b"From: Ana", b"From: =?utf-8?b?invalid?="))
    assert broken is not None and broken.refused is not None and broken.text == ""


def test_a_reply_quotes_nothing_and_threads() -> None:
    from navi.channels.base import Incoming, Outgoing

    incoming = Incoming(
        channel="email",
        sender="ana@example.org",
        text="secret question",
        key="m3@example.org",
        context={"subject": "Plans", "references": ["m1@example.org"]},
    )
    out = CHANNEL.compose(Outgoing(to="ana@example.org", text="Answer.", reply=incoming))
    assert out["Subject"] == "Re: Plans"
    assert out["In-Reply-To"] == "<m3@example.org>"
    assert out["References"] == "<m1@example.org> <m3@example.org>"
    assert "secret question" not in out.as_string()


def test_long_answers_are_split_at_paragraphs() -> None:
    text = "\n\n".join(f"Paragraph {i} " + "word " * 30 for i in range(10))
    parts = split_text(text, 400)
    assert all(len(p) <= 400 for p in parts)
    assert " ".join(" ".join(parts).split()) == " ".join(text.split())
    assert all(p.startswith("Paragraph") for p in parts)
    assert split_text("short", 400) == ["short"]


def test_navi_channels_commands(tmp_path: Path) -> None:
    def run_cli(args: list[str], env: dict[str, str]) -> Any:
        return run_navi(tmp_path, *args)

    env: dict[str, str] = {}
    assert "Nobody may talk" in run_cli(["channels", "list"], env=env).stdout
    added = run_cli(["channels", "allow", "email", "Ana <ANA@Example.org>"], env=env)
    assert added.returncode == 0 and "Allowed ana@example.org on email" in added.stdout
    refused = run_cli(["channels", "allow", "email", "bob@example.org", "--user", "bob"], env=env)
    assert refused.returncode == 1 and "no user 'bob'" in refused.stderr
    unknown = run_cli(["channels", "allow", "telegram", "@ana"], env=env)
    assert unknown.returncode == 1 and "no channel 'telegram'" in unknown.stderr
    listed = run_cli(["channels", "list"], env=env).stdout
    assert "ana@example.org" in listed and "local" in listed and "bob" not in listed
    assert run_cli(["channels", "deny", "email", "ana@example.org"], env=env).returncode == 0
    again = run_cli(["channels", "deny", "email", "ana@example.org"], env=env)
    assert again.returncode == 1 and "is not allowed" in again.stderr


def test_html_the_model_writes_is_escaped_not_passed_on() -> None:
    from navi.channels.matrix import render

    html = render('Hi <img src=x onerror="alert(1)"> and `<b>` **bold**')
    assert "<img" not in html and "&lt;img" in html
    assert "<code>&lt;b&gt;</code>" in html and "<strong>bold</strong>" in html


def test_matrix_is_configured_from_the_settings_and_its_allowlist_ids_kept() -> None:
    from navi.channels.matrix import MatrixChannel
    from navi.compose.channels import build_channels, normalize
    from navi.config import SettingsError, load_settings

    assert normalize("Matrix", " @ana:example.org ") == ("matrix", "@ana:example.org")
    assert build_channels(load_settings(navi_matrix_user="@navi:example.org")) == []
    [channel] = build_channels(
        load_settings(
            navi_matrix_homeserver="https://matrix.example.org/",
            navi_matrix_user="@navi:example.org",
            navi_matrix_access_token="token-1",
        )
    )
    assert isinstance(channel, MatrixChannel)
    assert channel.settings.homeserver == "https://matrix.example.org"
    assert channel.settings.access_token == "token-1"
    with pytest.raises(SettingsError, match="NAVI_MATRIX_HOMESERVER: must start with http"):
        load_settings(navi_matrix_homeserver="matrix.example.org")


def test_the_matrix_sdk_is_loaded_only_when_matrix_is_used() -> None:
    """Every command builds the runtime (and so the channel store); matrix-nio and aiohttp under it
    cost half a second of start-up, paid only where Matrix is configured or named."""
    import subprocess
    import sys

    probe = (
        "import sys; import navi.compose.runtime, navi.compose.services, navi.cli.channels; "
        "from navi.compose.channels import normalize; normalize('email', 'a@b.org'); "
        "print('nio' in sys.modules); normalize('matrix', '@ana:example.org'); print('nio' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_a_matrix_invite_is_from_the_sender_of_the_invite_event_only() -> None:
    """The invite event the homeserver adds comes last in the invite's state; member events before
    it are the inviting server's word, so one "sent" by someone else never names the inviter."""
    import nio

    from navi.channels.matrix import inviter_of

    navi, ana, eve = "@navi:example.org", "@ana:example.org", "@eve:evil.example"

    def member(key: str, sender: str, membership: Any = "invite") -> dict[str, Any]:
        return {
            "type": "m.room.member",
            "state_key": key,
            "sender": sender,
            "content": {"membership": membership},
        }

    def state(*events: dict[str, Any]) -> list[Any]:
        return [e for e in (nio.InviteEvent.parse_event(dict(event)) for event in events) if e is not None]

    name = {"type": "m.room.name", "state_key": "", "sender": eve, "content": {"name": "Ana's room"}}
    assert inviter_of(navi, state(name, member(navi, ana))) == ana
    forged = member(navi, ana)
    assert inviter_of(navi, state(forged, member(ana, ana, "join"), name, member(navi, eve))) == eve
    assert inviter_of(navi, state(member(navi, eve), forged)) == ana  # the last one counts, nothing else
    assert inviter_of(navi, state(forged, member(navi, eve, "leave"))) is None  # not an invite
    assert inviter_of(navi, state(forged, member(navi, eve, 5))) is None  # a malformed one: nobody
    assert inviter_of(navi, state(member(ana, ana), name)) is None  # no invite for Navi at all
    assert inviter_of(navi, []) is None


def test_a_matrix_room_is_read_by_its_joined_and_invited_members_unless_it_is_open() -> None:
    from navi.channels.base import NotPrivate
    from navi.channels.matrix import audience

    navi = "@navi:example.org"

    def member(key: Any, membership: Any) -> dict[str, Any]:
        return {"type": "m.room.member", "state_key": key, "content": {"membership": membership}}

    def rule(kind: str, **content: str) -> dict[str, Any]:
        return {"type": kind, "state_key": "", "content": content}

    members = [
        member(navi, "join"),
        member("@ana:example.org", "join"),
        member("@bob:example.org", "invite"),
        *(member(f"@{m}:example.org", m) for m in ("leave", "ban", "knock")),
        member(None, "join"),
        {"type": "m.room.member", "state_key": "@odd:example.org", "content": "garbage"},
        "not an event",
    ]
    assert audience(navi, members) == ["@ana:example.org", "@bob:example.org"]
    for join_rule in ("invite", "knock", "private"):
        assert audience(navi, [*members, rule("m.room.join_rules", join_rule=join_rule)])
    for visibility in ("shared", "invited", "joined"):
        assert audience(navi, [*members, rule("m.room.history_visibility", history_visibility=visibility)])
    for join_rule in ("public", "restricted", "knock_restricted", "something new"):
        with pytest.raises(NotPrivate, match=f"join rule is '{join_rule}'"):
            audience(navi, [*members, rule("m.room.join_rules", join_rule=join_rule)])
    with pytest.raises(NotPrivate, match="world_readable"):
        audience(navi, [*members, rule("m.room.history_visibility", history_visibility="world_readable")])


async def test_a_dropped_matrix_login_ends_its_typing_notices() -> None:
    """The typing notice of a turn keeps going through the client it started with; once that
    client is dropped (a login the homeserver revoked), no notice may go through it again: a
    request on a closed nio client opens an HTTP session on it that nobody closes (a full run
    saw the unclosed aiohttp session). Scripted client: the case is the order of two calls."""
    from navi.channels.base import Incoming
    from navi.channels.matrix import MatrixChannel, MatrixSettings

    class Client:
        def __init__(self) -> None:
            self.typing: list[bool] = []
            self.closed = False

        async def room_typing(self, room: str, typing_state: bool, **_: Any) -> None:
            assert not self.closed, "a notice through a closed client"
            self.typing.append(typing_state)

        async def close(self) -> None:
            self.closed = True

    channel = MatrixChannel(MatrixSettings(homeserver="http://127.0.0.1:9", user="@navi:test"))
    old = Client()
    channel._client = old  # type: ignore[assignment]
    message = Incoming(channel="matrix", sender="@ana:test", text="hi", key="$1", context={"room": "!r:test"})
    await channel.working(message, True)
    await asyncio.sleep(0.05)
    assert old.typing == [True]
    await channel._drop(old)  # type: ignore[arg-type]
    assert old.closed and channel._typing == {}
    await asyncio.sleep(0.05)
    assert old.typing == [True]
