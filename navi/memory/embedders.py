"""Embedding models for memory and document search: built in, or the model server's own endpoint.

- **Built in, the default** (`MEMORY_EMBED_MODEL=builtin` or `builtin:minilm`): the sentence
  encoder all-MiniLM-L6-v2, int8, on onnxruntime (navi/memory/minilm.py): about 5-7 ms a question
  on one core, and what bench/memory_recall.py and bench/documents.py found best.
- **Built in, word vectors** (`builtin:wordllama`): WordLlama's `l2_supercat` token embeddings (the
  first 128 of 256 dimensions, average-pooled), whose weights and tokenizer ship inside the
  `wordllama` wheel from PyPI. A sentence costs about 0.1 ms on one core, but words are averaged
  without their context ("partner's name" lands next to `sister_name`).

  Neither needs PyTorch or the network: both are read from installed packages, never downloaded.
- **The model server's** (any other name): Ollama's `/api/embed` or an OpenAI-style
  `/v1/embeddings` (llama-server with `--embeddings`), through the backend's `embed`.

An embedder is an async callable from texts to vectors with a `name` that says which model it is;
stored vectors carry that name, so a change of model re-embeds instead of comparing unlike vectors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BUILTIN = "builtin"  # the best built-in model: MiniLM
BUILTIN_MINILM = "builtin:minilm"
BUILTIN_WORDLLAMA = "builtin:wordllama"
BUILTIN_DIM = 128
BUILTIN_NAME = f"wordllama-l2-supercat-{BUILTIN_DIM}"


class Embedder:
    """`await embedder(texts)` → one vector per text. `name` identifies the model."""

    name: str = ""
    # The cosine similarity below which a fact is taken as unrelated to a question (model-specific).
    min_similarity: float = 0.5

    async def __call__(self, texts: list[str]) -> list[list[float]]:  # pragma: no cover - abstract
        raise NotImplementedError


class BuiltinEmbedder(Embedder):
    """WordLlama from its own wheel; loaded on first use (about a second), in a worker thread."""

    min_similarity = 0.2  # bench/memory_recall.py: unrelated questions score below it

    def __init__(self, dim: int = BUILTIN_DIM) -> None:
        # The model was trained so that its first 64, 128 or 256 dimensions work on their own
        # (Matryoshka): fewer make the vector scan faster for some recall.
        self.dim = dim
        self.name = f"wordllama-l2-supercat-{dim}"
        self._model: Any = None
        self._lock = asyncio.Lock()

    @staticmethod
    def available() -> bool:
        try:
            import wordllama  # noqa: F401
        except ImportError:
            return False
        return True

    def _load(self) -> Any:
        import wordllama
        from wordllama import WordLlama

        # The wheel holds weights/ and tokenizers/ beside the code: point the loader's cache there
        # and forbid downloads, so nothing ever leaves this machine.
        here = Path(wordllama.__file__).parent
        return WordLlama.load(cache_dir=here, disable_download=True, trunc_dim=self.dim)

    async def model(self) -> Any:
        if self._model is None:
            async with self._lock:
                if self._model is None:
                    self._model = await asyncio.to_thread(self._load)
        return self._model

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        model = await self.model()
        vectors = model.embed(list(texts), norm=True)
        return [[float(x) for x in row] for row in vectors]


class ServerEmbedder(Embedder):
    """The model server's embedding endpoint, through a backend's `embed(texts, model)`."""

    def __init__(
        self, backend: str, model: str, embed: Callable[[list[str], str], Awaitable[list[list[float]]]]
    ):
        self.name = f"{backend}:{model}"
        self.model = model
        self._embed = embed

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        return await self._embed(list(texts), self.model)
