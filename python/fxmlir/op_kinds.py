"""Which fxmlir ops are fusions, JIT regions or opaque calls: read by the
round trip's counts and the op graph's colors."""

from __future__ import annotations

JIT_OP = "fxmlir.mlir_jit"
OPAQUE_CALL = "fxmlir.call"
_STRUCTURAL = ("fxmlir.none", "fxmlir.get_attr", OPAQUE_CALL)


def is_fused_op(name: str) -> bool:
    """Ops of our own that do the work of several ATen ops (the fused ops
    and JIT-compiled regions)."""
    return name.startswith("fxmlir.") and not name.startswith("fxmlir.aten.") \
        and name not in _STRUCTURAL
