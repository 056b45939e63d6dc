"""torch.ops.fxmlir.mlir_jit on CUDA: regions of compiled training steps
(forward and backward) give eager's numbers per dtype, one compile serves
every batch size, launches go to torch's current stream (CUDA graphs capture
them). The GPU tests skip without a device; the lowering they rely on is
checked here without one."""

import json
import os
import tempfile
import warnings

import pytest
import torch
import torch.nn.functional as F

# The process's JIT reads its cache directory when it is first used.
os.environ.setdefault("FXMLIR_CACHE_DIR", tempfile.mkdtemp(prefix="fxmlir-jit-cache-"))

import fxmlir  # noqa: E402
from fxmlir import _C, jit  # noqa: E402
from fxmlir.jit import outline  # noqa: E402
from fxmlir.roundtrip import FallbackWarning  # noqa: E402

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="mlir_jit's CUDA kernel needs a CUDA device")

# f16/bf16 regions compute in f32 and round where eager rounds.
TOLERANCES = {
    torch.float32: {"rtol": 1e-5, "atol": 1e-5},
    torch.float16: {"rtol": 2e-3, "atol": 2e-3},
    torch.bfloat16: {"rtol": 1.6e-2, "atol": 1.6e-2},
}
DTYPES = sorted(TOLERANCES, key=str)


def chain(a, b, c):
    return torch.tanh(a + b) * c


def softmax_scaled(x, s):
    return torch.softmax(x * 0.125, -1) * s


def layer_norm(x, w, b):
    # tanh: the backward has more than native_layer_norm_backward alone (a
    # one-op region is left to eager's kernel).
    return F.layer_norm(torch.tanh(x), x.shape[-1:], w, b)


def scale_3d(x, w):
    # w's gradient sums over B and T of [B, T, C]: a column reduction of
    # two reduced dims.
    return torch.tanh(x) * w


CASES = {
    "chain": (chain, lambda rows, dtype: [torch.randn(rows, 96, dtype=dtype)
                                          for _ in range(3)]),
    "softmax": (softmax_scaled, lambda rows, dtype: [torch.randn(rows, 96, dtype=dtype),
                                                     torch.randn(rows, 96, dtype=dtype)]),
    "layer_norm": (layer_norm, lambda rows, dtype: [torch.randn(rows, 96, dtype=dtype),
                                                    torch.randn(96, dtype=dtype),
                                                    torch.randn(96, dtype=dtype)]),
    # 40 columns: blocks of 16 columns, the last one partly out of range.
    "scale_3d": (scale_3d, lambda rows, dtype: [torch.randn(3, rows, 40, dtype=dtype),
                                                torch.randn(40, dtype=dtype)]),
}


def _summaries(dump_dir) -> dict[str, dict]:
    return {s["stage"]: s for s in (json.loads(p.read_text())
                                    for p in dump_dir.glob("*/*/*/summary.json"))}


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_training_step_like_eager(tmp_path, name, dtype):
    fn, make = CASES[name]
    torch.manual_seed(0)
    compiled = torch.compile(fn, backend=fxmlir.backend(codegen=True, dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        for rows in (16, 40):  # a second batch size: no recompile of regions
            inputs = [x.cuda().requires_grad_() for x in make(rows, dtype)]
            eager = [x.detach().clone().requires_grad_() for x in inputs]
            out, ref = compiled(*inputs), fn(*eager)
            torch.testing.assert_close(out, ref, **TOLERANCES[dtype])
            grad = torch.randn_like(ref)
            out.backward(grad)
            ref.backward(grad)
            for x, y in zip(inputs, eager):
                torch.testing.assert_close(x.grad, y.grad, **TOLERANCES[dtype])
    stages = _summaries(tmp_path)
    assert stages["forward"]["fused_ops"].get("fxmlir.mlir_jit", 0) >= 1
    assert stages["backward"]["fused_ops"].get("fxmlir.mlir_jit", 0) >= 1


@needs_cuda
def test_one_compile_per_device_and_any_batch_size():
    graph = outline(chain, *[torch.randn(8, 64, device="cuda") for _ in range(3)])
    graph(*[torch.randn(8, 64, device="cuda") for _ in range(3)])
    compiled = jit.stats()["compiled"]
    for rows in (1, 33, 1000):
        inputs = [torch.randn(rows, 64, device="cuda") for _ in range(3)]
        (out,) = graph(*inputs)
        assert out.device == inputs[0].device
        torch.testing.assert_close(out, chain(*inputs))
    assert jit.stats()["compiled"] == compiled


@needs_cuda
def test_launches_on_the_current_stream_and_graphs_capture_them():
    inputs = [torch.randn(32, 64, device="cuda") for _ in range(3)]
    graph = outline(chain, *inputs)
    graph(*inputs)  # compiled outside the capture
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        (out,) = graph(*inputs)
    stream.synchronize()
    torch.testing.assert_close(out, chain(*inputs))
    cuda_graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(cuda_graph):
        (captured,) = graph(*inputs)
    for x in inputs:
        x.normal_()
    cuda_graph.replay()
    torch.testing.assert_close(captured, chain(*inputs))


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_pointwise_region_writes_into_an_input_on_cuda(dtype):
    """mlir_jit_into: each thread reads its elements of the inputs before it
    writes that element of the result, so `out` may be one of them (as
    fxmlir.inplace_sums passes a dying input)."""
    inputs = [torch.randn(1000, 96, device="cuda", dtype=dtype) for _ in range(3)]
    graph = outline(chain, *inputs)
    ((name, text),) = graph.functions.items()
    expected = chain(*inputs)
    out = inputs[1].clone()
    result = torch.ops.fxmlir.mlir_jit_into(text, name, [inputs[0], out, inputs[2]], out)
    assert result is out
    torch.testing.assert_close(out, expected, **TOLERANCES[dtype])


@needs_cuda
def test_inputs_on_two_devices_are_an_error():
    a, b, c = (torch.randn(4, 64) for _ in range(3))  # three inputs, not one
    graph = outline(chain, a, b, c)
    ((name, text),) = graph.functions.items()
    with pytest.raises(RuntimeError, match="mlir_jit @.*expected all inputs on cuda"):
        torch.ops.fxmlir.mlir_jit(text, name, [a.cuda(), b.cuda(), c])


def test_cuda_regions_lower_without_a_gpu():
    """What the round trip checks of a CUDA region before its first call."""
    graph = outline(chain, *[torch.randn(8, 64) for _ in range(3)])
    ((name, text),) = graph.functions.items()
    _C.jit_check_cuda(text.replace('"cpu"', '"cuda:0"'), name)
    with pytest.raises(_C.Error, match="jit_missing"):
        _C.jit_check_cuda(text, "jit_missing")


@pytest.mark.parametrize("shape, dims", [((32, 40), (0,)), ((4, 8, 40), (0, 1))], ids=str)
def test_cuda_column_reductions_lower_without_a_gpu(shape, dims):
    """Sums over rows (one reduced dim, or two) take
    fxmlir-gpu-column-reductions' blocks of columns: the lowering to PTX
    runs for each."""
    x, w = torch.randn(shape), torch.randn(40)
    graph = outline(lambda x, w: (torch.tanh(x) * w).sum(dims), x, w)
    ((name, text),) = graph.functions.items()
    _C.jit_check_cuda(text.replace('"cpu"', '"cuda:0"'), name)
