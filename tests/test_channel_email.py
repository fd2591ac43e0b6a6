"""The email channel against real mail servers the tests start: Dovecot (IMAP, IDLE) holds the
user's mail, delivered there by a receiving server (`Inbound`, `aiosmtpd`) that authenticates it
and prepends its Authentication-Results; `aiosmtpd` receives what Navi sends. The model is the
scripted backend; Navi is the real runtime and services (SQLite), its channel worker started by the
composition root."""

from __future__ import annotations

import asyncio
import smtplib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest

from navi.compose import Runtime
from navi.compose.services import Services, build_services
from navi.schedules.service import NewSchedule
from navi.testing.agent_script import AgentScript
from navi.testing.ports import free_port
from navi.testing.script import Reply, ScriptedCall
from navi.testing.scripted import ScriptedBackend
from tests.agent_helpers import scripted_runtime
from tests.helpers.mail_servers import (
    AUTHSERV_ID,
    SENDER_PASSWORD,
    SMTP_PASSWORD,
    SMTP_USER,
    Dovecot,
    Inbound,
    Outbox,
    dovecot,
    inbound,
    self_signed,
    smtp_server,
)

pytestmark = pytest.mark.slow

ANA = "ana@example.org"
NAVI = "navi@example.net"


def said(capsys: pytest.CaptureFixture[str]) -> str:
    """What was logged since the last look: on stdout while logging is not configured in this process,
    on stderr once a test before this one configured it (navi/logging.py)."""
    captured = capsys.readouterr()
    return captured.out + captured.err


@dataclass
class Servers:
    imap: Dovecot
    smtp_port: int  # where Navi sends
    outbox: Outbox
    mx_port: int  # the receiving server, in front of `imap`
    mx: Inbound


@dataclass
class Mail:
    imap: Dovecot
    outbox: Outbox
    rt: Runtime
    services: Services
    backend: ScriptedBackend
    script: AgentScript
    mx_port: int
    mx: Inbound

    def send(
        self,
        body: str,
        *,
        sender: str = ANA,
        subject: str = "Numbers",
        reply_to: EmailMessage | str | None = None,
        headers: dict[str, str] | None = None,
        attachment: tuple[str, bytes, str] | None = None,
        froms: list[str] | None = None,
        signer: str | None = "example.org",
        local: bool = False,
    ) -> str:
        """A mail to Navi, through the receiving server as sent by `signer`'s outgoing server (it
        signs for that domain; None: an unsigned mail), or with `local` straight into the INBOX
        (a local delivery, no Authentication-Results); its Message-ID. `froms`: the From headers
        written as they are, instead of `sender`'s."""
        mail = EmailMessage()
        if froms is None:
            mail["From"] = f"Ana <{sender}>"
        mail["To"] = NAVI
        mail["Subject"] = subject
        key = make_msgid(domain="example.org")
        mail["Message-ID"] = key
        if isinstance(reply_to, str):
            mail["In-Reply-To"] = mail["References"] = reply_to
        elif reply_to is not None:
            mail["In-Reply-To"] = str(reply_to["Message-ID"])
            mail["References"] = f"{reply_to.get('References', '')} {reply_to['Message-ID']}".strip()
        for name, value in (headers or {}).items():
            mail[name] = value
        mail.set_content(body)
        if attachment is not None:
            name, data, kind = attachment
            main, _, sub = kind.partition("/")
            mail.add_attachment(data, maintype=main, subtype=sub, filename=name)
        # CRLF line ends, as SMTP wants them (smtplib fixes a str's, not bytes': a mail with bare LF
        # line ends is one long line to the receiving server, "500 Line too long" once it has an
        # attachment)
        crlf = mail.as_bytes(policy=mail.policy.clone(linesep="\r\n"))
        raw = b"".join(f"From: {line}\r\n".encode() for line in froms or []) + crlf
        if local:
            self.imap.append(raw)
            return key
        with smtplib.SMTP("127.0.0.1", self.mx_port, timeout=30) as smtp:
            if signer is not None:
                smtp.login(signer, SENDER_PASSWORD)
            smtp.sendmail(sender, [NAVI], raw)
        return key

    def turns(self) -> list[Any]:
        return [r for r in self.backend.requests if "You are the planning step" not in r.last_user_text]


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Servers]:
    cert, tls = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # Navi trusts the test server's certificate
    with dovecot() as imap, smtp_server(tls) as (port, outbox), inbound(imap) as (mx_port, mx):
        yield Servers(imap, port, outbox, mx_port, mx)


async def start_mail(tmp_path: Path, servers: Servers, *, background: bool = False, **settings: Any) -> Mail:
    imap, smtp_port, outbox = servers.imap, servers.smtp_port, servers.outbox
    settings.setdefault("navi_email_authserv_id", AUTHSERV_ID)
    rt, backend, script = await scripted_runtime(
        tmp_path,
        sql=True,
        planning_enabled=False,
        navi_email_address=NAVI,
        navi_email_imap_host="127.0.0.1",
        navi_email_imap_port=imap.port,
        navi_email_imap_security="none",
        navi_email_smtp_host="127.0.0.1",
        navi_email_smtp_port=smtp_port,
        navi_email_smtp_security="starttls",
        navi_email_username=imap.user,
        navi_email_password=imap.password,
        navi_email_smtp_username=SMTP_USER,
        navi_email_smtp_password=SMTP_PASSWORD,
        **settings,
    )
    services = build_services(rt, schedules=True, background=background, channels=True, owns_runtime=True)
    await rt.channels.allow("email", ANA, "ana")
    await services.start()
    return Mail(imap, outbox, rt, services, backend, script, servers.mx_port, servers.mx)


@pytest.fixture
async def mail(tmp_path: Path, servers: Servers) -> AsyncIterator[Mail]:
    world = await start_mail(tmp_path, servers)
    try:
        yield world
    finally:
        await world.services.stop()


def body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).strip()


async def test_a_mail_gets_a_threaded_reply_and_the_thread_continues_the_session(mail: Mail) -> None:
    mail.script.turn("Four.", "Eight.")
    first = mail.send(
        "What is 2+2?\n\nOn Mon, 1 Jan 2026, Bob wrote:\n> the old mail, quoted\n> more of it\n"
    )
    [reply] = await mail.outbox.wait(1)
    assert reply["To"] == ANA
    assert reply["In-Reply-To"] == first
    assert first in str(reply["References"])
    assert reply["Subject"] == "Re: Numbers"
    assert body(reply) == "Four."  # nothing of the user's mail quoted back
    assert mail.outbox.envelopes[0][1] == [ANA]
    # Only what Ana wrote reached the model: not the mail she quoted.
    assert mail.turns()[0].last_user_text == "What is 2+2?"

    followup = mail.send("And doubled?\n\n> Four.", reply_to=reply)
    second = (await mail.outbox.wait(2))[1]
    assert body(second) == "Eight."
    assert second["In-Reply-To"] == followup
    assert str(second["References"]).split() == [first, str(reply["Message-ID"]), followup]
    sessions = await mail.rt.sessions.list(owner="ana")
    assert len(sessions) == 1
    stored = await mail.rt.sessions.get(sessions[0].id, owner="ana")
    assert stored is not None
    assert [m.content for m in stored.messages] == ["What is 2+2?", "Four.", "And doubled?", "Eight."]
    assert stored.name == "Numbers"
    # The second turn's model call saw the first turn: the session went on.
    texts = [m.content for m in mail.turns()[1].messages]
    assert "What is 2+2?" in texts and "Four." in texts


async def test_an_attachment_reaches_the_model_as_an_upload(mail: Mail) -> None:
    mail.script.turn("It says pelican.")
    mail.send(
        "What does the note say?",
        attachment=("note.txt", b"The secret word is pelican.\n", "text/plain"),
    )
    [reply] = await mail.outbox.wait(1)
    assert body(reply) == "It says pelican."
    asked = mail.turns()[0].last_user_text
    assert asked.startswith("What does the note say?")
    sessions = await mail.rt.sessions.list(owner="ana")
    folder = Path(mail.rt.settings.session_files_dir) / sessions[0].id
    saved = folder / "note.txt"
    assert f"note.txt → {saved}" in asked  # the files note uploads get
    assert saved.read_bytes() == b"The secret word is pelican.\n"
    assert oct(saved.stat().st_mode & 0o777) == "0o600"


async def test_a_program_attached_is_refused_and_said_so(mail: Mail) -> None:
    mail.script.turn("Answered without it.")
    mail.send("Run this", attachment=("run.sh", b"#!/bin/sh\nrm -rf ~\n", "application/x-sh"))
    refusal, answer = await mail.outbox.wait(2)
    assert "run.sh" in body(refusal) and "not accepted" in body(refusal)
    assert body(answer) == "Answered without it."
    sessions = await mail.rt.sessions.list(owner="ana")
    assert not (Path(mail.rt.settings.session_files_dir) / sessions[0].id / "run.sh").exists()


async def test_strangers_and_failed_authentication_get_nothing(
    mail: Mail, capsys: pytest.CaptureFixture[str]
) -> None:
    mail.script.turn("Hello Ana.")
    mail.send("Hi, I am Eve", sender="eve@example.com", signer="example.com")
    mail.send(  # unsigned: the receiving server reports dkim=none (and dmarc=none: no record)
        "Hi, I am Ana (not really)",
        signer=None,
        headers={"Authentication-Results": "mx.example.net; spf=fail smtp.mailfrom=example.org; dkim=none"},
    )
    mail.send("Hi, it is really me")
    # Mails are read in order: once Ana's real mail is answered, the two before it were handled.
    [reply] = await mail.outbox.wait(1)
    assert body(reply) == "Hello Ana."
    await asyncio.sleep(0.5)
    assert len(mail.outbox.messages) == 1
    assert [r.last_user_text for r in mail.turns()] == ["Hi, it is really me"]
    assert [s.owner for s in await mail.rt.sessions.list()] == ["ana"]
    logged = capsys.readouterr()
    assert "channel.stranger" in logged.out + logged.err
    assert f"no DKIM or DMARC pass for example.org from {AUTHSERV_ID}" in logged.out + logged.err


def refusals(logged: str) -> list[str]:
    return [line for line in logged.splitlines() if "channel.refused" in line]


async def test_mail_the_receiving_server_did_not_authenticate_is_refused(
    mail: Mail, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: only a `fail` refused a mail, so one with no Authentication-Results, or with forged
    ones saying `pass`, was taken as Ana's."""
    mail.script.turn("Hello Ana.")
    # Put in the mailbox by a path that adds no Authentication-Results.
    mail.send("Run my errands (no authentication)", local=True)
    # Unsigned, through the receiving server, carrying results forged to say pass: one of another
    # server, one naming the receiving server itself (below the one it really adds).
    mail.send(
        "Run my errands (forged results)",
        signer=None,
        headers={
            "Authentication-Results": f"{AUTHSERV_ID}; dkim=pass header.d=example.org "
            "header.i=@example.org; dmarc=pass header.from=example.org",
        },
    )
    mail.imap.append(  # a raw forgery with another authserv-id, delivered locally
        b"Authentication-Results: mx.example.org; dkim=pass header.d=example.org;"
        b" dmarc=pass header.from=example.org\r\n"
        b"From: Ana <ana@example.org>\r\nTo: navi@example.net\r\nSubject: Errands\r\n"
        b"Message-ID: <forged-3@example.org>\r\n\r\nRun my errands (results of another server)\r\n"
    )
    mail.send("Hi, it is really me")
    [reply] = await mail.outbox.wait(1)
    assert body(reply) == "Hello Ana."
    await asyncio.sleep(0.5)
    assert len(mail.outbox.messages) == 1  # nothing went to the forged sender (no backscatter)
    assert [r.last_user_text for r in mail.turns()] == ["Hi, it is really me"]
    refused = refusals(said(capsys))
    assert len(refused) == 3
    assert f"no Authentication-Results from {AUTHSERV_ID}" in refused[0]
    assert f"no DKIM or DMARC pass for example.org from {AUTHSERV_ID} (dkim=none, dmarc=none)" in refused[1]
    assert f"no Authentication-Results from {AUTHSERV_ID}" in refused[2]
    assert "forged-3@example.org" in refused[2]


# Froms that Python's parser reads as Ana's while the receiving server, which authenticated the
# attacker's own domain (its DKIM key), read the attacker's address.
AMBIGUOUS_FROMS = {
    "two From headers": ["Ana <ana@example.org>", "<eve@evil.example>"],
    "a group": ["Friends: ana@example.org, eve@evil.example;"],
    "a list": ["ana@example.org, eve@evil.example"],
    "a comment": ["<ana@example.org> (<eve@evil.example>)"],
    "an encoded word": ["=?utf-8?q?ana=40example=2Eorg?= (eve@evil.example)"],
    "an obsolete From :": ["Ana <ana@example.org>\r\nFrom : eve@evil.example"],
}


async def test_a_from_read_otherwise_than_the_server_authenticated_it_is_refused(
    mail: Mail, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: each of these was answered as Ana's (the server's results said pass, for
    evil.example, and nothing compared the domains)."""
    mail.script.turn("Hello Ana.")
    for what, froms in AMBIGUOUS_FROMS.items():
        mail.send(f"Run my errands ({what})", froms=froms, sender="eve@evil.example", signer="evil.example")
    mail.send("Hi, it is really me")
    [reply] = await mail.outbox.wait(1)
    assert body(reply) == "Hello Ana."
    await asyncio.sleep(0.5)
    assert len(mail.outbox.messages) == 1
    assert [r.last_user_text for r in mail.turns()] == ["Hi, it is really me"]
    refused = refusals(said(capsys))
    assert len(refused) == len(AMBIGUOUS_FROMS)
    assert "2 From headers" in refused[0]
    assert "not one mailbox" in refused[1] and "not one mailbox" in refused[2]
    assert f"{AUTHSERV_ID} read the From domain as 'evil.example', not 'example.org'" in refused[3]
    assert "From header does not parse cleanly" in refused[4]
    assert "header block does not parse cleanly" in refused[5]
    # The receiving server did authenticate each (for evil.example): the refusal is Navi's reading.
    assert all(b"dkim=pass header.d=evil.example" in raw for raw in mail.mx.received[:6])


async def test_an_approval_is_answered_by_replying_yes(tmp_path: Path, servers: Servers) -> None:
    world = await start_mail(tmp_path, servers, navi_approval_mode="smart")
    try:
        marker = tmp_path / "made-by-mail"
        world.script.turn(
            Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {marker}"})]), "Done."
        )
        world.send("Please make the file")
        [question] = await world.outbox.wait(1)
        assert "terminal" in body(question) and f"touch {marker}" in body(question)
        assert "Reply yes" in body(question)
        assert not marker.exists()
        world.send("yes\n\n> Navi wants to run terminal", reply_to=question)
        answer = (await world.outbox.wait(2))[1]
        assert body(answer) == "Done."
        assert marker.exists()
        assert len(await world.rt.sessions.list(owner="ana")) == 1
    finally:
        await world.services.stop()


async def test_without_an_authserv_id_or_local_trust_every_mail_is_refused_and_said_so(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    world = await start_mail(tmp_path, servers, navi_email_authserv_id="")
    try:
        key = world.send("Hi, it is really me")  # authenticated by the receiving server, unread
        logged = ""
        for _ in range(400):
            logged += said(capsys)
            if "channel.refused" in logged:
                break
            await asyncio.sleep(0.05)
        assert "channel.email.refuses_all" in logged  # said at start
        [refused] = refusals(logged)
        assert key.strip("<>") in refused
        assert "neither NAVI_EMAIL_AUTHSERV_ID nor NAVI_EMAIL_TRUST_LOCAL_DELIVERY is set" in refused
        assert world.outbox.messages == [] and world.turns() == []
    finally:
        await world.services.stop()


async def test_only_ana_s_reply_to_the_question_answers_an_approval(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: any mail of the thread answered the approval, so whoever could start a thread as
    Ana answered Navi's question with a "yes" to their own first mail."""
    world = await start_mail(
        tmp_path, servers, navi_approval_mode="smart", navi_email_trust_local_delivery=True
    )
    try:
        await world.rt.channels.allow("email", "ana@work.example", "ana")  # Ana's other address
        marker = tmp_path / "made-by-mail"
        world.script.turn(
            Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {marker}"})]), "Done."
        )
        # Whoever can deliver locally writes as Ana (trusted by the setting): the question goes to Ana.
        first = world.send("Please make the file", local=True)
        [question] = await world.outbox.wait(1)
        assert question["To"] == ANA and "Reply yes" in body(question)
        # They never see the question: their "yes" answers their own mail.
        world.send("yes", reply_to=first, local=True)
        reminder = (await world.outbox.wait(2))[1]
        assert reminder["To"] == ANA
        assert "reply to that message with yes, no or always" in body(reminder)
        # A reply to the question from another of Ana's addresses: not the one asked.
        world.send("yes", reply_to=question, sender="ana@work.example", signer="work.example")
        (await world.outbox.wait(3))[2]
        assert not marker.exists()
        # Ana's own reply to the question, authenticated by the receiving server.
        world.send("yes\n\n> Navi wants to run terminal", reply_to=question)
        answer = (await world.outbox.wait(4))[3]
        assert body(answer) == "Done."
        assert marker.exists()
        logged = said(capsys)
        assert logged.count("channel.approval_not_a_reply") == 2
    finally:
        await world.services.stop()


async def test_stop_by_command(tmp_path: Path, servers: Servers) -> None:
    world = await start_mail(tmp_path, servers, navi_approval_mode="smart")
    try:
        marker = tmp_path / "never"
        world.script.turn(Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {marker}"})]))
        world.send("Please make the file")
        [question] = await world.outbox.wait(1)
        world.send("!stop", reply_to=question)
        stopped = (await world.outbox.wait(2))[1]
        assert body(stopped) == "Stopped."
        sessions = await world.rt.sessions.list(owner="ana")
        await world.services.runs.controls.wait(sessions[0].id, 10)
        assert world.services.runs.slots.get(sessions[0].id) is None
        assert not marker.exists()
    finally:
        await world.services.stop()


async def test_a_schedule_delivers_its_answer_by_mail_to_listed_addresses_only(
    mail: Mail, capsys: pytest.CaptureFixture[str]
) -> None:
    mail.script.turn("Your day: all quiet.", "Your day: all quiet.")  # the two run side by side
    at = "2030-01-01T09:00:00+00:00"
    daily = await mail.rt.schedules.create(
        "ana",
        NewSchedule(
            prompt="Summarise my day",
            at=at,
            title="Daily summary",
            deliver={"channel": "email", "to": "Ana <ANA@example.org>"},
        ),
    )
    assert daily.deliver is not None and daily.deliver.to == "Ana <ANA@example.org>"
    stored = await mail.rt.schedules.store.get(daily.id)
    assert stored is not None and stored.deliver == daily.deliver  # kept in the database
    await mail.rt.schedules.create(
        "ana",
        NewSchedule(
            prompt="Tell Eve", at=at, title="For Eve", deliver={"channel": "email", "to": "eve@example.com"}
        ),
    )
    runner = mail.services.schedule_runner
    assert runner is not None
    await runner.tick(datetime(2030, 1, 1, 9, 0, 5, tzinfo=UTC))
    await runner.drain()
    [sent] = await mail.outbox.wait(1)
    assert sent["To"] == ANA and sent["Subject"] == "Daily summary"
    assert sent["In-Reply-To"] is None
    assert body(sent) == "Your day: all quiet."
    await asyncio.sleep(0.5)
    assert len(mail.outbox.messages) == 1  # Eve is not on the allowlist: nothing sent to her
    logged = capsys.readouterr()
    assert "schedule.not_delivered" in logged.out + logged.err
    [run] = await mail.rt.schedules.store.runs(daily.id)
    assert run.status == "ok" and run.session_id is not None

    # Ana's reply to the delivered mail goes on in the run's session.
    mail.script.turn("Glad to hear.")
    mail.send("Thanks!", reply_to=sent)
    reply = (await mail.outbox.wait(2))[1]
    assert body(reply) == "Glad to hear."
    stored = await mail.rt.sessions.get(run.session_id, owner="ana")
    assert stored is not None
    assert [m.content for m in stored.messages][-2:] == ["Thanks!", "Glad to hear."]


async def test_a_schedule_refuses_a_malformed_delivery(mail: Mail) -> None:
    from navi.schedules.when import ScheduleError

    for bad in ({"channel": "email"}, {"channel": "E mail", "to": "x"}, {"to": "a@b"}, "email:a@b"):
        with pytest.raises(ScheduleError, match="deliver must be"):
            await mail.rt.schedules.create(
                "ana", NewSchedule(prompt="p", at="2030-01-01T09:00:00+00:00", deliver=bad)
            )  # type: ignore[arg-type]
    assert await mail.rt.schedules.store.list() == []


async def test_a_file_the_run_makes_goes_back_as_an_attachment(mail: Mail) -> None:
    mail.script.turn("Hello.")
    mail.send("Hi")
    [hello] = await mail.outbox.wait(1)
    [session] = await mail.rt.sessions.list(owner="ana")
    report = Path(mail.rt.settings.session_files_dir) / session.id / "report.txt"
    write = ScriptedCall(
        "filesystem", {"action": "write", "path": str(report), "content": "Revenue: up 5%\n"}
    )
    mail.script.turn(Reply(tool_calls=[write]), "Here is the report.")
    mail.send("Write me the report", reply_to=hello)
    answer = (await mail.outbox.wait(2))[1]
    assert body(answer) == "Here is the report."
    [attached] = list(answer.iter_attachments())
    assert attached.get_filename() == "report.txt"
    assert attached.get_content_type() == "text/plain"
    assert attached.get_payload(decode=True) == b"Revenue: up 5%\n"
    assert list(hello.iter_attachments()) == []


async def test_doctor_logs_in_to_imap_and_smtp(servers: Servers, tmp_path: Path) -> None:
    from navi.cli.doctor import channel_checks
    from navi.config import load_settings

    imap, smtp_port = servers.imap, servers.smtp_port
    base = {
        "db_path": str(tmp_path / "navi.db"),
        "navi_email_address": NAVI,
        "navi_email_imap_host": "127.0.0.1",
        "navi_email_imap_port": imap.port,
        "navi_email_imap_security": "none",
        "navi_email_smtp_host": "127.0.0.1",
        "navi_email_smtp_port": smtp_port,
        "navi_email_username": imap.user,
        "navi_email_password": imap.password,
        "navi_email_smtp_username": SMTP_USER,
        "navi_email_smtp_password": SMTP_PASSWORD,
        "navi_email_authserv_id": AUTHSERV_ID,
    }
    [good] = [c async for c in channel_checks(load_settings(**base))]
    assert good.ok and good.what == "channel email: logged in"
    # Neither the receiving server's authserv-id nor local trust: every mail would be refused.
    unset = {**base, "navi_email_authserv_id": ""}
    [refusing] = [c async for c in channel_checks(load_settings(**unset))]
    assert not refusing.ok
    assert refusing.what == (
        "channel email: neither NAVI_EMAIL_AUTHSERV_ID nor NAVI_EMAIL_TRUST_LOCAL_DELIVERY is set: "
        "every mail is refused"
    )
    trusting = {**unset, "navi_email_trust_local_delivery": True}
    assert [c.ok async for c in channel_checks(load_settings(**trusting))] == [True]
    # A wrong IMAP password, and an SMTP port nothing listens on.
    wrong = {**base, "navi_email_password": "wrong", "navi_email_smtp_port": free_port()}
    [bad] = [c async for c in channel_checks(load_settings(**wrong))]
    assert not bad.ok
    assert f"IMAP 127.0.0.1:{imap.port}" in bad.what and "AUTHENTICATIONFAILED" in bad.what
    assert f"SMTP 127.0.0.1:{wrong['navi_email_smtp_port']}" in bad.what
    assert "wrong" not in bad.what  # no password in the report
    assert [c async for c in channel_checks(load_settings(db_path=str(tmp_path / "navi.db")))] == []


async def test_a_voice_attachment_is_transcribed_and_answered_in_text_and_audio(
    tmp_path: Path, servers: Servers
) -> None:
    from navi.voice.audio import decode
    from tests.helpers.speech import espeak_wav, in_container, silence_wav, words

    mail = await start_mail(tmp_path, servers, navi_email_voice_replies=True)
    try:
        mail.script.turn("Your dentist appointment is on Tuesday. I will remind you.")
        clip = in_container(espeak_wav("Remind me about the dentist on Tuesday."), "ogg")
        mail.send("", subject="Voice message", attachment=("voice.ogg", clip, "audio/ogg"))  # through the MX
        [reply] = await mail.outbox.wait(1, seconds=120)  # Whisper and Piper load on first use
        assert body(reply) == "Your dentist appointment is on Tuesday. I will remind you."
        asked = mail.turns()[0].last_user_text
        assert {"remind", "dentist", "tuesday"} <= set(words(asked)), asked
        assert "voice.ogg" not in asked  # the words, not a file for the model
        [spoken] = list(reply.iter_attachments())
        assert spoken.get_filename() == "answer.ogg" and spoken.get_content_type() == "audio/ogg"
        assert decode(spoken.get_payload(decode=True)).seconds > 2.0
        # a silent clip gets a reply saying so, and no turn
        mail.send("", subject="Again", attachment=("silence.wav", silence_wav(2.0), "audio/wav"))
        [_first, refused] = await mail.outbox.wait(2, seconds=60)
        assert "silence.wav" in body(refused) and "silent" in body(refused)
        assert len(mail.turns()) == 1
    finally:
        await mail.services.stop()


async def test_a_job_ends_and_is_mailed_where_no_push_subscription_exists(
    tmp_path: Path, servers: Servers
) -> None:
    """Issue 47: channels are the notifications' fallback. Ana has no push subscription and no page
    open; her background job's end reaches her by mail (her address on the allowlist), with the
    link to the conversation, and her reply to it goes on in that conversation."""
    world = await start_mail(tmp_path, servers, background=True)  # with the jobs' runner
    services = world.services
    try:
        origin = await world.rt.sessions.create("secretary", owner="ana", name="Bikes")
        world.script.turn("Bike B wins on range.")
        assert world.rt.jobs is not None
        job = await world.rt.jobs.start("ana", "Compare bike A and bike B", origin_session_id=origin.id)
        [sent] = await world.outbox.wait(1)
        assert sent["To"] == ANA and sent["Subject"] == "Compare bike A and bike B"
        posted = await world.rt.sessions.get(origin.id, owner="ana")
        assert posted is not None and posted.messages[-1].content.endswith("Bike B wins on range.")
        lines = [line.rstrip() for line in body(sent).splitlines()]  # the link opens that message
        assert lines == ["Bike B wins on range.", "", f"(Navi: /#/s/{origin.id}?m={posted.messages[-1].id})"]
        notifier = services.notifier
        assert notifier is not None
        for _ in range(100):  # the outcome is kept once the mail has gone
            if notifier.sent:
                break
            await asyncio.sleep(0.05)
        assert [(s.owner, s.message.kind, s.outcome) for s in notifier.sent] == [("ana", "job", "channel")]
        ended = await world.rt.jobs.store.get(job.id)
        assert ended is not None and ended.state == "done"

        world.script.turn("Then B it is.")
        world.send("Thanks, I'll take B.", reply_to=sent)
        reply = (await world.outbox.wait(2))[1]
        assert body(reply) == "Then B it is."
        kept = await world.rt.sessions.get(origin.id, owner="ana")
        assert kept is not None and [m.content for m in kept.messages][-2:] == [
            "Thanks, I'll take B.",
            "Then B it is.",
        ]
    finally:
        await services.stop()
