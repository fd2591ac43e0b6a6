"""Navi's `/v1/audio/transcriptions` and `/v1/audio/speech` over real HTTP, driven by the official
`openai` SDK: real speech (eSpeak NG) transcribed by the built-in engine, Navi's own speech
transcribed back, OpenAI's error objects for bad clips, the token and the users as everywhere.

One Navi for the module (its models load once), with small caps so "too long" and "too large" are
quick to reach.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.testing.fake_server import FakeModelServer
from navi.voice.audio import decode, sniff
from tests.helpers.speech import espeak_wav, in_container, silence_wav, wer, words
from tests.server_helpers import LiveNavi, live_navi

_register()  # `navi users add`
pytestmark = pytest.mark.slow

SENTENCE = "Book a table for two at the Italian restaurant on Friday."
MAX_SECONDS = 12
MAX_MB = 1


@pytest.fixture(scope="module")
def navi(tmp_path_factory: pytest.TempPathFactory, fake_server_session: FakeModelServer) -> Iterator[Any]:
    tmp = tmp_path_factory.mktemp("voice-api")
    with live_navi(tmp, fake_server_session, voice_max_seconds=MAX_SECONDS, voice_max_mb=MAX_MB) as server:
        yield server


@pytest.fixture(scope="module")
def client(navi: LiveNavi) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{navi.url}/v1", api_key=navi.token, max_retries=0, timeout=120) as sdk:
        yield sdk


@pytest.fixture(scope="module")
def sentence_wav() -> bytes:
    return espeak_wav(SENTENCE)


def as_user(navi: LiveNavi, name: str) -> str:
    added = CliRunner().invoke(
        app, ["users", "add", name], env={"DB_PATH": str(navi.settings.db_path), "LOG_LEVEL": "WARNING"}
    )
    assert added.exit_code == 0, added.output
    return added.stdout.strip()


def transcribe(client: openai.OpenAI, data: bytes, name: str = "clip.bin", **kw: Any) -> Any:
    return client.audio.transcriptions.create(model="whisper-1", file=(name, io.BytesIO(data)), **kw)


def test_the_sdk_transcribes_real_speech(client: openai.OpenAI, sentence_wav: bytes) -> None:
    got = transcribe(client, in_container(sentence_wav, "webm"), "voice.webm", language="en")
    assert {"table", "two", "italian", "restaurant", "friday"} <= set(words(got.text)), got.text
    assert wer(SENTENCE, got.text) <= 0.3, got.text


def test_response_formats(client: openai.OpenAI, sentence_wav: bytes) -> None:
    ogg = in_container(sentence_wav, "ogg")  # the name says nothing: the bytes decide
    verbose = transcribe(client, ogg, "recording", response_format="verbose_json")
    assert verbose.language == "en" and 2.0 < verbose.duration < 6.0
    assert verbose.segments and verbose.segments[0].start >= 0 and "restaurant" in verbose.text.lower()
    srt = transcribe(client, ogg, response_format="srt", language="en")
    assert srt.startswith("1\n00:00:0") and " --> " in srt and "Italian" in srt
    text = transcribe(client, ogg, response_format="text", language="en")
    assert "Friday" in text


def test_navi_speaks_and_hears_itself(client: openai.OpenAI) -> None:
    said = "Your package arrives on Monday afternoon."
    mp3 = client.audio.speech.create(model="tts-1", voice="alloy", input=said).read()
    assert sniff(mp3[:16]) == "mp3" and decode(mp3).seconds > 1.5
    wav = client.audio.speech.create(model="tts-1", voice="alloy", input=said, response_format="wav").read()
    assert wav[:4] == b"RIFF"
    heard = transcribe(client, wav, "answer.wav", language="en")
    assert {"package", "arrives", "monday", "afternoon"} <= set(words(heard.text)), heard.text
    opus = client.audio.speech.create(model="tts-1", voice="nova", input="Yes.", response_format="opus")
    opus = opus.read()
    assert opus[:4] == b"OggS"


def test_bad_clips_are_openai_errors(client: openai.OpenAI, navi: LiveNavi, sentence_wav: bytes) -> None:
    long = in_container(espeak_wav(" ".join([SENTENCE] * 4), speed=140), "ogg")
    cases = {
        "unsupported_format": b"%PDF-1.7\n" + b"x" * 500,
        "corrupt_audio": b"OggS" + b"\x00" * 400,
        "no_speech": silence_wav(2.0),
        "too_long": long,
    }
    for code, data in cases.items():
        with pytest.raises(openai.BadRequestError) as refused:
            transcribe(client, data)
        assert refused.value.code == code, (code, refused.value.message)
        assert refused.value.status_code == 400
    # over the 1 MB cap: refused from the declared length, before the body is read
    reply = raw_post(navi, "/v1/audio/transcriptions", 3 * 1024 * 1024, b"--x\r\n")
    assert reply.startswith(b"HTTP/1.1 413") and b'"code":"too_large"' in reply.replace(b" ", b"")


def raw_post(navi: LiveNavi, path: str, declared: int, body: bytes) -> bytes:
    """A POST that declares `declared` bytes and sends only `body`: the answer, read to its end."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(navi.url)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {navi.token}\r\n"
            f"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: {declared}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
            if b"\r\n\r\n" in reply and reply.rstrip().endswith(b"}"):
                break
    return reply


def test_bad_speech_requests(client: openai.OpenAI, navi: LiveNavi) -> None:
    with pytest.raises(openai.BadRequestError) as empty:
        client.audio.speech.create(model="tts-1", voice="alloy", input="   ")
    assert "no text" in empty.value.message
    with httpx.Client(base_url=navi.url, headers=navi.auth, timeout=30) as http:
        wrong = http.post("/v1/audio/speech", json={"input": "Hi.", "response_format": "ogg"})
        assert wrong.status_code == 400 and "response_format" in wrong.json()["error"]["message"]
        long = http.post("/v1/audio/speech", json={"input": "word " * 1000})
        assert long.status_code == 400 and "4096" in long.json()["error"]["message"]
        plain = http.post("/v1/audio/transcriptions", content=b"RIFF", headers={"Content-Type": "audio/wav"})
        assert plain.status_code == 415 and plain.json()["error"]["code"] == "unsupported_type"
        nofile = http.post("/v1/audio/transcriptions", data={"model": "whisper-1"}, files={"x": ("a", b"b")})
        assert nofile.status_code == 400 and nofile.json()["error"]["param"] == "file"


def test_the_token_and_the_users(navi: LiveNavi, sentence_wav: bytes, tmp_path: Path) -> None:
    with httpx.Client(base_url=navi.url, timeout=60) as anonymous:
        refused = anonymous.post("/v1/audio/transcriptions", files={"file": ("a.wav", sentence_wav)})
        assert refused.status_code == 401
        assert anonymous.post("/v1/audio/speech", json={"input": "Hello."}).status_code == 401
    token = as_user(navi, "alice")
    with openai.OpenAI(base_url=f"{navi.url}/v1", api_key=token, max_retries=0, timeout=120) as alice:
        heard = transcribe(alice, sentence_wav, "a.wav", language="en")
        assert "restaurant" in heard.text.lower()
        assert alice.audio.speech.create(model="tts-1", voice="alloy", input="Hello Alice.").read()[:3] in (
            b"ID3",
            b"\xff\xfb",
            b"\xff\xf3",
        )
    stranger = openai.OpenAI(base_url=f"{navi.url}/v1", api_key="wrong-token", max_retries=0)
    with stranger, pytest.raises(openai.AuthenticationError):
        transcribe(stranger, sentence_wav)


def test_another_navi_as_the_remote_speech_servers(
    navi: LiveNavi, tmp_path: Path, fake_server_session: FakeModelServer, sentence_wav: bytes
) -> None:
    """VOICE_STT=remote and VOICE_TTS=remote against a real OpenAI-compatible audio server: this
    module's Navi. A wrong key there is a 502 naming the server's answer, not a crash."""
    remote = {
        "voice_stt": "remote",
        "voice_stt_url": f"{navi.url}/v1",
        "voice_stt_api_key": navi.token,
        "voice_tts": "remote",
        "voice_tts_url": f"{navi.url}/v1",
        "voice_tts_api_key": navi.token,
    }
    with live_navi(tmp_path, fake_server_session, **remote) as front:
        client = openai.OpenAI(base_url=f"{front.url}/v1", api_key=front.token, max_retries=0, timeout=120)
        with client:
            heard = transcribe(client, sentence_wav, "clip.wav", language="en")
            assert "restaurant" in heard.text.lower()
            opus = client.audio.speech.create(
                model="tts-1", voice="alloy", input="Hello.", response_format="opus"
            )
            assert opus.read()[:4] == b"OggS"
            with pytest.raises(openai.BadRequestError) as silent:  # checked here before it is sent
                transcribe(client, silence_wav(1.0))
            assert silent.value.code == "no_speech"
    with live_navi(
        tmp_path / "wrong", fake_server_session, **{**remote, "voice_stt_api_key": "wrong"}
    ) as front:
        client = openai.OpenAI(base_url=f"{front.url}/v1", api_key=front.token, max_retries=0)
        with client, pytest.raises(openai.APIStatusError) as failed:
            transcribe(client, sentence_wav, "clip.wav")
        assert failed.value.status_code == 502 and failed.value.code == "voice_server_failed"
        assert "401" in failed.value.message
