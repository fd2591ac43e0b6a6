"""VOICE_* settings → the voice service (navi/voice), and a line at start saying which engines run.

Nothing loads here: the models load on first use (or `Voice.warm`). An engine that cannot run on
this machine (the voice extra not installed, no eSpeak NG) leaves that direction off, with the
reason given to whoever asks for it and said once in the log.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from navi.compose.problems import SetupError
from navi.config import Settings, cache_home
from navi.logging import get_logger
from navi.voice import Voice
from navi.voice.audio import Limits
from navi.voice.stt import RemoteTranscriber, WhisperEngine
from navi.voice.tts import EspeakEngine, PiperEngine, RemoteSpeech
from navi.voice.weights import INSTALL_HINT, piper_available, whisper_base

log = get_logger(__name__)


def voice_cache(settings: Settings) -> Path:
    if settings.voice_cache_dir:
        return Path(settings.voice_cache_dir).expanduser()
    return cache_home() / "voice"


def _listener(s: Settings) -> tuple[WhisperEngine | RemoteTranscriber | None, str]:
    if s.voice_stt == "off":
        return None, "speech to text is off on this Navi (VOICE_STT=off)"
    if s.voice_stt == "remote":
        return RemoteTranscriber(s.voice_stt_url, api_key=s.voice_stt_api_key, model=s.voice_stt_model), ""
    if importlib.util.find_spec("faster_whisper") is None or importlib.util.find_spec("av") is None:
        return None, f"speech to text needs faster-whisper: {INSTALL_HINT}"
    own = Path(s.voice_stt_model_dir).expanduser() if s.voice_stt_model_dir else None
    engine = WhisperEngine(own, threads=s.voice_threads, vad=s.voice_stt_vad, window=s.voice_stt_window)
    if own is None:
        cache = voice_cache(s)
        engine.resolve = lambda: whisper_base(cache)
    return engine, ""


def _speaker(s: Settings) -> tuple[PiperEngine | EspeakEngine | RemoteSpeech | None, str]:
    mode = s.voice_tts
    if mode == "off":
        return None, "text to speech is off on this Navi (VOICE_TTS=off)"
    if mode == "remote":
        return RemoteSpeech(
            s.voice_tts_url, api_key=s.voice_tts_api_key, model=s.voice_tts_model, voice=s.voice_tts_voice
        ), ""
    has_piper = importlib.util.find_spec("piper") is not None and (
        bool(s.voice_piper_model) or piper_available()
    )
    if mode == "piper" or (mode == "auto" and has_piper):
        if not has_piper:
            return None, f"Piper and its voice are not installed: {INSTALL_HINT}"
        model = Path(s.voice_piper_model).expanduser() if s.voice_piper_model else None
        return PiperEngine(model, None, threads=s.voice_threads), ""
    if EspeakEngine.available():
        return EspeakEngine(s.voice_espeak_voice), ""
    return None, f"no text-to-speech engine: install eSpeak NG (apt-get install espeak-ng) or {INSTALL_HINT}"


def build_voice(settings: Settings) -> Voice:
    """The voice service; `SetupError` when a `remote` engine has no server to go to."""
    for way, mode, url in (
        ("STT", settings.voice_stt, settings.voice_stt_url),
        ("TTS", settings.voice_tts, settings.voice_tts_url),
    ):
        if mode == "remote" and not url:
            raise SetupError(f"VOICE_{way}=remote needs a server", f"set VOICE_{way}_URL (…/v1)")
    listener, no_stt = _listener(settings)
    speaker, no_tts = _speaker(settings)
    voice = Voice(
        listener,
        speaker,
        limits=Limits(max_bytes=settings.voice_max_mb * 1024 * 1024, max_seconds=settings.voice_max_seconds),
        queue=settings.voice_queue,
        language=settings.voice_stt_language or None,
        off_reasons=(no_stt, no_tts),
    )
    log.info(
        "voice", **{k: v for k, v in voice.describe().items() if k in ("speech_to_text", "text_to_speech")}
    )
    for reason in (no_stt, no_tts):
        if reason and "is off" not in reason:
            log.warning("voice_unavailable", detail=reason)
    return voice
