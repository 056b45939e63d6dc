"""torch.ops.fxmlir.*: forward/backward against the unfused aten ops,
torch.library.opcheck, input validation, mask statistics and seeding, and use
inside a compiled training step. CUDA variants run only where CUDA is."""

import math
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import fxmlir
import fxmlir.jit_ops  # noqa: F401  (loads mlir_jit, whose library is apart)
import fxmlir.ops  # noqa: F401  (loads torch.ops.fxmlir)
from fxmlir import fused_ops

ops = torch.ops.fxmlir

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(
            not torch.cuda.is_available(), reason="CUDA is not available"
        ),
    ),
]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# Fused kernels compute in float without rounding x + bias (or an activation)
# to the dtype first: 16-bit results are checked against the reference
# computed in float32 from the same inputs, to within an ulp or two. Eager's
# 16-bit reference would not do: it rounds each intermediate (tanh's gradient
# 1 - y^2 from a rounded y loses most of its bits near |y| = 1).
TOLERANCES = {
    torch.float32: {"rtol": 1e-5, "atol": 1e-5},
    torch.float16: {"rtol": 2e-3, "atol": 2e-3},
    torch.bfloat16: {"rtol": 1.6e-2, "atol": 1.6e-2},
}
# (shape of x, axis): last, not last, negative, 1-element dims, 1-D.
SHAPES = [
    ((17,), 0),
    ((4, 33), 1),
    ((4, 33), -1),
    ((4, 33), 0),
    ((2, 3, 5), 1),
    ((2, 3, 5), -3),
    ((2, 1, 7), -2),
    ((1, 5, 1), 1),
    ((3, 4, 1, 6), -1),
    ((2, 3, 4, 5), 2),
]


def bias_view(bias: torch.Tensor, ndim: int, axis: int) -> torch.Tensor:
    """bias reshaped to broadcast along axis of an ndim tensor (eager path)."""
    axis = axis % ndim
    return bias.reshape([-1 if d == axis else 1 for d in range(ndim)])


def make_inputs(
    shape: tuple[int, ...], axis: int, dtype: torch.dtype, device: str
) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(shape, dtype=dtype, device=device)
    bias = torch.randn(shape[axis], dtype=dtype, device=device)
    return x, bias


def leaf(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone().requires_grad_(True)


def check_forward_backward(fused, reference, inputs, dtype, tolerances=TOLERANCES,
                           within_eager_error=False) -> None:
    """Runs fused and reference on fresh leaves of inputs and compares the
    outputs and the gradients of every floating input. With
    within_eager_error, a 16-bit result may also be off by up to twice what
    the reference run in that dtype is off (a GEMM's gradient sums products
    rounded to 16 bits, where one rounding step of a large term exceeds
    atol)."""
    exact = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    fused_in = [leaf(t) if t.is_floating_point() else t for t in inputs]
    ref_in = [leaf(t.to(exact)) if t.is_floating_point() else t for t in inputs]
    out = fused(*fused_in)
    ref = reference(*ref_in)
    grad = torch.randn_like(out)
    ref.backward(grad.to(exact))
    eager_in = eager_out = None
    if within_eager_error and exact is not dtype:
        eager_in = [leaf(t) if t.is_floating_point() else t for t in inputs]
        eager_out = reference(*eager_in)
        eager_out.backward(grad)
    tol = tolerances[dtype]

    def close(mine, theirs, eager, atol):
        if eager is not None:
            atol = max(atol, 2 * (eager.float() - theirs).abs().max().item())
        torch.testing.assert_close(mine, theirs.to(dtype), rtol=tol["rtol"], atol=atol)

    close(out, ref, eager_out, tol["atol"])
    out.backward(grad)
    for i, (mine, theirs) in enumerate(zip(fused_in, ref_in)):
        if mine.is_floating_point():
            # Bias grads are sums over many elements: scale atol with them.
            n = max(1, ref.numel() // max(1, mine.numel()))
            close(mine.grad, theirs.grad, eager_in and eager_in[i].grad,
                  tol["atol"] * math.sqrt(n))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_bias_add(device: str, dtype: torch.dtype, shape, axis: int) -> None:
    x, bias = make_inputs(shape, axis, dtype, device)
    check_forward_backward(
        lambda x, b: ops.bias_add(x, b, axis),
        lambda x, b: x + bias_view(b, x.dim(), axis),
        [x, bias],
        dtype,
    )


# Every activation of fused_ops.ACTIVATIONS as eager spells it: (value,
# gradient given the output gradient and the pre-activation).
EAGER_ACTIVATIONS = {
    "none": (lambda v: v, lambda g, v: g),
    "gelu": (F.gelu, lambda g, v: torch.ops.aten.gelu_backward(g, v)),
    "gelu_tanh": (lambda v: F.gelu(v, approximate="tanh"),
                  lambda g, v: torch.ops.aten.gelu_backward(g, v, approximate="tanh")),
    "relu": (F.relu, lambda g, v: torch.ops.aten.threshold_backward(g, F.relu(v), 0)),
    "silu": (F.silu, torch.ops.aten.silu_backward),
    "tanh": (torch.tanh, lambda g, v: torch.ops.aten.tanh_backward(g, torch.tanh(v))),
    "hardswish": (F.hardswish, torch.ops.aten.hardswish_backward),
}
ACTIVATION_NAMES = [activation.name for activation in fused_ops.ACTIVATIONS]


def test_every_activation_has_an_eager_reference() -> None:
    assert sorted(EAGER_ACTIVATIONS) == sorted(ACTIVATION_NAMES)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_fused_bias_act(device, dtype, shape, axis, activation) -> None:
    eager, _ = EAGER_ACTIVATIONS[activation]
    x, bias = make_inputs(shape, axis, dtype, device)
    check_forward_backward(
        lambda x, b: ops.fused_bias_act(x, b, axis, activation),
        lambda x, b: eager(x + bias_view(b, x.dim(), axis)),
        [x, bias],
        dtype,
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_fused_bias_act_grad(device, dtype, shape, axis, activation) -> None:
    _, eager_grad = EAGER_ACTIVATIONS[activation]
    x, bias = make_inputs(shape, axis, dtype, device)
    grad = torch.randn_like(x)
    out = ops.fused_bias_act_grad(grad, x, bias, axis, activation)
    # In float32 from the same inputs (see TOLERANCES): x + bias rounded to
    # 16 bits first can cross a gradient's jump (hardswish's at -3 and 3).
    ref = eager_grad(grad.float(), x.float() + bias_view(bias.float(), x.dim(), axis))
    torch.testing.assert_close(out, ref.to(dtype), **TOLERANCES[dtype])


@pytest.mark.parametrize("device", DEVICES)
def test_relu_grad_selects_like_eager(device) -> None:
    """An infinite gradient where the input is negative gives 0 (a select,
    as in threshold_backward), and NaN inputs propagate through relu."""
    x = torch.tensor([[-1.0, 2.0, float("nan")]], device=device)
    bias = torch.zeros(3, device=device)
    grad = torch.tensor([[float("inf"), 1.0, 1.0]], device=device)
    assert ops.fused_bias_act_grad(grad, x, bias, 1, "relu")[0, 0] == 0
    assert ops.fused_bias_act(x, bias, 1, "relu")[0, 2].isnan()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_fused_bias_add_mask_scale(
    device: str, dtype: torch.dtype, shape, axis: int
) -> None:
    x, bias = make_inputs(shape, axis, dtype, device)
    mask = torch.rand(shape, device=device) > 0.3
    scale = 1 / 0.7
    check_forward_backward(
        lambda x, b: ops.fused_bias_add_mask_scale(x, b, mask, axis, scale),
        lambda x, b: (x + bias_view(b, x.dim(), axis)) * mask * scale,
        [x, bias],
        dtype,
    )


@pytest.mark.parametrize("device", DEVICES)
def test_mask_scale_backward_uses_mask(device: str) -> None:
    x = torch.randn(6, 8, device=device, requires_grad=True)
    bias = torch.randn(8, device=device, requires_grad=True)
    mask = torch.rand(6, 8, device=device) > 0.5
    ops.fused_bias_add_mask_scale(x, bias, mask, 1, 3.0).sum().backward()
    torch.testing.assert_close(x.grad, mask.float() * 3.0, rtol=0, atol=0)
    torch.testing.assert_close(bias.grad, (mask.float() * 3.0).sum(0))


@pytest.mark.parametrize("device", DEVICES)
def test_mask_scale_is_exact(device: str) -> None:
    """float32 (x + bias) * mask * scale rounds exactly like eager; dropped
    elements are exact zeros."""
    x = torch.randn(64, 48, device=device)
    bias = torch.randn(48, device=device)
    mask = torch.rand(64, 48, device=device) > 0.25
    out = ops.fused_bias_add_mask_scale(x, bias, mask, -1, 1 / 0.75)
    torch.testing.assert_close(out, (x + bias) * mask * (1 / 0.75), rtol=0, atol=0)
    assert (out[~mask] == 0).all()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16bit_bias_add_rounds_like_eager(device: str, dtype: torch.dtype) -> None:
    """Every 16-bit value, plus a bias, rounds to the same bits as eager."""
    every = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)
    x = every.view(dtype).reshape(256, 256).to(device)
    bias = (torch.randn(256) * 10).to(dtype).to(device)
    out = ops.bias_add(x, bias, 1)
    ref = x + bias
    same = (out.view(torch.int16) == ref.view(torch.int16)) | (out.isnan() & ref.isnan())
    assert same.all()


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_and_unaligned_inputs(device: str) -> None:
    x = torch.randn(33, 20, device=device).t()  # transposed: [20, 33]
    bias = torch.randn(66, device=device)[::2]  # strided bias
    torch.testing.assert_close(ops.bias_add(x, bias, 1), x + bias)
    # A storage offset of one element defeats 16-byte vector accesses.
    flat = torch.randn(1 + 8 * 12, device=device)[1:].view(8, 12)
    b12 = torch.randn(12, device=device)
    torch.testing.assert_close(ops.fused_bias_act(flat, b12, 1, "gelu"), F.gelu(flat + b12))
    mask = torch.ones(1 + 8 * 12, dtype=torch.bool, device=device)[1:].view(8, 12)
    torch.testing.assert_close(
        ops.fused_bias_add_mask_scale(flat, b12, mask, 1, 2.0), (flat + b12) * 2.0
    )
    out = ops.fused_bias_act(x, bias, 1, "gelu")
    assert out.is_contiguous()


@pytest.mark.parametrize("device", DEVICES)
def test_empty_input(device: str) -> None:
    x = torch.randn(0, 5, device=device)
    bias = torch.randn(5, device=device)
    assert ops.fused_bias_act(x, bias, 1, "gelu").shape == (0, 5)
    assert ops.random_mask_like(x, 0.5).shape == (0, 5)


OPCHECK_CASES = {
    "bias_add": lambda x, b, m, g: (ops.bias_add.default, (x, b, 1)),
    "fused_bias_act": lambda x, b, m, g: (
        ops.fused_bias_act.default,
        (x, b, -2),
        {"activation": "gelu_tanh"},
    ),
    "fused_bias_act_grad": lambda x, b, m, g: (
        ops.fused_bias_act_grad.default,
        (g, x.detach(), b.detach(), 1, "gelu"),
    ),
    "fused_bias_add_mask_scale": lambda x, b, m, g: (
        ops.fused_bias_add_mask_scale.default,
        (x, b, m, 1, 2.5),
    ),
    "random_mask_like": lambda x, b, m, g: (ops.random_mask_like.default, (x, 0.25)),
    "fused_bias_act_relu": lambda x, b, m, g: (
        ops.fused_bias_act.default, (x, b, 1, "relu")),
    "fused_bias_act_grad_relu": lambda x, b, m, g: (
        ops.fused_bias_act_grad.default, (g, x, b, -2, "relu")),
    "fused_bias_act_silu": lambda x, b, m, g: (
        ops.fused_bias_act.default, (x, b, 1, "silu")),
    "fused_bias_act_grad_silu": lambda x, b, m, g: (
        ops.fused_bias_act_grad.default, (g, x, b, 1, "silu")),
    # Random ops: opcheck compares two runs, so with p = 0 (nothing dropped).
    "fused_bias_dropout_add": lambda x, b, m, g: (
        ops.fused_bias_dropout_add.default, (x, b, g, 1, 0.0)),
    "fused_bias_dropout_add_bool_mask": lambda x, b, m, g: (
        ops.fused_bias_dropout_add.default, (x, b, None, 1, 0.0, False)),
    "fused_bias_dropout_add_gelu": lambda x, b, m, g: (
        ops.fused_bias_dropout_add.default, (x, b, g, 1, 0.0, True, "gelu")),
    "packed_mask_scale": lambda x, b, m, g: (
        ops.packed_mask_scale.default,
        (x, torch.randint(0, 256, (8,), dtype=torch.uint8, device=x.device), 2.0)),
    "fused_linear_gelu": lambda x, b, m, g: (
        ops.fused_linear_gelu.default,
        (x, torch.randn(8, 5, dtype=x.dtype, device=x.device, requires_grad=True),
         torch.randn(8, dtype=x.dtype, device=x.device, requires_grad=True), "tanh")),
    "fused_linear_gelu_grad": lambda x, b, m, g: (
        ops.fused_linear_gelu_grad.default,
        (torch.randn(3, 4, 8, dtype=x.dtype, device=x.device), x.detach(),
         torch.randn(8, 5, dtype=x.dtype, device=x.device),
         torch.randn(3, 4, 8, dtype=x.dtype, device=x.device), "none")),
    "fused_linear_gelu_grad_mm": lambda x, b, m, g: (
        ops.fused_linear_gelu_grad_mm.default,
        (torch.randn(3, 4, 6, dtype=x.dtype, device=x.device),
         torch.randn(6, 8, dtype=x.dtype, device=x.device), x.detach(),
         torch.randn(8, 5, dtype=x.dtype, device=x.device),
         torch.randn(3, 4, 8, dtype=x.dtype, device=x.device), "tanh")),
    "linear_weight_bias_grad": lambda x, b, m, g: (
        ops.linear_weight_bias_grad.default,
        (torch.randn(3, 4, 8, dtype=x.dtype, device=x.device), x.detach())),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(OPCHECK_CASES))
def test_opcheck(device: str, dtype: torch.dtype, name: str) -> None:
    x = torch.randn(3, 4, 5, dtype=dtype, device=device, requires_grad=True)
    bias = torch.randn(4, dtype=dtype, device=device, requires_grad=True)
    mask = torch.rand(3, 4, 5, device=device) > 0.5
    grad = torch.randn(3, 4, 5, dtype=dtype, device=device)
    op, args, *kwargs = OPCHECK_CASES[name](x, bias, mask, grad)
    torch.library.opcheck(op, args, kwargs[0] if kwargs else None)


@pytest.mark.parametrize("device", DEVICES)
def test_random_mask_statistics(device: str) -> None:
    like = torch.empty(1 << 20, device=device)
    for p in (0.1, 0.5, 0.9):
        mask = ops.random_mask_like(like, p)
        assert mask.dtype == torch.bool and mask.shape == like.shape
        assert mask.device == like.device
        n = like.numel()
        sigma = math.sqrt(p * (1 - p) / n)
        assert abs(mask.float().mean().item() - (1 - p)) < 4 * sigma
    assert ops.random_mask_like(like, 0.0).all()


@pytest.mark.parametrize("device", DEVICES)
def test_random_mask_seeding(device: str) -> None:
    like = torch.empty(64, 1000, device=device).t()  # shape only; strides ignored
    torch.manual_seed(1234)
    first = ops.random_mask_like(like, 0.5)
    second = ops.random_mask_like(like, 0.5)
    torch.manual_seed(1234)
    again = ops.random_mask_like(like, 0.5)
    torch.manual_seed(4321)
    other = ops.random_mask_like(like, 0.5)
    assert first.shape == like.shape and first.is_contiguous()
    assert torch.equal(first, again)
    assert not torch.equal(first, second), "consecutive calls must differ"
    assert not torch.equal(first, other), "different seeds must differ"


def test_random_mask_cpu_ignores_thread_count() -> None:
    """The CPU mask depends on the seed only, not on how threads split it."""
    like = torch.empty(3, 100_003)
    threads = torch.get_num_threads()
    try:
        masks = []
        for n in (1, 2, 3):
            torch.set_num_threads(n)
            torch.manual_seed(99)
            masks.append(ops.random_mask_like(like, 0.3))
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(masks[0], masks[1]) and torch.equal(masks[0], masks[2])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")
def test_random_mask_cuda_graph_replays_draw_new_masks() -> None:
    like = torch.empty(1 << 16, device="cuda")
    ops.random_mask_like(like, 0.5)  # warm up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        mask = ops.random_mask_like(like, 0.5)
    graph.replay()
    first = mask.clone()
    graph.replay()
    assert not torch.equal(first, mask)
    assert abs(mask.float().mean().item() - 0.5) < 4 * math.sqrt(0.25 / like.numel())


def test_errors() -> None:
    x = torch.randn(4, 5)
    bias = torch.randn(5)
    with pytest.raises(RuntimeError, match="bias must be 1-D"):
        ops.bias_add(x, torch.randn(1, 5), 1)
    with pytest.raises(RuntimeError, match=r"bias has 4 elements but x.size\(1\) is 5"):
        ops.fused_bias_act(x, torch.randn(4), 1, "gelu")
    with pytest.raises(RuntimeError, match="axis 2 is out of range"):
        ops.bias_add(x, bias, 2)
    with pytest.raises(RuntimeError, match="axis -3 is out of range"):
        ops.bias_add(x, bias, -3)
    with pytest.raises(RuntimeError, match="dtype mismatch"):
        ops.bias_add(x, bias.double(), 1)
    with pytest.raises(RuntimeError, match="unsupported dtype"):
        ops.bias_add(x.int(), bias.int(), 1)
    with pytest.raises(RuntimeError, match="fused_bias_act: activation must be one of 'none', "
                       "'gelu', 'gelu_tanh', .*, got 'erf'"):
        ops.fused_bias_act(x, bias, 1, "erf")
    with pytest.raises(RuntimeError, match="grad shape"):
        ops.fused_bias_act_grad(torch.randn(4, 6), x, bias, 1, "gelu")
    with pytest.raises(RuntimeError, match="mask must be Bool"):
        ops.fused_bias_add_mask_scale(x, bias, torch.ones(4, 5), 1, 2.0)
    with pytest.raises(RuntimeError, match="mask shape"):
        ops.fused_bias_add_mask_scale(x, bias, torch.ones(5, 4, dtype=torch.bool), 1, 2.0)
    for p in (-0.1, 1.0, float("nan")):
        with pytest.raises(RuntimeError, match=r"p must be in \[0, 1\)"):
            ops.random_mask_like(x, p)
    with pytest.raises(RuntimeError, match="fused_bias_dropout_add: activation must be one of "
                       "'none', 'gelu', 'gelu_tanh', .*, got 'gelu_erf'"):
        ops.fused_bias_dropout_add(x, bias, None, 1, 0.1, True, "gelu_erf")


# One failing call per op: its kernel's argument check raises c10::Error.
RAISING_CALLS = {
    "bias_add": "ops.bias_add(x, torch.randn(1, 5, device=d), 1)",
    "fused_bias_act": "ops.fused_bias_act(x, b, 1, 'erf')",
    "fused_bias_act_grad": "ops.fused_bias_act_grad(torch.randn(4, 6, device=d), x, b, 1, 'gelu')",
    "random_mask_like": "ops.random_mask_like(x, 1.5)",
    "cast_tensors": "ops.cast_tensors([x, torch.empty(2, device='meta')], torch.bfloat16)",
    "fused_bias_add_mask_scale": "ops.fused_bias_add_mask_scale(x, b, x, 1, 2.0)",
    "mlir_jit": "ops.mlir_jit('func.func private @f() { return }', 'g', [x])",
    "mlir_jit_into": "ops.mlir_jit_into('func.func private @f() { return }', 'g', [x], x)",
    "fused_bias_dropout_add": "ops.fused_bias_dropout_add(x, b, x.t(), 1, 0.1)",
    "packed_mask_scale": "ops.packed_mask_scale(x, torch.zeros(2, dtype=torch.uint8, device=d), 2.0)",
    "fused_linear_gelu": "ops.fused_linear_gelu(x, torch.randn(3, 4, device=d), b, 'tanh')",
    "fused_linear_gelu_grad": "ops.fused_linear_gelu_grad(x, x, x, x, 'erf')",
    "fused_linear_gelu_grad_mm": "ops.fused_linear_gelu_grad_mm(x, b, x, x, x, 'tanh')",
    "linear_weight_bias_grad": "ops.linear_weight_bias_grad(x, b)",
    "fused_linear_cross_entropy": "ops.fused_linear_cross_entropy(x, torch.randn(3, 4, device=d), "
                                  "None, torch.zeros(4, dtype=torch.long, device=d), 1, -100, "
                                  "False)",
    "fused_linear_cross_entropy_grad": "ops.fused_linear_cross_entropy_grad(torch.ones((), "
                                       "device=d), None, x, x, None, torch.zeros(4, "
                                       "dtype=torch.long, device=d), None, torch.zeros(4, "
                                       "device=d), 3, -100)",
    # An index out of range on CPU; no kernel on CUDA (NotImplementedError).
    "embedding_grad": "ops.embedding_grad(x, torch.tensor([0, 1, 2, 9], device=d), 5, -1)",
}


@pytest.mark.parametrize("device", DEVICES)
def test_every_op_raises_on_every_device(device: str) -> None:
    """A failed check reaches Python as RuntimeError, in a child process so
    that a crash (as once seen on a CUDA build) fails this test, naming the
    op, instead of killing the suite."""
    lines = ["import torch, fxmlir.ops", "ops = torch.ops.fxmlir", f"d = {device!r}",
             "x, b = torch.randn(4, 5, device=d), torch.randn(5, device=d)"]
    for name, call in RAISING_CALLS.items():
        lines += [f"print({name!r}, end=' ', flush=True)",
                  f"try:\n    {call}\nexcept RuntimeError:\n    print('raised', flush=True)",
                  "else:\n    print('returned', flush=True)"]
    result = subprocess.run([sys.executable, "-c", "\n".join(lines)],
                            capture_output=True, text=True, timeout=300)
    outcomes = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert result.returncode == 0, (
        f"exit {result.returncode} after {result.stdout.split()[-1:]}: {result.stderr[-2000:]}")
    assert outcomes == {name: "raised" for name in RAISING_CALLS}
    registered = {name.split("::")[1] for name in torch._C._dispatch_get_all_op_names()
                  if name.startswith("fxmlir::")}
    assert set(RAISING_CALLS) == registered, "every op needs a raising call here"


def test_errors_on_meta() -> None:
    """Fake/Meta kernels validate like the real ones (tracing fails early)."""
    x = torch.empty(4, 5, device="meta")
    with pytest.raises(RuntimeError, match="bias has 4 elements"):
        ops.bias_add(x, torch.empty(4, device="meta"), 1)
    with pytest.raises(RuntimeError, match="activation must be"):
        ops.fused_bias_dropout_add(x, torch.empty(5, device="meta"), None, 1, 0.1, True, "elu")
    assert ops.random_mask_like(x, 0.5).dtype == torch.bool


class DropoutGeluMLP(torch.nn.Module):
    """Linear -> bias + gelu -> Linear -> bias + dropout, on the fused ops."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(width, width, bias=False)
        self.b1 = torch.nn.Parameter(torch.randn(width))
        self.fc2 = torch.nn.Linear(width, width, bias=False)
        self.b2 = torch.nn.Parameter(torch.randn(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = ops.fused_bias_act(self.fc1(x), self.b1, -1, "gelu_tanh")
        h = ops.bias_add(h, self.b1, 1)
        mask = ops.random_mask_like(h, 0.1)
        return ops.fused_bias_add_mask_scale(self.fc2(h), self.b2, mask, -1, 1 / 0.9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_compiled_train_step(device: str, backend: str, dynamic: bool) -> None:
    torch.manual_seed(0)
    model = DropoutGeluMLP(16).to(device)
    compiled = torch.compile(model, backend=backend, fullgraph=True, dynamic=dynamic)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    before = model.b1.detach().clone()
    for batch in (8, 8, 5):
        x = torch.randn(batch, 16, device=device)
        loss = compiled(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        assert all(p.grad is not None and p.grad.isfinite().all() for p in model.parameters())
        optimizer.step()
    assert not torch.equal(before, model.b1)

    # Gradients match eager on the same seed (same masks).
    x = torch.randn(8, 16, device=device)
    grads = []
    for fn in (model, compiled):
        torch.manual_seed(7)
        model.zero_grad()
        fn(x).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for eager_grad, compiled_grad in zip(*grads):
        torch.testing.assert_close(compiled_grad, eager_grad)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh"])
@pytest.mark.parametrize("shape,axis", [((3, 5), 1), ((2, 3, 4), 1), ((4, 3), 0)])
def test_fused_bias_act_double_backward_any_axis(device, activation, shape, axis) -> None:
    """Second derivatives through the fused op (and its fused gradient) match
    finite differences in float64."""
    x, bias = make_inputs(shape, axis, torch.float64, device)
    x.requires_grad_(True)
    bias.requires_grad_(True)

    def fn(x, b):
        return ops.fused_bias_act(x, b, axis, activation)

    assert torch.autograd.gradcheck(fn, (x, bias))
    assert torch.autograd.gradgradcheck(fn, (x, bias))
    grad = torch.randn(shape, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda g, x, b: ops.fused_bias_act_grad(g, x, b, axis, activation),
        (grad, x, bias))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_activation_double_backward(device, activation) -> None:
    # Away from relu's kink, where finite differences are exact.
    x = (torch.rand(3, 4, dtype=torch.float64, device=device) + 0.5) * \
        torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64, device=device)
    bias = (torch.rand(4, dtype=torch.float64, device=device) * 0.1).requires_grad_()
    x.requires_grad_()
    assert torch.autograd.gradgradcheck(
        lambda x, b: ops.fused_bias_act(x, b, 1, activation), (x, bias))
    grad = torch.randn(3, 4, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda g, x, b: ops.fused_bias_act_grad(g, x, b, 1, activation), (grad, x, bias))


# -- residual bias-dropout-add with a packed mask -----------------------------

def unpack(mask: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A packed mask (bit i % 8 of byte i / 8) as bools shaped like `like`."""
    bits = (mask.unsqueeze(-1) >> torch.arange(8, device=mask.device)) & 1
    return bits.flatten()[: like.numel()].view(like.shape).bool()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((4, 33), 1), ((2, 3, 5), 1), ((3, 4, 1, 6), -1),
                                        ((16, 64), -1)])
@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("packed", [True, False])
def test_fused_bias_dropout_add(device, dtype, shape, axis, residual, packed) -> None:
    """Forward and backward against eager given the mask the kernel drew."""
    x, bias = make_inputs(shape, axis, dtype, device)
    inputs = [x, bias] + ([torch.randn(shape, dtype=dtype, device=device)] if residual else [])
    p, masks = 0.3, []

    def fused(x, b, *r):
        out, mask = ops.fused_bias_dropout_add(x, b, r[0] if r else None, axis, p, packed)
        masks.append(mask)
        return out

    def reference(x, b, *r):
        keep = unpack(masks[0], x) if packed else masks[0]
        dropped = (x + bias_view(b, x.dim(), axis)) * keep / (1 - p)
        return r[0] + dropped if r else dropped

    check_forward_backward(fused, reference, inputs, dtype)
    (mask,) = masks
    if packed:
        assert mask.dtype == torch.uint8 and mask.shape == ((x.numel() + 7) // 8,)
    else:
        assert mask.dtype == torch.bool and mask.shape == x.shape


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
@pytest.mark.parametrize("residual,packed", [(False, True), (True, False)])
def test_fused_bias_dropout_add_activation(device, dtype, activation, residual,
                                           packed) -> None:
    """dropout(act(x + bias)) [+ residual] against eager given the mask."""
    shape, axis = (3, 40, 7), 1
    x, bias = make_inputs(shape, axis, dtype, device)
    inputs = [x, bias] + ([torch.randn(shape, dtype=dtype, device=device)] if residual else [])
    p, masks = 0.25, []

    def fused(x, b, *r):
        out, mask = ops.fused_bias_dropout_add(x, b, r[0] if r else None, axis, p, packed,
                                               activation)
        masks.append(mask)
        return out

    def reference(x, b, *r):
        keep = unpack(masks[0], x) if packed else masks[0]
        act = EAGER_ACTIVATIONS[activation][0](x + bias_view(b, x.dim(), axis))
        dropped = act * keep / (1 - p)
        return r[0] + dropped if r else dropped

    check_forward_backward(fused, reference, inputs, dtype)


@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_fused_bias_dropout_add_activation_double_backward(activation) -> None:
    """Exact second derivatives through the activation (gradient penalties);
    the seed fixes the mask across gradcheck's calls."""
    x = (torch.rand(3, 4, dtype=torch.float64) + 0.5) * \
        torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)  # off relu's kink
    bias = (torch.rand(4, dtype=torch.float64) * 0.1).requires_grad_()
    residual = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)

    def fused(x, b, r):
        torch.manual_seed(0)
        return ops.fused_bias_dropout_add(x, b, r, 1, 0.5, True, activation)[0]

    inputs = (x.requires_grad_(), bias, residual)
    assert torch.autograd.gradcheck(fused, inputs)
    assert torch.autograd.gradgradcheck(fused, inputs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_packed_mask_scale(device, dtype) -> None:
    grad = torch.randn(7, 13, dtype=dtype, device=device)
    mask = torch.randint(0, 256, ((grad.numel() + 7) // 8,), dtype=torch.uint8, device=device)
    out = ops.packed_mask_scale(grad, mask, 1.25)
    torch.testing.assert_close(out, grad * unpack(mask, grad) * 1.25, rtol=0, atol=0)
    # A storage offset of one element defeats 16-byte accesses.
    flat = torch.randn(1 + 64, dtype=dtype, device=device)[1:].view(8, 8)
    mask = torch.randint(0, 256, (8,), dtype=torch.uint8, device=device)
    torch.testing.assert_close(ops.packed_mask_scale(flat, mask, 2.0),
                               flat * unpack(mask, flat) * 2.0, rtol=0, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_fused_bias_dropout_add_statistics_and_seeding(device) -> None:
    x = torch.randn(4096, 64, device=device)
    bias, residual = torch.zeros(64, device=device), torch.zeros_like(x)
    for p in (0.1, 0.5, 0.9):
        _, mask = ops.fused_bias_dropout_add(x, bias, residual, -1, p)
        keep = unpack(mask, x).float().mean().item()
        assert abs(keep - (1 - p)) < 4 * math.sqrt(p * (1 - p) / x.numel())
    torch.manual_seed(5)
    first = ops.fused_bias_dropout_add(x, bias, residual, -1, 0.5)
    second = ops.fused_bias_dropout_add(x, bias, residual, -1, 0.5)
    torch.manual_seed(5)
    again = ops.fused_bias_dropout_add(x, bias, residual, -1, 0.5)
    assert torch.equal(first[1], again[1]) and torch.equal(first[0], again[0])
    assert not torch.equal(first[1], second[1]), "consecutive calls must differ"
    # Packed and bool masks are the same draws.
    torch.manual_seed(5)
    _, bools = ops.fused_bias_dropout_add(x, bias, residual, -1, 0.5, False)
    assert torch.equal(unpack(first[1], x), bools)


def test_fused_bias_dropout_add_cpu_mask_is_random_mask_like() -> None:
    """On CPU both draw element i from Philox block i / 8: one stream, not
    depending on how threads split the work."""
    x = torch.randn(3, 100_003)
    bias = torch.zeros(100_003)
    threads = torch.get_num_threads()
    try:
        masks = []
        for n in (1, 2):
            torch.set_num_threads(n)
            torch.manual_seed(11)
            masks.append(ops.fused_bias_dropout_add(x, bias, None, 1, 0.3, False)[1])
    finally:
        torch.set_num_threads(threads)
    torch.manual_seed(11)
    assert torch.equal(masks[0], masks[1])
    assert torch.equal(masks[0], ops.random_mask_like(x, 0.3))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")
def test_fused_bias_dropout_add_cuda_graph_replays_draw_new_masks() -> None:
    x = torch.randn(1024, 64, device="cuda")
    bias, residual = torch.randn(64, device="cuda"), torch.randn_like(x)
    ops.fused_bias_dropout_add(x, bias, residual, -1, 0.5)  # warm up outside
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, mask = ops.fused_bias_dropout_add(x, bias, residual, -1, 0.5)
    graph.replay()
    first = mask.clone()
    graph.replay()
    assert not torch.equal(first, mask)
    torch.testing.assert_close(out, residual + (x + bias) * unpack(mask, x) * 2.0)


# -- linear + GELU: one matmul with its epilogue on CUDA -----------------------

# GEMMs in another order (cuBLASLt's epilogue algorithm, a CPU matmul then
# a kernel) than eager's round differently: float32 gets a looser rtol.
GEMM_TOLERANCES = TOLERANCES | {torch.float32: {"rtol": 1e-4, "atol": 1e-4}}
# (x shape, out features, weight transposed): 3-D and 2-D inputs, N % 8 != 0
# (no epilogue: the aux leading dimension must be a multiple of 8), a
# weight given as t() of an [in, out] matrix (HF's Conv1D).
LINEAR_CASES = [((4, 6, 16), 32, False), ((5, 16), 24, False), ((5, 16), 12, False),
                ((3, 16), 32, True)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape,out_features,transposed", LINEAR_CASES)
def test_fused_linear_gelu(device, dtype, approximate, shape, out_features, transposed) -> None:
    x = torch.randn(shape, dtype=dtype, device=device) / 4
    if transposed:
        weight = torch.randn(shape[-1], out_features, dtype=dtype, device=device).t()
    else:
        weight = torch.randn(out_features, shape[-1], dtype=dtype, device=device)
    bias = torch.randn(out_features, dtype=dtype, device=device)
    check_forward_backward(lambda x, w, b: ops.fused_linear_gelu(x, w, b, approximate)[0],
                           lambda x, w, b: F.gelu(F.linear(x, w, b), approximate=approximate),
                           [x, weight, bias], dtype, GEMM_TOLERANCES, within_eager_error=True)
    _, pre = ops.fused_linear_gelu(leaf(x), weight, bias, approximate)
    torch.testing.assert_close(pre, F.linear(x, weight, bias), **GEMM_TOLERANCES[dtype])
    assert not pre.requires_grad, "pre is for backward only"


@pytest.mark.parametrize("device", DEVICES)
def test_fused_linear_gelu_without_input_grad(device) -> None:
    """A first layer (x needs no gradient): no grad_x is computed."""
    x = torch.randn(6, 16, device=device)
    weight = torch.randn(32, 16, device=device, requires_grad=True)
    bias = torch.randn(32, device=device, requires_grad=True)
    out, _ = ops.fused_linear_gelu(x, weight, bias, "tanh")
    out.sum().backward()
    ref_w, ref_b = leaf(weight), leaf(bias)
    F.gelu(F.linear(x, ref_w, ref_b), approximate="tanh").sum().backward()
    torch.testing.assert_close(weight.grad, ref_w.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(bias.grad, ref_b.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_fused_linear_gelu_double_backward(device, approximate) -> None:
    x = torch.randn(2, 3, 4, dtype=torch.float64, device=device, requires_grad=True)
    weight = torch.randn(5, 4, dtype=torch.float64, device=device, requires_grad=True)
    bias = torch.randn(5, dtype=torch.float64, device=device, requires_grad=True)

    def fn(x, w, b):
        return ops.fused_linear_gelu(x, w, b, approximate)[0]

    assert torch.autograd.gradcheck(fn, (x, weight, bias))
    assert torch.autograd.gradgradcheck(fn, (x, weight, bias))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape,out_features", [((4, 6, 16), 32), ((5, 16), 12)])
def test_fused_linear_gelu_grad_mm(device, dtype, approximate, shape, out_features) -> None:
    """The gradients of gelu(x @ w^T + b) given an output gradient that is a
    product a @ b (N % 8 != 0: no epilogue, the unfused path)."""
    x = torch.randn(shape, dtype=dtype, device=device) / 4
    w = torch.randn(out_features, shape[-1], dtype=dtype, device=device)
    pre = F.linear(x, w, torch.randn(out_features, dtype=dtype, device=device))
    a = torch.randn(*shape[:-1], 8, dtype=dtype, device=device)
    b = torch.randn(8, out_features, dtype=dtype, device=device).t().contiguous().t()
    got = ops.fused_linear_gelu_grad_mm(a, b, x, w, pre, approximate)
    want = ops.fused_linear_gelu_grad(a @ b, x, w, pre, approximate)
    g = torch.ops.aten.gelu_backward(a @ b, pre, approximate=approximate)
    tol = GEMM_TOLERANCES[dtype]
    torch.testing.assert_close(want[2], g.reshape(-1, out_features).sum(0),
                               rtol=tol["rtol"], atol=tol["atol"] * 4)
    for mine, theirs in zip(got, want):
        scale = max(1.0, theirs.abs().max().item())
        torch.testing.assert_close(mine, theirs, rtol=tol["rtol"], atol=tol["atol"] * scale)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_weight_bias_grad(device, dtype) -> None:
    grad = torch.randn(3, 7, 16, dtype=dtype, device=device)
    x = torch.randn(3, 7, 24, dtype=dtype, device=device)
    grad_weight, grad_bias = ops.linear_weight_bias_grad(grad, x)
    tol = GEMM_TOLERANCES[dtype]
    torch.testing.assert_close(grad_weight, grad.reshape(-1, 16).t() @ x.reshape(-1, 24),
                               rtol=tol["rtol"], atol=tol["atol"] * 8)
    torch.testing.assert_close(grad_bias, grad.sum((0, 1)), rtol=tol["rtol"],
                               atol=tol["atol"] * 8)


class GeluMLP(torch.nn.Module):
    """GPT-2's MLP without dropout: every GEMM epilogue applies on CUDA."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(32, 128)
        self.proj = torch.nn.Linear(128, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gemm_epilogues_train_like_eager_on_cuda(tmp_path, dtype) -> None:
    import json

    torch.manual_seed(0)
    model = GeluMLP().cuda().to(dtype)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    x = torch.randn(4, 8, 32, device="cuda", dtype=dtype, requires_grad=True)
    grads = []
    for fn in (model, compiled):
        model.zero_grad()
        x.grad = None
        out = fn(x)
        out.backward(torch.ones_like(out))
        grads.append([out.detach()] + [t.grad.clone() for t in (x, *model.parameters())])
    tol = GEMM_TOLERANCES[dtype]
    for eager, fused in zip(*grads):
        torch.testing.assert_close(fused, eager, rtol=tol["rtol"] * 4,
                                   atol=tol["atol"] * 4 * max(1.0, eager.abs().max().item()))
    fused_ops = {}
    for summary in tmp_path.glob("*/*/*/summary.json"):  # run / graph / stage
        fused_ops |= {f"{summary.parent.name}:{k}": v
                      for k, v in json.loads(summary.read_text())["fused_ops"].items()}
    assert fused_ops["before_autodiff:fxmlir.fused_linear_gelu"] == 1
    assert fused_ops["backward:fxmlir.fused_linear_gelu_grad_mm"] == 1
    assert fused_ops["backward:fxmlir.linear_weight_bias_grad"] == 1
