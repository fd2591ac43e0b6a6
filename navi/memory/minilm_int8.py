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
The rewrite costs about 3 s of CPU once per process (in the worker thread that loads the model)
and writes only to a private temporary directory removed at once.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path


class _QuietAdvice(logging.Filter):
    """The quantizer logs advice to pre-process the model (shape inference) on the root logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


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
