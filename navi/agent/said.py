"""A user's message as the agent stores it: its text with the files named, its images, and who
sent it from where (`navi.protocol.Sender`: kept with the message, never sent to the model)."""

from __future__ import annotations

from collections.abc import Sequence

from navi.llm.attached import AttachedFile, stored
from navi.llm.messages import Message, strip_data_uri, with_files
from navi.protocol import Sender


def signed(message: Message, sender: Sender | None) -> Message:
    """`message` with `sender`'s name, location and metadata (in place; returned for chaining)."""
    if sender is not None:
        message.name = sender.name if sender.name is not None else message.name
        if sender.location is not None:
            message.metadata.location = sender.location
        if sender.metadata:
            message.metadata.custom = dict(sender.metadata)
        if sender.collections:
            message.metadata.collections = list(sender.collections)
    return message


def user_message(
    content: str,
    images: Sequence[str] | None,
    files: Sequence[AttachedFile] | None,
    message_id: str | None,
    sender: Sender | None = None,
) -> Message:
    user = Message.user(with_files(content, files), images=[strip_data_uri(i) for i in images or ()])
    if message_id:
        user.id = message_id
    if files:  # so a client can show them as attachments rather than as text (stored as records)
        user.metadata.files = stored(files)
    return signed(user, sender)
