"""JIT regions compute what eager computes, special values included.

Each op family runs through `torch.compile(backend=fxmlir.backend(codegen=True))`
once per dtype, forward and backward, on values drawn over the special cases
(signed zeros, +-1, small integers, +-inf, NaN, subnormals, the largest and
smallest normal numbers), batched into one tensor per input. No fallback may
happen, the family's ops must have joined JIT regions, and the results must
equal eager's: NaN and infinity positions exactly (for elementwise ops,
those of eager's vectorized or of its scalar code, which differ on some
CPUs), finite values within the dtype's tolerance (the JIT's polynomial
exp/log/tanh/erf are a few ulp off).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import fxmlir
from fxmlir.roundtrip import FallbackWarning

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# (rtol, atol): f32 math is approximated within a few ulp, f64 math is libm;
# f16/bf16 compute in f32 and round as eager does, so that an intermediate
# of a gradient may land an ulp away, which the next ops carry (rsqrt's
# gradient cubes its result): 2 ulp for f16, 3 for bf16; where terms of
# size 1 cancel (log_softmax's gradient, whose eager kernel rounds each
# step to the dtype), an ulp of 1.
TOLERANCE = {
    torch.float32: (2e-5, 1e-5),
    torch.float64: (1e-12, 1e-14),
    torch.float16: (2e-3, 2**-10),
    torch.bfloat16: (3e-2, 2**-7),
}
ROW = 48


def special_values(dtype: torch.dtype) -> list[float]:
    info = torch.finfo(dtype)
    return [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 7.25, -2.5,
            0.1, 100.0, -100.0, math.inf, -math.inf, math.nan,
            info.tiny, -info.tiny, info.tiny / 3, -info.tiny / 3,  # subnormal
            info.max, -info.max, info.max / 4]


def specials(dtype: torch.dtype) -> torch.Tensor:
    """The special values as a [1, n] tensor."""
    return torch.tensor([special_values(dtype)], dtype=torch.float64).to(dtype)


def pairs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Every (a, b) of special values, as two [n, n] tensors."""
    values = specials(dtype)[0]
    n = values.numel()
    return values.repeat_interleave(n).view(n, n), values.repeat(n).view(n, n)


def rows(dtype: torch.dtype, overflow: bool) -> torch.Tensor:
    """[rows, ROW]: rows of special cases for reductions; with `overflow` a
    row of huge values too, which sums overflow in any order (how eager's
    normalization kernels overflow is their own)."""
    info = torch.finfo(dtype)
    generator = torch.Generator().manual_seed(0)

    def filled(value: float) -> torch.Tensor:
        return torch.full((ROW,), value, dtype=torch.float64)

    cases = [
        filled(2.3),                                                # constant
        filled(0.0),
        torch.randn(ROW, generator=generator, dtype=torch.float64),
        torch.randn(ROW, generator=generator, dtype=torch.float64) * 1e2 + 1e3,
        torch.linspace(-3, 3, ROW, dtype=torch.float64),
        filled(-math.inf),
    ]
    if overflow:
        cases.append(filled(info.max / 2))
    for value in (math.nan, math.inf, -math.inf, info.tiny / 3):
        row = torch.randn(ROW, generator=generator, dtype=torch.float64)
        row[7] = value
        cases.append(row)
    return torch.stack(cases).to(dtype)


def stage_dumps(dump_dir: Path) -> dict[str, list[tuple[dict, str]]]:
    """Each stage's summaries and final modules, in the order written."""
    found: dict[str, list[tuple[dict, str]]] = {}
    for path in sorted(dump_dir.glob("*/*/*/summary.json")):
        summary = json.loads(path.read_text())
        final = (path.parent / "final.mlir").read_text()
        found.setdefault(summary["stage"], []).append((summary, final))
    return found


def graph_ops(final: str) -> set[str]:
    """The ops of a final module's graph function, outside its regions."""
    start = final.index("func.func @")
    body = final[start:final.index("\n  }\n", start)]
    return set(re.findall(r"\b(fxmlir\.[a-z_]\w*(?:\.\w+)*)[ (]", body))


def special_class(x: torch.Tensor) -> torch.Tensor:
    """0 finite, 1 NaN, 2 +inf, 3 -inf."""
    return torch.isnan(x) * 1 + torch.isposinf(x) * 2 + torch.isneginf(x) * 3


def assert_same(actual: torch.Tensor, expected: torch.Tensor, what: str,
                also: torch.Tensor | None = None) -> None:
    """`also`: eager's result from another of its kernels, either of which
    the JIT may match at a NaN or infinity."""
    assert actual.dtype == expected.dtype, what
    if not expected.is_floating_point():
        assert torch.equal(actual, expected), f"{what}: {actual} != {expected}"
        return
    if also is not None:
        other = (special_class(actual) == special_class(also)) & \
            (special_class(actual) != special_class(expected))
        expected = torch.where(other, also, expected)
    for name, mask in (("NaN", torch.isnan), ("+inf", torch.isposinf),
                       ("-inf", torch.isneginf)):
        differ = mask(actual) != mask(expected)
        assert not differ.any(), (
            f"{what}: {name} positions differ at {differ.nonzero().tolist()[:8]}: "
            f"JIT {actual[differ][:8].tolist()}, eager {expected[differ][:8].tolist()}")
    rtol, atol = TOLERANCE[expected.dtype]
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")


def seed_like(out: torch.Tensor) -> torch.Tensor:
    """A gradient to propagate: varied, so that a row's gradients do not
    cancel (log_softmax's would, for a constant one, to rounding noise)."""
    steps = torch.arange(out.numel(), dtype=torch.float64) % 7
    return (steps * 0.25 - 0.625).to(out.dtype).view_as(out)


def check_family(fn: Callable[..., Sequence[torch.Tensor]], inputs: Sequence[torch.Tensor],
                 names: Sequence[str], ops: Sequence[str], tmp_path: Path,
                 elementwise: bool = False) -> None:
    """Compiles `fn` with JIT regions, runs it forward and backward (against
    every float input) and compares with eager. `names` label the outputs;
    `ops` are fxmlir op names that must all have joined regions.

    An `elementwise` fn (its [1, n] inputs and outputs element for element)
    is also run in eager one element at a time, in eager's scalar code: its
    vectorized kernels may give another NaN or infinity (on AVX-512, gelu of
    +inf is NaN in a vector and +inf alone), and the JIT may match either."""
    compiled = torch.compile(fn, backend=fxmlir.backend(codegen=True, dump_dir=str(tmp_path)))

    def leaves():
        return [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]

    jit_inputs, eager_inputs = leaves(), leaves()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        jit_out = compiled(*jit_inputs)
        eager_out = fn(*eager_inputs)
        alone = [None] * len(eager_out)
        if elementwise:
            with torch.no_grad():
                columns = [fn(*[x[:, j:j + 1] for x in inputs])
                           for j in range(inputs[0].shape[1])]
            alone = [torch.cat(outs, dim=1) for outs in zip(*columns, strict=True)]
        for name, actual, expected, also in zip(names, jit_out, eager_out, alone,
                                                strict=True):
            assert_same(actual.detach(), expected.detach(), f"{name} forward", also)
        differentiable = [i for i, out in enumerate(eager_out) if out.requires_grad]
        targets = [i for i, x in enumerate(eager_inputs) if x.requires_grad]
        if differentiable:
            def grads(outs, xs):
                chosen = [outs[i] for i in differentiable]
                seeds = [seed_like(out) for out in chosen]
                return torch.autograd.grad(chosen, [xs[i] for i in targets], seeds,
                                           allow_unused=True)
            for index, actual, expected in zip(targets, grads(jit_out, jit_inputs),
                                               grads(eager_out, eager_inputs), strict=True):
                if expected is None:
                    continue
                assert_same(actual, expected, f"gradient of input {index}")

    stages = stage_dumps(tmp_path)
    for stage in ("forward", "backward") if differentiable else ("forward",):
        summary, final = stages[stage][-1]
        assert summary["fused_ops"].get("fxmlir.mlir_jit", 0) >= 1, f"no {stage} region"
        if stage == "forward":
            left = sorted(set(ops) & graph_ops(final))
            assert not left, f"ops left outside JIT regions: {left}"


def by_dtype(test):
    return pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))(test)


UNARY = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "erf": torch.erf, "relu": torch.relu, "abs": torch.abs, "neg": torch.neg,
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
}


@by_dtype
def test_unary(dtype, tmp_path):
    def fn(*xs):
        return [op(x * 1.0) for op, x in zip(UNARY.values(), xs, strict=True)]

    x = specials(dtype)
    check_family(fn, [x] * len(UNARY), list(UNARY),
                 [f"fxmlir.aten.{name}" for name in UNARY if name != "gelu_tanh"], tmp_path,
                 elementwise=True)


@by_dtype
def test_gelu_of_non_finite_inputs(dtype, tmp_path):
    """The contract of docs/jit-regions.md ("Non-finite inputs"), whatever
    eager's kernels give (on AVX-512 its vectorized exact GELU is NaN at
    +inf in f32 and bf16): both approximations compute the formula in IEEE
    arithmetic, as eager's scalar code does. +inf -> +inf (erf and tanh are
    1 there: the limit), -inf -> NaN (-inf * 0, as in every eager kernel),
    NaN -> NaN, the largest finite values -> themselves and -0.0; the
    gradient at +-inf and NaN is NaN."""
    big = torch.finfo(dtype).max
    x = torch.tensor([[math.inf, -math.inf, math.nan, big, -big]], dtype=dtype)
    expected = torch.tensor([[math.inf, math.nan, math.nan, big, -0.0]], dtype=dtype)

    def fn(exact, tanh):
        return F.gelu(exact * 1.0), F.gelu(tanh * 1.0, approximate="tanh")

    leaves = [x.clone().requires_grad_() for _ in range(2)]
    compiled = torch.compile(fn, backend=fxmlir.backend(codegen=True, dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        outs = compiled(*leaves)
        torch.autograd.backward(outs, [torch.ones_like(out) for out in outs])
    for name, out, leaf in zip(("exact", "tanh"), outs, leaves, strict=True):
        out = out.detach()
        same = (out == expected) & (out.signbit() == expected.signbit())
        assert (same | out.isnan() & expected.isnan()).all(), f"{name}: {out.tolist()}"
        assert leaf.grad[0, :3].isnan().all(), f"{name} gradient: {leaf.grad.tolist()}"
    stages = stage_dumps(tmp_path)
    for stage, op in (("forward", "fxmlir.aten.gelu"), ("backward", "fxmlir.aten.gelu_backward")):
        summary, final = stages[stage][-1]
        assert summary["fused_ops"].get("fxmlir.mlir_jit", 0) >= 1, f"no {stage} region"
        assert op not in graph_ops(final), f"{op} left outside the {stage} regions"


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "add alpha": lambda a, b: torch.add(a, b, alpha=2),
    "add scalar": lambda a, b: a + 2.5,
    "sub int scalar": lambda a, b: a - 3,
    "mul scalar": lambda a, b: a * -0.5,
    "div by zero": lambda a, b: a / 0.0,
    "rsub": lambda a, b: 1.5 - a,
}


@by_dtype
def test_binary(dtype, tmp_path):
    def fn(a, b):
        return [op(a * 1.0, b) for op in BINARY.values()]

    check_family(fn, pairs(dtype), list(BINARY),
                 ["fxmlir.aten.add.Tensor", "fxmlir.aten.sub.Tensor", "fxmlir.aten.div.Tensor"],
                 tmp_path)


POW_EXPONENTS = [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, 10, -3, 100]


@by_dtype
def test_pow(dtype, tmp_path):
    def fn(a, b, x):
        return [torch.pow(a, b) * 1.5, *(torch.pow(x * 1.0, e) for e in POW_EXPONENTS)]

    a, b = pairs(dtype)
    check_family(fn, [a, b, specials(dtype)],
                 ["pow(a, b)", *(f"x ** {e}" for e in POW_EXPONENTS)],
                 ["fxmlir.aten.pow.Tensor_Tensor", "fxmlir.aten.pow.Tensor_Scalar"], tmp_path)


def test_pow_negative_bases_and_zero(tmp_path):
    """The issue's case: signed results for integral exponents, 0 ** 0 = 1."""
    for dtype in (torch.float32, torch.float64):
        a = torch.tensor([[-2.0, -2.0, -0.5, 0.0]], dtype=dtype, requires_grad=True)
        b = torch.tensor([[3.0, 2.0, -1.0, 0.0]], dtype=dtype, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error", FallbackWarning)
            compiled = torch.compile(lambda a, b: torch.pow(a, b) * 1.5,
                                     backend=fxmlir.backend(codegen=True))
            out = compiled(a, b)
            out.sum().backward()
        expected = torch.tensor([[-12.0, 6.0, -3.0, 1.5]], dtype=dtype)
        torch.testing.assert_close(out.detach(), expected)
        # d/da = 1.5 b a^(b-1); d/db = 1.5 a^b log(a): NaN for a < 0, 0 at 0^0.
        torch.testing.assert_close(a.grad, torch.tensor([[18.0, -6.0, -6.0, 0.0]], dtype=dtype))
        torch.testing.assert_close(
            b.grad, torch.tensor([[math.nan, math.nan, math.nan, 0.0]], dtype=dtype),
            equal_nan=True)
        torch._dynamo.reset()


COMPARISONS = {
    "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
}


@by_dtype
def test_comparisons_and_where(dtype, tmp_path):
    def fn(a, b):
        a = a * 1.0
        return [*(op(a, b) for op in COMPARISONS.values()),
                *(op(a, 0.5) for op in COMPARISONS.values()),
                a != 0,
                torch.where(a > b, a, b * 2.0),
                (b * 1.0).masked_fill(a < 0, -1.5)]

    names = [*(f"{n} tensor" for n in COMPARISONS), *(f"{n} scalar" for n in COMPARISONS),
             "ne zero", "where", "masked_fill"]
    check_family(fn, pairs(dtype), names,
                 ["fxmlir.aten.where.self", "fxmlir.aten.masked_fill.Scalar",
                  *(f"fxmlir.aten.{n}.Tensor" for n in COMPARISONS)], tmp_path)


@by_dtype
def test_casts(dtype, tmp_path):
    others = [d for d in DTYPES if d != dtype]

    def fn(x, small, ints):
        y = x * 2.0
        return [*((y.to(d) * 3).to(dtype) for d in others),
                (small * 1.0).to(torch.int32) + 1,
                (small * 1.0).to(torch.uint8) * 1,
                (x * 1.0).to(torch.bool) | (ints > 0),
                (ints * 3).to(dtype) * 0.5]

    x = specials(dtype)
    finite = [v for v in special_values(dtype) if math.isfinite(v) and abs(v) < 100]
    small = torch.tensor([finite], dtype=torch.float64).to(dtype)
    ints = torch.arange(x.numel(), dtype=torch.int32).view(1, -1) - x.numel() // 2
    names = [*(f"through {d}" for d in others), "to int32", "to uint8", "to bool", "from int32"]
    check_family(fn, [x, small, ints], names, ["fxmlir.aten._to_copy"], tmp_path)


def test_f64_to_16_bit_rounds_as_eager(tmp_path):
    """f64 -> bf16/f16 inside a region compiles without compiler-rt and
    rounds as eager: through f32 (1 + 2^-8 + 2^-40 is 1.0 in bf16 there,
    where a single rounding would give 1 + 2^-7)."""
    a = torch.tensor([[1 + 2**-8 + 2**-40, -(1 + 2**-11 + 2**-40), 0.1, 1e300, -1e-300,
                       math.inf, math.nan, 3.3e38, 65519.0, 65520.0, 5.9e-8, 2.9e-8]],
                     dtype=torch.float64)
    for to in (torch.bfloat16, torch.float16):
        def fn(a):
            return (a * 2.0).to(to) * 3
        with warnings.catch_warnings():
            warnings.simplefilter("error", FallbackWarning)
            out = torch.compile(fn, backend=fxmlir.backend(codegen=True))(a)
        expected = fn(a)
        assert torch.equal(out.isnan(), expected.isnan())
        assert torch.equal(out[~out.isnan()], expected[~expected.isnan()]), (out, expected)
        torch._dynamo.reset()


REDUCTIONS = {
    "sum": lambda x: x.sum(-1),
    "sum keepdim": lambda x: x.sum(-1, keepdim=True),
    "sum over rows": lambda x: x.sum(0),
    "mean": lambda x: x.mean(-1),
    "amax": lambda x: x.amax(-1),
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax": lambda x: torch.log_softmax(x, -1),
}
NORMALIZATIONS = {
    "layer_norm": lambda x: F.layer_norm(x, (ROW,)),
    "var": lambda x: torch.var_mean(x, -1)[0],
    "var_mean mean": lambda x: torch.var_mean(x, -1, keepdim=True)[1],
    "var correction 0": lambda x: torch.var_mean(x, -1, correction=0)[0],
}


@by_dtype
def test_row_reductions(dtype, tmp_path):
    weight = torch.linspace(0.5, 1.5, ROW, dtype=dtype)
    bias = torch.linspace(-1, 1, ROW, dtype=dtype)

    ops = [*REDUCTIONS.values(), *NORMALIZATIONS.values(),
           lambda x, w, b: F.layer_norm(x, (ROW,), w, b)]

    def fn(*args):
        # An input per op: gradients are compared op by op, not summed in
        # an order of autograd's choosing.
        *xs, w, b = args
        return [op(x * 1.0, *((w, b) if i == len(ops) - 1 else ()))
                for i, (op, x) in enumerate(zip(ops, xs, strict=True))]

    x, xn = rows(dtype, overflow=True), rows(dtype, overflow=False)
    inputs = [x] * len(REDUCTIONS) + [xn] * (len(NORMALIZATIONS) + 1) + [weight, bias]
    check_family(fn, inputs, [*REDUCTIONS, *NORMALIZATIONS, "layer_norm affine"],
                 ["fxmlir.aten.sum.dim_IntList", "fxmlir.aten.mean.dim", "fxmlir.aten.amax",
                  "fxmlir.aten._softmax", "fxmlir.aten._log_softmax",
                  "fxmlir.aten.native_layer_norm", "fxmlir.aten.var_mean.correction"],
                 tmp_path)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_constant_rows_normalize_to_exactly_zero(dtype):
    """The issue's case: mean and variance exact on constant rows."""
    x = torch.full((16, ROW), 2.3, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        norm = torch.compile(lambda x: F.layer_norm(x * 1.0, (ROW,)),
                             backend=fxmlir.backend(codegen=True))(x)
        torch._dynamo.reset()
        var, mean = torch.compile(lambda x: torch.var_mean(x * 1.0, -1),
                                  backend=fxmlir.backend(codegen=True))(x)
    assert torch.equal(norm, torch.zeros_like(x))
    assert torch.equal(var, torch.zeros(16, dtype=dtype))
    assert torch.equal(mean, torch.full((16,), 2.3, dtype=dtype))
