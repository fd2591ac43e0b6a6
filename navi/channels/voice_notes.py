"""Voice messages in channels: a Matrix `m.audio` message or an e-mail's audio attachment is
transcribed (navi/voice) and its words become the message's text; where the person's channel asks
for it (NAVI_MATRIX_VOICE_REPLIES, NAVI_EMAIL_VOICE_REPLIES), the answer goes back as audio too,
beside its text.

Audio is recognised by its bytes, not its name or declared type. A clip that cannot be used (silent,
damaged, too long) is answered with why; voice switched off here is said too, never a silent drop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from navi.channels.base import Attachment
from navi.logging import get_logger
from navi.voice import AudioError, RemoteVoiceError, Voice, VoiceBusy, VoiceUnavailable
from navi.voice.audio import sniff
from navi.voice.speakable import speakable

log = get_logger(__name__)
REPLY_NAME = "answer.ogg"  # Opus in OGG: what Matrix clients and mail readers play as a voice note


@dataclass
class Heard:
    words: list[str] = field(default_factory=list)  # each clip's transcript, in order
    others: list[Attachment] = field(default_factory=list)  # the attachments that are not audio
    problems: list[str] = field(default_factory=list)  # "- name: why", for the reply

    @property
    def spoken(self) -> bool:
        return bool(self.words)


def is_audio(attachment: Attachment) -> bool:
    kind = sniff(attachment.data[:16])
    if kind is None:
        return False
    # OGG, WebM and MP4 carry video too: taken as voice when the sender says it is audio
    return kind in ("wav", "mp3", "aac", "flac") or attachment.media_type.startswith("audio/")


async def hear(voice: Voice | None, attachments: Sequence[Attachment]) -> Heard:
    heard = Heard()
    for attachment in attachments:
        if not is_audio(attachment):
            heard.others.append(attachment)
            continue
        if voice is None:
            heard.problems.append(f"- {attachment.name}: voice messages are not set up on this Navi")
            continue
        try:
            transcript = await voice.transcribe(attachment.data)
        except (AudioError, VoiceBusy, VoiceUnavailable, RemoteVoiceError) as exc:
            heard.problems.append(f"- {attachment.name}: {exc}")
            continue
        heard.words.append(transcript.text)
        log.info("channel.voice_heard", name=attachment.name, seconds=transcript.duration)
    return heard


async def spoken_answer(voice: Voice | None, answer: str) -> Attachment | None:
    """The answer as a voice note, or None (nothing to speak, or speech failed: the text goes alone)."""
    text = speakable(answer)[:4000]
    if voice is None or not text.strip():
        return None
    try:
        speech = await voice.speak(text, fmt="opus")
    except (ValueError, VoiceBusy, VoiceUnavailable, RemoteVoiceError) as exc:
        log.warning("channel.voice_reply_failed", error=str(exc))
        return None
    return Attachment(name=REPLY_NAME, data=speech.audio, media_type="audio/ogg")
