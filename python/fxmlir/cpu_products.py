"""Which 16-bit float types' CPU products fxmlir-widen-cpu-products computes
as float32 GEMMs on this machine: those ATen has no oneDNN GEMM for (x86
without AVX-512, e.g. AMD Zen 3), where its fallback is ~50x slower than
float32's (a [256, 512] x [512, 512] bf16 mm: 105 ms against 1.9 ms, one
thread). The fused ops' own products ask ATen the same question
(csrc/ops/WideProducts.h). Small products the pass widens on every CPU (its
own rule, not this list)."""

from __future__ import annotations

import torch

# The pass's names of the 16-bit types, and ATen's query of each.
_QUERIES = {"bf16": "_is_mkldnn_bf16_supported", "f16": "_is_mkldnn_fp16_supported"}


def widened_dtypes() -> list[str]:
    """The 16-bit types ("bf16", "f16") whose CPU products are widened here:
    all of them when oneDNN is off or absent."""
    one_dnn = torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
    return [name for name, query in _QUERIES.items()
            if not (one_dnn and getattr(torch.ops.mkldnn, query)())]
