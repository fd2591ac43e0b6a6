"""Email as a channel: new mail read over IMAP (`aioimaplib`; IDLE when the server has it, else
polling), answers sent over SMTP (`aiosmtplib`; implicit TLS or STARTTLS).

A thread is a session: an incoming mail's `In-Reply-To` and `References` name the messages it
answers, and Navi's replies carry `In-Reply-To` / `References` so mail programs thread them. A reply
holds only Navi's answer: nothing of the user's mail is quoted back, and of the user's mail only
what they wrote reaches the model (the quoted part of a reply — `>` lines and the "On … wrote:" line
before them — is cut). Attachments come in as files and go out as MIME parts. The allowlist names
sender addresses (lower case). A mail is acted on only when its From is one clear mailbox and the
receiving server's `Authentication-Results` vouch for its domain (`mailauth.py`); any other is
refused (logged, never answered: its sender may be forged). Approvals are answered only by a reply
to Navi's question mail (`answers_by_reply`).
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import re
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formataddr, make_msgid, parseaddr
from typing import Any, ClassVar, Literal

import aioimaplib
import aiosmtplib
import structlog

from navi.channels.base import Attachment, Channel, Deliver, Incoming, Outgoing, split_text
from navi.channels.mailauth import refusal, sender_of

log = structlog.stdlib.get_logger(__name__)

Security = Literal["tls", "starttls", "none"]
MAX_MAIL_CHARS = 100_000  # a longer answer goes out as several mails, in order
MAX_MAIL_BYTES = 25 * 1024 * 1024  # a larger mail is skipped (and logged), never parsed
IDLE_SECONDS = 25 * 60  # IDLE is renewed before servers drop it (RFC 2177: 29 minutes)
_QUOTE_INTRO = re.compile(
    r"^\s*(On .+ wrote:|-+\s*Original Message\s*-+|Le .+ a écrit\s*:|Am .+ schrieb .+:)\s*$"
)


@dataclass(frozen=True)
class EmailSettings:
    """Where Navi reads and sends its mail (the composition root builds this from NAVI_EMAIL_*)."""

    address: str  # Navi's own address: From of its mails
    imap_host: str
    smtp_host: str
    username: str
    password: str
    imap_port: int = 993
    imap_security: Literal["tls", "none"] = "tls"
    smtp_port: int = 587
    smtp_security: Security = "starttls"
    smtp_username: str = ""  # empty: `username`
    smtp_password: str = ""  # empty: `password`
    folder: str = "INBOX"
    poll_seconds: float = 60.0  # without IDLE
    timeout: float = 30.0
    tls_context: ssl.SSLContext | None = None  # tests: a context trusting their own CA
    # The authserv-id of the receiving server's Authentication-Results (its host name, usually):
    # only that server's results count. Empty: none do.
    authserv_id: str = ""
    # Mail without that server's results is taken as delivered by a trusted path (docs/channels.md).
    trust_local_delivery: bool = False

    @property
    def refuses_all(self) -> str | None:
        """Why every mail is refused with these settings (neither an authserv-id nor local trust)."""
        if self.authserv_id.strip() or self.trust_local_delivery:
            return None
        return (
            "neither NAVI_EMAIL_AUTHSERV_ID nor NAVI_EMAIL_TRUST_LOCAL_DELIVERY is set: every mail is refused"
        )


class EmailChannel(Channel):
    name: ClassVar[str] = "email"
    can_ask: ClassVar[bool] = True
    answers_by_reply: ClassVar[bool] = True  # a From can be forged: only the question's reader knows its id

    def __init__(self, settings: EmailSettings) -> None:
        self.settings = settings
        self.domain = settings.address.rpartition("@")[2] or "navi.local"
        self._warned = False

    @classmethod
    def normalize(cls, address: str) -> str:
        return parseaddr(address)[1].strip().lower() or address.strip().lower()

    def split(self, text: str) -> list[str]:
        return split_text(text, MAX_MAIL_CHARS)

    # --- receiving -------------------------------------------------------------------------------
    async def _imap(self) -> aioimaplib.IMAP4:
        s = self.settings
        if s.imap_security == "tls":
            client: aioimaplib.IMAP4 = aioimaplib.IMAP4_SSL(
                s.imap_host, s.imap_port, timeout=s.timeout, ssl_context=s.tls_context
            )
        else:
            client = aioimaplib.IMAP4(s.imap_host, s.imap_port, timeout=s.timeout)
        try:
            await client.wait_hello_from_server()
            response = await client.login(s.username, s.password)
        except BaseException:  # cancelled or failed while connecting: the socket is closed too
            await _close(client)
            raise
        if response.result != "OK":
            await _close(client)
            raise ConnectionError(f"IMAP login as {s.username} refused: {_text(response.lines)}")
        return client

    async def listen(self, deliver: Deliver) -> None:
        if self.settings.refuses_all is not None and not self._warned:
            log.warning("channel.email.refuses_all", reason=self.settings.refuses_all)
            self._warned = True  # once, not at each reconnection
        client = await self._imap()
        try:
            selected = await client.select(self.settings.folder)
            if selected.result != "OK":
                raise ConnectionError(f"IMAP folder {self.settings.folder!r}: {_text(selected.lines)}")
            idle = client.has_capability("IDLE")
            log.info("channel.email.listening", folder=self.settings.folder, idle=idle)
            while True:
                await self._read_new(client, deliver)
                if idle:
                    waiter = await client.idle_start(timeout=IDLE_SECONDS)
                    with contextlib.suppress(TimeoutError):
                        await client.wait_server_push(timeout=IDLE_SECONDS)
                    client.idle_done()
                    await asyncio.wait_for(waiter, self.settings.timeout)
                else:
                    await asyncio.sleep(self.settings.poll_seconds)
                    await client.noop()
        finally:
            await _close(client)

    async def _read_new(self, client: aioimaplib.IMAP4, deliver: Deliver) -> None:
        found = await client.uid_search("UNSEEN")
        if found.result != "OK":
            raise ConnectionError(f"IMAP search failed: {_text(found.lines)}")
        uids = [u for u in _text(found.lines[:1]).split() if u.isdigit()]
        for uid in uids:
            size = await client.uid("fetch", uid, "(RFC822.SIZE)")
            match = re.search(rb"RFC822\.SIZE (\d+)", b" ".join(_bytes(line) for line in size.lines))
            if match is not None and int(match.group(1)) > MAX_MAIL_BYTES:
                await client.uid("store", uid, "+FLAGS.SILENT", r"(\Seen)")
                log.warning("channel.email.too_large", uid=uid, size=int(match.group(1)))
                continue
            fetched = await client.uid("fetch", uid, "(BODY[])")  # marks it \Seen
            raw = next((bytes(line) for line in fetched.lines if isinstance(line, bytearray)), None)
            if fetched.result != "OK" or raw is None:
                log.warning("channel.email.fetch_failed", uid=uid)
                continue
            try:
                incoming = self.parse(raw)
            except Exception as exc:  # a malformed mail: logged, the next one read
                log.warning("channel.email.unreadable", uid=uid, error=f"{type(exc).__name__}: {exc}")
                continue
            if incoming is not None:
                await deliver(incoming)

    def parse(self, raw: bytes) -> Incoming | None:
        """A mail as the worker sees it (None: Navi's own mail). `refused` says why a mail must not
        be acted on: a From that is not one clear mailbox, or no authentication of its domain."""
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        sender, unclear = sender_of(message)
        if unclear is None and sender == self.normalize(self.settings.address):
            return None
        refused = unclear or refusal(
            message,
            sender,
            authserv=self.settings.authserv_id,
            trust_local=self.settings.trust_local_delivery,
        )
        key = _msgid(str(message.get("Message-ID", ""))) or make_msgid(domain=self.domain)
        if refused is not None:  # nothing more of it is read
            return Incoming(channel=self.name, sender=sender, text="", key=key, refused=refused)
        thread = _ids(str(message.get("In-Reply-To", "")))
        thread += [i for i in reversed(_ids(str(message.get("References", "")))) if i not in thread]
        body = message.get_body(preferencelist=("plain", "html"))
        text = ""
        if body is not None:
            content = body.get_content()
            text = content if isinstance(content, str) else ""
            if body.get_content_type() == "text/html":
                text = _html_text(text)
        attachments = []
        for part in message.iter_attachments():
            data = part.get_payload(decode=True)
            if isinstance(data, bytes) and isinstance(part, EmailMessage):
                attachments.append(
                    Attachment(
                        name=part.get_filename() or "attachment",
                        data=data,
                        media_type=part.get_content_type(),
                    )
                )
        subject = " ".join(str(message.get("Subject", "")).split())[:200]
        return Incoming(
            channel=self.name,
            sender=sender,
            text=unquoted(text),
            key=key,
            thread=thread,
            attachments=attachments,
            title=_strip_re(subject),
            context={"subject": subject, "references": _ids(str(message.get("References", "")))},
        )

    # --- sending ---------------------------------------------------------------------------------
    def compose(self, out: Outgoing) -> EmailMessage:
        message = EmailMessage()
        message["From"] = formataddr(("Navi", self.settings.address))
        message["To"] = out.to
        key = make_msgid(domain=self.domain)
        message["Message-ID"] = key
        if out.reply is not None:
            subject = str(out.reply.context.get("subject") or out.reply.title or "Navi")
            message["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
            references = [*out.reply.context.get("references", []), out.reply.key]
            message["In-Reply-To"] = f"<{out.reply.key}>"
            message["References"] = " ".join(f"<{r}>" for r in references[-20:])
        else:
            message["Subject"] = out.title or "Navi"
        message.set_content(out.text)
        for attachment in out.attachments:
            main, _, sub = attachment.media_type.partition("/")
            message.add_attachment(
                attachment.data,
                maintype=main or "application",
                subtype=sub or "octet-stream",
                filename=attachment.name,
            )
        return message

    async def send(self, message: Outgoing) -> list[str]:
        mail = self.compose(message)
        await aiosmtplib.send(mail, **self._smtp_options())
        log.info("channel.email.sent", to=message.to)
        return [_msgid(str(mail["Message-ID"]))]

    def _smtp_options(self) -> dict[str, Any]:
        s = self.settings
        username = s.smtp_username or s.username
        password = s.smtp_password or s.password
        options: dict[str, Any] = {
            "hostname": s.smtp_host,
            "port": s.smtp_port,
            "timeout": s.timeout,
            "use_tls": s.smtp_security == "tls",
            "start_tls": s.smtp_security == "starttls",
        }
        if s.tls_context is not None:
            options["tls_context"] = s.tls_context
        if username and password:
            options.update(username=username, password=password)
        return options

    async def check(self) -> list[str]:
        problems = [] if self.settings.refuses_all is None else [self.settings.refuses_all]
        try:
            await _close(await self._imap())
        except Exception as exc:
            problems.append(f"IMAP {self.settings.imap_host}:{self.settings.imap_port}: {_why(exc)}")
        options = self._smtp_options()
        credentials = {k: options.pop(k) for k in ("username", "password") if k in options}
        smtp = aiosmtplib.SMTP(**options)
        try:
            await smtp.connect()
            if credentials:
                await smtp.login(credentials["username"], credentials["password"])
            await smtp.quit()
        except Exception as exc:
            problems.append(f"SMTP {self.settings.smtp_host}:{self.settings.smtp_port}: {_why(exc)}")
        return problems


async def _close(client: aioimaplib.IMAP4) -> None:
    """Log out (ending an IDLE first), and close the connection whatever the server says."""
    with contextlib.suppress(Exception):
        if client.protocol is not None and client.protocol.has_pending_idle_command():
            client.idle_done()
        await asyncio.wait_for(client.logout(), 5)
    transport = getattr(client.protocol, "transport", None)
    if transport is not None:
        transport.close()


def unquoted(text: str) -> str:
    """What the person wrote: the quoted mail of a reply (`>` lines, the "On … wrote:" line that
    introduces them, an "Original Message" block) and a signature after "-- " left out."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.rstrip() == "--":  # the signature separator "-- "
            break
        if _QUOTE_INTRO.match(line):
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def _msgid(value: str) -> str:
    ids = _ids(value)
    return ids[0] if ids else value.strip().strip("<>")[:500]


def _ids(value: str) -> list[str]:
    """The message ids in a References / In-Reply-To header, without their angle brackets."""
    return [i for i in re.findall(r"<([^<>\s]{1,500})>", value)][:100]


def _strip_re(subject: str) -> str:
    return re.sub(r"^(\s*(re|fwd?|aw)\s*:\s*)+", "", subject, flags=re.I)


def _html_text(html: str) -> str:
    from markdownify import markdownify  # only for HTML-only mail

    return str(markdownify(html))


def _text(lines: Sequence[Any]) -> str:
    return " ".join(_bytes(line).decode(errors="replace") for line in lines)


def _bytes(line: Any) -> bytes:
    return bytes(line) if isinstance(line, bytes | bytearray) else str(line).encode()


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


__all__ = ["EmailChannel", "EmailSettings", "unquoted"]
