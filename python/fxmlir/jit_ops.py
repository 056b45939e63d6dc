"""``torch.ops.fxmlir.mlir_jit``, the op that runs JIT regions.

Importing this module loads ``libfxmlir_jit_ops.so``: the op's schema and
kernels, which compile regions with the core's JIT (``libFxmlirCore.so``,
MLIR and LLVM). It is apart from the fused kernels (fxmlir.ops), so that a
program that calls only those loads without the compiler.
"""

from __future__ import annotations

from fxmlir.op_libraries import load

__all__ = ["LIBRARY_PATH"]

LIBRARY_PATH = load("libfxmlir_jit_ops.so")
