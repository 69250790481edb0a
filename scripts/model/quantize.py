"""Quantizes the local embedding model's matrix products to 8-bit integers (dynamic quantization).

The model as published keeps int8 weights but casts them to float32, so every product runs in
float32. Here ONNX Runtime first folds those casts into plain float32 weights, then its quantizer
rewrites each MatMul as an integer product with per-channel int8 weights and activations quantized
per call. reduce_range keeps weights to 7 bits, so the 16-bit sums of CPUs without VNNI (AVX2)
never saturate: every x86-64 CPU computes the same vectors.

usage: python quantize.py <model.onnx> <out.onnx>
"""
import os
import sys
import tempfile

import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic


def main(source: str, target: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        folded = os.path.join(work, "folded.onnx")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = folded
        ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        quantize_dynamic(folded, target, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
