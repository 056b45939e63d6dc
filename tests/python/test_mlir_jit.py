"""torch.ops.fxmlir.mlir_jit on CPU: functions outlined from real aten graphs
(make_fx of eager code, forward and backward) give eager's numbers; one
compile per signature and none for a new batch size; a second process loads
the disk cache; the Meta kernel infers shapes; bad calls are errors."""

import math
import os
import subprocess
import sys
import tempfile

import pytest
import torch
import torch.nn.functional as F

# The process's JIT reads its cache directory when it is first used.
os.environ["FXMLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="fxmlir-jit-cache-")

from fxmlir import jit  # noqa: E402
from fxmlir.jit import JitGraph, outline  # noqa: E402

TOLERANCES = {
    torch.float32: {"rtol": 1e-5, "atol": 1e-5},
    torch.float64: {"rtol": 1e-12, "atol": 1e-12},
    torch.bfloat16: {"rtol": 1.6e-2, "atol": 1.6e-2},
}


@pytest.fixture(autouse=True)
def _seeded():
    # Fixed inputs: a bf16 gradient summed over rows can cancel to near zero,
    # where eager's and the JIT's summation orders differ by more than the
    # tolerance on some draws.
    torch.manual_seed(0)


def _check(outlined: JitGraph, fn, *args, dtype=torch.float32, tolerances=None):
    expected = fn(*args)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    actual = outlined(*args)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, **(tolerances or TOLERANCES[dtype]))


def _compiles() -> int:
    stats = jit.stats()
    return stats["compiled"] + stats["disk_hits"]


def gelu_new(x):
    """GPT-2's GELU, written out as transformers writes it."""
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
    return 0.5 * x * (1.0 + torch.tanh(inner))


def _backward(fn):
    """(inputs..., grad) -> gradients of fn's inputs, traced as aten ops."""
    def grads(*args):
        *inputs, grad = args
        inputs = [x.detach().requires_grad_() for x in inputs]
        return torch.autograd.grad(fn(*inputs), inputs, grad)
    return grads


# name: (function, input kinds, whether to test its backward too)
CHAINS = {
    "float_scale": (lambda x: x.float() * 0.125, [torch.bfloat16], False),
    "tanh_add_mul": (lambda a, b, c: torch.tanh(a + b) * c, [torch.float32] * 3, True),
    "sigmoid_mul": (lambda x: torch.sigmoid(x) * x, [torch.float32], True),
    "silu_where": (lambda x, y: torch.where(x > y, F.silu(x), y - 1.5),
                   [torch.float32] * 2, True),
    "gelu_new": (gelu_new, [torch.float32], True),
    "gelu_erf_bias": (lambda x, b: F.gelu(x + b), [torch.float32, "bias"], True),
    "masked_softmax": (lambda x, m: torch.softmax(x.masked_fill(m, -1e9), -1),
                       [torch.float32, torch.bool], False),
}


def _inputs(kinds, rows=6, cols=40):
    inputs = []
    for kind in kinds:
        if kind == "bias":
            inputs.append(torch.randn(cols))
        elif kind == torch.bool:
            inputs.append(torch.rand(rows, cols) < 0.2)
        else:
            inputs.append(torch.randn(rows, cols).to(kind))
    return inputs


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_chain_forward_and_backward(name):
    fn, kinds, with_backward = CHAINS[name]
    inputs = _inputs(kinds)
    _check(outline(fn, *inputs), fn, *inputs)
    if with_backward:
        backward = _backward(fn)
        args = [*inputs, torch.randn(6, 40)]
        _check(outline(backward, *args), backward, *args)


def test_bf16_chain_rounds_like_eager():
    fn = lambda a, b: torch.tanh(a * b) + a  # noqa: E731
    a, b = (torch.randn(5, 64).bfloat16() for _ in range(2))
    _check(outline(fn, a, b), fn, a, b, dtype=torch.bfloat16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_layer_norm_forward_and_backward(dtype):
    fn = lambda x, w, b: F.layer_norm(x, (48,), w, b)  # noqa: E731
    x = torch.randn(7, 48, dtype=dtype)
    w, b = torch.randn(48, dtype=dtype), torch.randn(48, dtype=dtype)
    _check(outline(fn, x, w, b, min_ops=1), fn, x, w, b, dtype=dtype)
    backward = _backward(fn)
    grad = torch.randn(7, 48, dtype=dtype)
    outlined = outline(backward, x, w, b, grad, min_ops=1)
    _check(outlined, backward, x, w, b, grad, dtype=dtype)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_and_backward(log):
    fn = (lambda x: torch.log_softmax(x, -1)) if log else (lambda x: torch.softmax(x, -1))
    x = torch.randn(9, 33)
    _check(outline(fn, x, min_ops=1), fn, x)
    backward = _backward(fn)
    grad = torch.randn(9, 33)
    _check(outline(backward, x, grad, min_ops=1), backward, x, grad)


def test_cross_entropy_backward_reads_each_rows_target():
    # Cross-entropy's backward as one region over many rows, ignored rows
    # included. Its 1-d targets are read by row: the region runs unsplit.
    aten = torch.ops.aten
    logp = torch.log_softmax(torch.randn(1024, 300), -1)
    target = torch.randint(0, 300, (1024,))
    target[::5] = -100
    total_weight = (target != -100).sum().float()

    def grads(logp, target, total_weight, grad):
        g = aten.nll_loss_backward(grad, logp, target, None, 1, -100, total_weight)
        return aten._log_softmax_backward_data(g, logp, 1, torch.float32)

    args = (logp, target, total_weight, torch.tensor(0.5))
    outlined = outline(grads, *args)
    assert outlined.regions == ["jit_nll_loss_backward_log_softmax_backward_data"]
    _check(outlined, grads, *args)


def test_bias_gradient_reduces_rows():
    fn = lambda g: (g * 2.0).sum(0)  # noqa: E731
    g = torch.randn(37, 16)
    _check(outline(fn, g), fn, g)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(600, 1024), (3, 200, 512)])
def test_sums_over_rows_add_up_across_slices(shape, threads):
    # Rows beyond one 256 KiB slice: each slice sums its rows of the weight
    # and bias gradients and the kernel adds the slices up. Sums of 600
    # terms in another order than eager's differ by a few ulps of the sum.
    sums = {"rtol": 1e-4, "atol": 1e-4}
    fn = lambda x, w, b: F.layer_norm(x, shape[-1:], w, b)  # noqa: E731
    backward = _backward(fn)
    x, grad = torch.randn(shape), torch.randn(shape)
    w, b = torch.randn(shape[-1]), torch.randn(shape[-1])
    outlined = outline(backward, x, w, b, grad, min_ops=1)
    bias_grad = lambda g: (g * 2.0).sum(tuple(range(len(shape) - 1)))  # noqa: E731
    outlined_bias = outline(bias_grad, grad)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        _check(outlined, backward, x, w, b, grad, tolerances=sums)
        _check(outlined_bias, bias_grad, grad, tolerances=sums)
        compiles = _compiles()
        # Another number of rows reuses the code.
        x, grad = x[1:], grad[1:]
        _check(outlined, backward, x, w, b, grad, tolerances=sums)
        assert _compiles() == compiles
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_first_bf16_rows_split_across_threads(threads):
    # Autocast's layer norm backward over [2, 128, 512] bf16: two rows that
    # fit one 256 KiB slice, split in two for two threads, the weight and
    # bias gradients summed per slice. Against float64: eager's own kernel
    # sums these gradients less exactly (1.0 off at 40, the region 0.1).
    fn = lambda x, w, b: F.layer_norm(x, (512,), w, b)  # noqa: E731
    backward = _backward(fn)
    x, grad = (torch.randn(2, 128, 512, dtype=torch.bfloat16) for _ in range(2))
    w, b = torch.randn(512), torch.randn(512)
    outlined = outline(backward, x, w, b, grad, min_ops=1)
    exact = backward(x.double(), w.double(), b.double(), grad.double())
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        got = outlined(x, w, b, grad)
    finally:
        torch.set_num_threads(before)
    for g, want, wide in zip(got, exact, (x, w, b)):
        assert g.dtype == wide.dtype
        # bf16's resolution at the largest gradient: sums of 256 rounded terms.
        scale = want.abs().max().item()
        torch.testing.assert_close(g.double(), want, rtol=1.6e-2, atol=1e-2 * scale)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_batch_of_one_splits_its_tokens(threads):
    # [1, tokens, 512] (a batch of one): the rows run along the tokens
    # (JitTest's ABatchOfOne cases check the split itself), several slices
    # of them at two threads, each slice at its offset. RMSNorm's backward
    # sums its weight gradient over the batch and the tokens, per slice.
    sums = {"rtol": 1e-4, "atol": 1e-4}

    def rms_norm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    norm_backward = _backward(rms_norm)
    swiglu_backward = _backward(lambda a, b: F.silu(a) * b)
    x, a, b, grad = (torch.randn(1, 600, 512) for _ in range(4))
    w = torch.randn(512)
    norm = outline(norm_backward, x, w, grad, min_ops=1)
    swiglu = outline(swiglu_backward, a, b, grad)
    # SwiGLU's bf16 product at 255 tokens: slices of unequal rows (at two
    # threads four, of 63 and 64), as many a thread.
    a16, b16, grad16 = (torch.randn(1, 255, 1376, dtype=torch.bfloat16) for _ in range(3))
    swiglu16 = outline(swiglu_backward, a16, b16, grad16)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        _check(norm, norm_backward, x, w, grad, tolerances=sums)
        _check(swiglu, swiglu_backward, a, b, grad)
        _check(swiglu16, swiglu_backward, a16, b16, grad16, dtype=torch.bfloat16)
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("scores", [(2, 8, 128, 128), (16, 1, 128)], ids=["row-sized", "larger"])
def test_a_result_the_rows_do_not_reach_is_computed_whole(scores, threads):
    # GPT-2's additive attention mask, returned beside its first use: each
    # slice of the scores' rows computes the mask whole (slice 0's is kept).
    # Where the mask is larger than a row of the scores, the region runs
    # unsplit. Both as eager, and splitting changes neither.
    def fn(mask, s):
        additive = torch.where(mask, 0.0, -1.0e4)
        return additive, s + additive

    mask = torch.rand(128, 128) > 0.5
    s = torch.randn(scores)
    outlined = outline(fn, mask, s, min_ops=1)
    assert len(outlined.regions) == 1
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        _check(outlined, fn, mask, s)
    finally:
        torch.set_num_threads(before)


def test_one_compile_per_signature_and_any_batch_size():
    fn = lambda x, b: torch.tanh(x * 3.0 + b)  # noqa: E731
    x, b = torch.randn(8, 24), torch.randn(24)
    outlined = outline(fn, x, b)
    before = _compiles()
    _check(outlined, fn, x, b)
    assert _compiles() == before + 1
    # Dim 0 was compiled dynamic: other batch sizes reuse the code.
    for rows in (1, 3, 1000):
        x = torch.randn(rows, 24)
        _check(outlined, fn, x, b)
    assert _compiles() == before + 1


def test_second_process_loads_the_disk_cache():
    fn = lambda x: torch.sigmoid(x) * x - 0.25  # noqa: E731
    x = torch.randn(4, 16)
    outlined = outline(fn, x)
    (name,) = outlined.regions
    outlined(x)
    script = (
        "import torch, fxmlir.jit\n"
        f"text = {outlined.functions[name]!r}\n"
        f"torch.ops.fxmlir.mlir_jit(text, {name!r}, [torch.randn(3, 16)])\n"
        "s = fxmlir.jit.stats(); print(s['compiled'], s['disk_hits'])\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ), check=True)
    assert run.stdout.split() == ["0", "1"], run.stderr


def test_meta_kernel_infers_shapes_and_dtypes():
    def fn(x, b):
        y = x + b
        return y.sum(-1, keepdim=True).bfloat16(), y > 0
    x, b = torch.randn(5, 12), torch.randn(12)
    outlined = outline(fn, x, b)
    (name,) = outlined.regions
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        s, m = torch.ops.fxmlir.mlir_jit(outlined.functions[name], name,
                                         [torch.empty(11, 12), torch.empty(12)])
    assert (s.shape, s.dtype, m.shape, m.dtype) == ((11, 1), torch.bfloat16, (11, 12), torch.bool)


def test_opcheck():
    fn = lambda x, y: torch.tanh(x) * y  # noqa: E731
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    outlined = outline(fn, x, y)
    (name,) = outlined.regions
    torch.library.opcheck(torch.ops.fxmlir.mlir_jit.default,
                          (outlined.functions[name], name, [x, y]),
                          test_utils=("test_schema", "test_faketensor"))


def test_ops_left_outside_regions_are_reported():
    with pytest.raises(ValueError, match="aten.mm"):
        outline(lambda a, b: torch.tanh(a @ b) * a, torch.randn(4, 4), torch.randn(4, 4))


def test_bad_calls_are_errors():
    fn = lambda x: torch.exp(x) + 1.0  # noqa: E731
    x = torch.randn(4, 8)
    outlined = outline(fn, x)
    (name,) = outlined.regions
    text = outlined.functions[name]
    with pytest.raises(RuntimeError, match="must be Float, got Double"):
        torch.ops.fxmlir.mlir_jit(text, name, [x.double()])
    with pytest.raises(RuntimeError, match="takes 1 inputs, got 2"):
        torch.ops.fxmlir.mlir_jit(text, name, [x, x])
    with pytest.raises(RuntimeError, match="was compiled for"):
        torch.ops.fxmlir.mlir_jit(text, name, [torch.randn(4, 9)])
    with pytest.raises(RuntimeError, match="no function @missing"):
        torch.ops.fxmlir.mlir_jit(text, "missing", [x])



def test_a_pointwise_region_writes_into_out():
    """mlir_jit_into: the one result written into `out`, which may be an
    input (fxmlir.inplace_sums passes one that dies at the call)."""
    fn = lambda g, s: g.float() + s  # noqa: E731
    g, s = torch.randn(64, 32).bfloat16(), torch.randn(64, 32)
    outlined = outline(fn, g, s)
    (name,) = outlined.regions
    text = outlined.functions[name]
    expected = fn(g, s)
    donor = s.clone()
    result = torch.ops.fxmlir.mlir_jit_into(text, name, [g, donor], donor)
    assert result is donor
    torch.testing.assert_close(donor, expected)
    out = torch.empty(64, 32)
    torch.ops.fxmlir.mlir_jit_into(text, name, [g, s], out)
    torch.testing.assert_close(out, expected)
    expected_out = f"mlir_jit_into @{name}: out must be a contiguous Float tensor of shape \\[64, 32\\] on cpu"
    for bad, got in ((g.clone(), "BFloat16 \\[64, 32\\] on cpu"),
                     (torch.empty(64, 31), "Float \\[64, 31\\] on cpu"),
                     (torch.empty(32, 64).t(), "Float \\[64, 32\\] \\(not contiguous\\) on cpu")):
        with pytest.raises(RuntimeError, match=f"{expected_out}, got {got}"):
            torch.ops.fxmlir.mlir_jit_into(text, name, [g, s], bad)
