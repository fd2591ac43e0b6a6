"""Real mail servers for the email channel's tests: Dovecot (IMAP, Debian's `dovecot-imapd`) run from
a configuration in a temporary folder with one passwd-file user and a Maildir, on a free port, no
system service; an SMTP server (`aiosmtpd`) that keeps what Navi sends; and a receiving server (MX,
`aiosmtpd` too) that authenticates incoming mail as an MTA with OpenDKIM and OpenDMARC would,
prepends its `Authentication-Results` and delivers to Dovecot (`Inbound`).

Mail reaches the mailbox by IMAP APPEND (a second client, as a mail server's delivery would), so
Navi reads it as it reads any new mail: unseen, announced by IDLE. `Dovecot.append` alone is a
local delivery path, with no Authentication-Results.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email
import email.policy
import imaplib
import ipaddress
import os
import pwd
import re
import shutil
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from navi.testing.ports import free_port

USER = "navi"
PASSWORD = "imap-secret-1"

CONFIG = """\
base_dir = {base}/run
state_dir = {base}/state
log_path = {base}/dovecot.log
info_log_path = {base}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = {login}
default_internal_group = {group}
default_login_user = {login}
first_valid_uid = 1
mail_location = maildir:{base}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {base}/passwd
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {base}/passwd
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service imap-login {{
  chroot =
}}
"""


@dataclass
class Dovecot:
    port: int
    base: Path
    process: subprocess.Popen[bytes]
    user: str = USER
    password: str = PASSWORD

    def append(self, message: EmailMessage | bytes) -> None:
        """Put a mail in the user's INBOX, unseen (as a delivery would)."""
        raw = message if isinstance(message, bytes) else message.as_bytes()
        client = imaplib.IMAP4("127.0.0.1", self.port)
        try:
            client.login(self.user, self.password)
            client.append("INBOX", "", imaplib.Time2Internaldate(time.time()), raw)
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def log(self) -> str:
        path = self.base / "dovecot.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def dovecot() -> Iterator[Dovecot]:
    # Dovecot's unprivileged processes must reach the folder: a fresh one under /tmp owned by the
    # mail user (as root: `nobody`; otherwise this user).
    base = Path(tempfile.mkdtemp(prefix="navi-dovecot-"))
    if os.geteuid() == 0:
        account = pwd.getpwnam("nobody")
        login = "nobody"
    else:
        account = pwd.getpwuid(os.geteuid())
        login = account.pw_name
    group = _group_name(account.pw_gid)
    port = free_port()
    for sub in ("run", "state", "mail", "home"):
        (base / sub).mkdir()
    (base / "passwd").write_text(
        f"{USER}:{{PLAIN}}{PASSWORD}:{account.pw_uid}:{account.pw_gid}::{base}/home\n"
    )
    (base / "dovecot.conf").write_text(CONFIG.format(base=base, port=port, login=login, group=group))
    if os.geteuid() == 0:
        for path in [base, *base.rglob("*")]:
            os.chown(path, account.pw_uid, account.pw_gid)
        (base / "run").chmod(0o755)
    process = subprocess.Popen(
        [shutil.which("dovecot") or "dovecot", "-F", "-c", str(base / "dovecot.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server = Dovecot(port=port, base=base, process=process)
    try:
        _wait_for_login(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
        shutil.rmtree(base, ignore_errors=True)


def _group_name(gid: int) -> str:
    import grp

    return grp.getgrgid(gid).gr_name


def _wait_for_login(server: Dovecot) -> None:
    deadline = time.monotonic() + 20
    while True:
        if server.process.poll() is not None:
            err = server.process.stderr.read().decode(errors="replace") if server.process.stderr else ""
            raise RuntimeError(f"dovecot exited: {err}\n{server.log()}")
        try:
            client = imaplib.IMAP4("127.0.0.1", server.port)
            client.login(server.user, server.password)
            client.logout()
            return
        except (OSError, imaplib.IMAP4.error) as exc:
            if time.monotonic() > deadline:
                raise RuntimeError(f"dovecot did not accept a login: {exc}\n{server.log()}") from exc
            time.sleep(0.1)


@dataclass
class Outbox:
    """What the SMTP server received, parsed."""

    messages: list[EmailMessage] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        parsed = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        self.envelopes.append((str(envelope.mail_from), list(envelope.rcpt_tos)))
        return "250 OK"

    async def wait(self, count: int, seconds: float = 30.0) -> list[EmailMessage]:
        """Until `count` mails have arrived (all of them, in order)."""
        deadline = time.monotonic() + seconds
        while len(self.messages) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} mails, got {len(self.messages)}")
            await asyncio.sleep(0.05)
        return self.messages


SMTP_USER = "navi-smtp"
SMTP_PASSWORD = "smtp-secret-2"


def _authenticate(
    server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: object
) -> AuthResult:
    ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
        SMTP_USER.encode(),
        SMTP_PASSWORD.encode(),
    )
    return AuthResult(success=ok)


def self_signed(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A certificate for 127.0.0.1 (its own CA: trust it with SSL_CERT_FILE) and a server context."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Navi test mail")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    cert_path, key_path = folder / "mail-cert.pem", folder / "mail-key.pem"
    cert_path.write_bytes(cert.public_bytes(pem))
    key_path.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return cert_path, context


AUTHSERV_ID = "mx.navi.test"  # the receiving server's authserv-id (NAVI_EMAIL_AUTHSERV_ID)
SENDER_PASSWORD = "sender-secret-3"  # every sending domain's login to the MX


@dataclass
class Inbound:
    """The receiving server in front of Dovecot, standing in for an MTA with OpenDKIM and
    OpenDMARC. A client that logs in with a domain as its login (`example.org`) is that domain's
    outgoing server: its mail carries a good DKIM signature of that domain. A client that does not
    log in signs nothing. Each mail gets, prepended, `Authentication-Results: mx.navi.test;
    dkim=pass header.d=D header.i=@D` (or `dkim=none`) and a DMARC result for the domain the MX
    reads in the From — its own way, as every server parses with its own code: the last `@domain`
    of the last From header (the instance a DKIM signature covers; "From :" counts too). DMARC is
    `none` for a domain that publishes no DMARC record (`dmarc_records` are those that do, as its
    DNS would say), else `pass` when D is that domain or a parent of it and `fail` otherwise. Like
    many real servers it removes none of the Authentication-Results the mail already carries,
    whatever their id (the worst case for Navi)."""

    imap: Dovecot
    authserv_id: str = AUTHSERV_ID
    dmarc_records: frozenset[str] = frozenset({"evil.example", "example.com"})
    received: list[bytes] = field(default_factory=list)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        signer = str(session.auth_data) if session.authenticated else None
        delivered = self.results(raw, signer).encode() + b"\r\n" + raw
        self.received.append(delivered)
        self.imap.append(delivered)
        return "250 OK"

    def results(self, raw: bytes, signer: str | None) -> str:
        head = re.split(rb"\r?\n\r?\n", raw, maxsplit=1)[0].decode("ascii", "replace")
        unfolded = re.sub(r"\r?\n[ \t]+", " ", head)
        froms = [line.partition(":")[2] for line in unfolded.splitlines() if re.match(r"(?i)from\s*:", line)]
        domains = re.findall(r"@([A-Za-z0-9.-]+)", froms[-1]) if froms else []
        read = domains[-1].lower() if domains else "unknown"
        dkim = f"dkim=pass header.d={signer} header.i=@{signer}" if signer else "dkim=none"
        dmarc = "pass" if signer and (read == signer or read.endswith("." + signer)) else "fail"
        if read not in self.dmarc_records:
            dmarc = "none"
        return (
            f"Authentication-Results: {self.authserv_id};\r\n\t{dkim} header.s=mail;\r\n"
            f"\tdmarc={dmarc} (p=reject dis=none) header.from={read}"
        )


def _sending_domain(
    server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: object
) -> AuthResult:
    ok = isinstance(data, LoginPassword) and data.password == SENDER_PASSWORD.encode()
    return AuthResult(success=ok, auth_data=data.login.decode() if ok else None)  # type: ignore[union-attr]


@contextlib.contextmanager
def inbound(imap: Dovecot) -> Iterator[tuple[int, Inbound]]:
    """The MX (`Inbound`) on a free port of 127.0.0.1, plain SMTP, a login optional."""
    mx = Inbound(imap)
    port = free_port()
    controller = Controller(
        mx,
        hostname="127.0.0.1",
        port=port,
        authenticator=_sending_domain,
        auth_required=False,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield port, mx
    finally:
        controller.stop()


@contextlib.contextmanager
def smtp_server(tls: ssl.SSLContext) -> Iterator[tuple[int, Outbox]]:
    """An SMTP server that takes mail only after STARTTLS (with `tls`) and a login (SMTP_USER,
    SMTP_PASSWORD)."""
    outbox = Outbox()
    port = free_port()
    controller = Controller(
        outbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=_authenticate,
        auth_required=True,
        tls_context=tls,
        require_starttls=True,
    )
    controller.start()
    try:
        yield port, outbox
    finally:
        controller.stop()
