"""MiniLM with integer matrix products: the pinned weights, rewritten once per process.

The pinned `model.onnx` (navi/memory/minilm.py) stores its weights as int8 but multiplies in
float32: each weight is a `Cast` to float and a `Mul` by its scale, which onnxruntime folds into
float32 matrices when the session is built. A question of seven tokens then reads all 42 MB of
them (memory-bound: ~7.4 ms of one core), and a 200-token passage multiplies in float32.

Here the folded graph is quantized again, per output channel, with onnxruntime's own dynamic
quantizer: the products become `MatMulInteger` over int8 weights (a quarter of the bytes) with the
activations quantized on the fly. bench/memory_recall.py and bench/documents.py measured the
effect on recall (docs/benchmarks.md); the vectors stay within a cosine of ~0.99 of the float
ones. The weights are the pinned file's, checked by sha256 before this runs; nothing is fetched.
The rewrite costs 3–6 s of CPU (in the worker thread that loads the model) and works in a private
temporary directory removed at once. Its result is kept in a cache folder (`~/.cache/navi/models`
unless the composition root says otherwise) under a name made of the source's sha256, the
onnxruntime version and the rewrite's own version, beside the sha256 of the result: a later
process (a restarted server, each `navi docs` command) reads it instead of rewriting, and a file
that does not match its sha256 is rewritten. A cache that cannot be written is not an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from pathlib import Path

REWRITE = 1  # the version of what integer_model does: a change makes the cached files stale


class _QuietAdvice(logging.Filter):
    """The quantizer logs advice to pre-process the model (shape inference) on the root logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def cached_integer_model(source: Path, source_sha256: str, cache: Path | None) -> bytes:
    """`integer_model(source)`, read from `cache` when an earlier process kept it there."""
    if cache is None:
        return integer_model(source)
    import onnxruntime

    key = hashlib.sha256(f"{source_sha256}:{onnxruntime.__version__}:{REWRITE}".encode()).hexdigest()[:20]
    path, digest = cache / f"minilm-int8-{key}.onnx", cache / f"minilm-int8-{key}.sha256"
    with contextlib.suppress(OSError):
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() == digest.read_text(encoding="ascii").strip():
            return data
    data = integer_model(source)
    with contextlib.suppress(OSError):
        cache.mkdir(parents=True, exist_ok=True)
        for target, content in ((path, data), (digest, hashlib.sha256(data).hexdigest().encode())):
            part = target.with_name(f"{target.name}.{os.getpid()}.part")
            part.write_bytes(content)
            os.replace(part, target)  # whole or not at all, whichever process writes last
    return data


def integer_model(source: Path) -> bytes:
    """The bytes of `source` rewritten with int8 matrix products (per-channel weights)."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="navi-minilm-") as folder:
        folded = os.path.join(folder, "folded.onnx")
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = folded  # constant folding only: standard ONNX ops
        options.log_severity_level = 3
        onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        out = os.path.join(folder, "int8.onnx")
        quiet = _QuietAdvice()
        logging.getLogger().addFilter(quiet)
        try:
            quantize_dynamic(
                folded, out, op_types_to_quantize=["MatMul"], per_channel=True, weight_type=QuantType.QInt8
            )
        finally:
            logging.getLogger().removeFilter(quiet)
        return Path(out).read_bytes()
