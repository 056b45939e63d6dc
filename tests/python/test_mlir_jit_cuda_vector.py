"""The vector path of mlir_jit's CUDA elementwise kernels: 16-byte loads and
stores (4 x f32, 8 x bf16/f16 per thread) when the last dim divides and every
data pointer is aligned, a scalar loop over the thread's elements otherwise.
Both compute the same scalar ops per element, so a view that starts one
element into its storage (misaligned) gives the aligned tensor's results bit
for bit. GPU tests: they skip without a device (issue 18 runs them)."""

import os
import tempfile

import pytest
import torch

# The process's JIT reads its cache directory when it is first used.
os.environ.setdefault("FXMLIR_CACHE_DIR", tempfile.mkdtemp(prefix="fxmlir-jit-cache-"))

from fxmlir.jit import outline  # noqa: E402

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="mlir_jit's CUDA kernel needs a CUDA device")

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOLERANCES = {
    torch.float32: {"rtol": 1e-5, "atol": 1e-5},
    torch.float16: {"rtol": 2e-3, "atol": 2e-3},
    torch.bfloat16: {"rtol": 1.6e-2, "atol": 1.6e-2},
}


def chain(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return torch.tanh(a + b) * c


def _shifted(x: torch.Tensor) -> torch.Tensor:
    """x's values in a contiguous view one element into a larger storage."""
    storage = torch.empty(x.numel() + 1, device=x.device, dtype=x.dtype)
    view = storage[1:].view_as(x)
    view.copy_(x)
    return view


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_misaligned_views_give_the_vector_paths_bits(dtype: torch.dtype) -> None:
    inputs = [torch.randn(40, 64, device="cuda", dtype=dtype) for _ in range(3)]
    graph = outline(chain, *inputs)
    (vectorized,) = graph(*inputs)
    shifted = [_shifted(x) for x in inputs]
    assert all(x.data_ptr() % 16 for x in shifted)
    (scalar,) = graph(*shifted)
    assert torch.equal(vectorized, scalar)
    torch.testing.assert_close(vectorized, chain(*inputs), **TOLERANCES[dtype])


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_last_dims_the_width_does_not_divide(dtype: torch.dtype) -> None:
    for width in (1, 7, 63):
        inputs = [torch.randn(40, width, device="cuda", dtype=dtype) for _ in range(3)]
        (out,) = outline(chain, *inputs)(*inputs)
        torch.testing.assert_close(out, chain(*inputs), **TOLERANCES[dtype])
