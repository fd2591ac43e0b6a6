"""E-mail (.eml), with the standard library: the headers a person reads (From, To, Cc, Date,
Subject) as the first section, the body (text/plain preferred, else the HTML read as HTML), then
the attachments listed by name, type and size — never read."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

from navi.documents.base import Extracted, Place, Section
from navi.documents.extract.common import Budget, clean
from navi.documents.extract.web import sections_of

HEADERS = ("From", "To", "Cc", "Date", "Subject")


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    subject = " ".join(str(message.get("Subject", "")).split()) or None
    lines = [f"{header}: {' '.join(str(message[header]).split())}" for header in HEADERS if message[header]]
    sections: list[Section] = []
    if lines:
        sections.append(Section(budget.take("\n".join(lines))))
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        assert isinstance(body, EmailMessage)
        try:
            content = body.get_content()
        except (LookupError, ValueError):  # an unknown charset: its bytes as UTF-8, replaced
            payload = body.get_payload(decode=True)
            content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
        if body.get_content_subtype() == "html":
            found, _ = sections_of(
                content.encode("utf-8") if isinstance(content, str) else content, budget, Place()
            )
            sections.extend(found)
        else:
            text = budget.take(clean(str(content)))
            if text:
                sections.append(Section(text))
    attachments = []
    for part in message.iter_attachments():
        payload = part.get_payload(decode=True)
        size = len(payload) if isinstance(payload, bytes) else 0
        attachments.append(f"{part.get_filename() or 'unnamed'} ({part.get_content_type()}, {_size(size)})")
    if attachments:
        sections.append(Section(budget.take("Attachments (not read): " + "; ".join(attachments))))
    return Extracted("eml", sections, pages=0, title=subject)


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} kB"
    return f"{size / 1024 / 1024:.1f} MB"
