"""The voice settings (docs/voice.md), a part of `Settings` kept beside it: the engines for speech
in and out, the remote servers that may stand in for them, and the limits on audio."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class VoiceSettings(BaseModel):
    # builtin: faster-whisper (Whisper base, or VOICE_STT_MODEL_DIR); remote: VOICE_STT_URL; off.
    voice_stt: Literal["builtin", "remote", "off"] = "builtin"
    voice_stt_model_dir: str = ""
    voice_stt_vad: bool = True  # silence trimmed first (faster-whisper's bundled Silero model)
    # short: Whisper's encoder reads the clip and 2 s more (at least 5 s); full: its 30 s window.
    voice_stt_window: Literal["short", "full"] = "short"
    voice_stt_language: str = ""  # empty: detected per clip
    # auto: Piper where its voice is installed, else eSpeak NG; remote: VOICE_TTS_URL.
    voice_tts: Literal["auto", "piper", "espeak", "remote", "off"] = "auto"
    voice_piper_model: str = ""
    voice_espeak_voice: str = "en-us"
    voice_stt_url: str = ""  # the servers of `remote`: base URLs ending in /v1
    voice_stt_api_key: str = ""
    voice_stt_model: str = "whisper-1"
    voice_tts_url: str = ""
    voice_tts_api_key: str = ""
    voice_tts_model: str = "tts-1"
    voice_tts_voice: str = "alloy"
    voice_max_mb: int = Field(25, ge=1, le=500)
    voice_max_seconds: float = Field(300.0, ge=1, le=7200)
    voice_threads: int = Field(2, ge=1, le=64)
    voice_queue: int = Field(8, ge=1, le=1000)
    voice_cache_dir: str = ""  # where Whisper base is assembled; empty: ~/.cache/navi/voice
    navi_matrix_voice_replies: bool = False  # a voice message answered with one too (and the text)
    navi_email_voice_replies: bool = False
