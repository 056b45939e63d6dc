"""The fused ops: one row each, the single definition of their contract.

From this table tools/gen_ops.py generates the ops' MLIR definitions
(FusedOps.td: operands and attributes by the same rule as the ATen ops,
python/fxmlir/schema.py, plus the verifier hook of their family) and their
torch registrations (the schemas and which kernel serves each device, each
in the translation unit registration_unit() names); python/fxmlir/ops.py
reads it to register the autograd formulas. A new fused op is a row here,
its element function (csrc/kernels/common), its glue (csrc/ops/FusedOps.h),
a pattern and, if it can appear before autodiff, a backward formula in
ops.py.

ACTIVATIONS is the one table of the activations the bias ops apply: a new
activation is a row there, its element function (value and gradient, in
csrc/kernels/common/Elementwise.h) and its pattern lines
(mlir/include/fxmlir/Transforms/Patterns/BiasAddActivationFusions.td); the
`activation` attribute's values, the C++ enum and dispatch
(csrc/ops/Activations.inc) and the autograd formulas follow from the row,
and so do, for a row naming its ATen ops (hardswish), their typed ops
(schema.EXTRA_OPS) and the import of its torch.nn.functional wrapper as the
ATen op (dynamo_calls): three files (docs/adding-a-fusion.md).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Activation:
    """f(v) applied to v = x + bias by fused_bias_act (and its gradient by
    fused_bias_act_grad) and, before its dropout, by fused_bias_dropout_add."""

    name: str  # the `activation` attribute's value
    kernel: str  # its element function: a struct in csrc/kernels/common/Elementwise.h
    summary: str
    # d^2 f / dv^2 in differentiable torch ops, for double backward; None
    # where it is 0 almost everywhere.
    second_derivative: Callable[[torch.Tensor], torch.Tensor] | None
    # Its ATen ops, value then backward, where the dialect has no typed op
    # for them (not tagged core): schema.EXTRA_OPS takes them, and the
    # value's torch.nn.functional wrapper, when a Python function (F.hardswish),
    # is imported as the op (dynamo_calls), so that patterns can name both.
    aten_ops: tuple[str, ...] = ()

    @property
    def enumerator(self) -> str:
        """Its C++ enumerator: gelu_tanh -> GeluTanh."""
        return "".join(part.capitalize() for part in self.name.split("_"))


def _gelu_second_derivative(v: torch.Tensor) -> torch.Tensor:
    pdf = torch.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
    return pdf * (2 - v * v)


def _gelu_tanh_second_derivative(v: torch.Tensor) -> torch.Tensor:
    k, c = math.sqrt(2 / math.pi), 0.044715
    t = torch.tanh(k * (v + c * v * v * v))
    du = k * (1 + 3 * c * v * v)  # d(inner) / dv
    return (1 - t * t) * (du - v * t * du * du + 3 * k * c * v * v)


def _silu_second_derivative(v: torch.Tensor) -> torch.Tensor:
    s = torch.sigmoid(v)
    return s * (1 - s) * (2 + v * (1 - 2 * s))


ACTIVATIONS = (
    Activation("none", "NoActivation", "v itself", None),
    Activation("gelu", "Gelu<false>", "torch's gelu, erf form", _gelu_second_derivative),
    Activation("gelu_tanh", "Gelu<true>", "gelu with approximate=\"tanh\"",
               _gelu_tanh_second_derivative),
    Activation("relu", "Relu", "max(v, 0)", None),
    Activation("silu", "Silu", "v * sigmoid(v), of LLaMA-style gated MLPs",
               _silu_second_derivative),
    Activation("tanh", "Tanh", "tanh(v)",
               lambda v: -2 * torch.tanh(v) * (1 - torch.tanh(v) ** 2)),
    Activation("hardswish", "Hardswish", "v * relu6(v + 3) / 6, of MobileNetV3",
               lambda v: ((v > -3) & (v < 3)).to(v.dtype) / 3,
               aten_ops=("hardswish", "hardswish_backward")),
)


def activations() -> dict[str, Activation]:
    return {activation.name: activation for activation in ACTIVATIONS}


def _activation_list() -> str:
    """The activations in prose, for the ops' descriptions."""
    names = [f'"{a.name}" ({a.summary})' for a in ACTIVATIONS]
    return ", ".join(names[:-1]) + " or " + names[-1]


class Family(enum.Enum):
    """How an op's operands relate, which decides its verifier and glue."""

    # f(x + bias): `bias` is 1-D, added along dim `axis` of `x`; every other
    # tensor (operand or result) is shaped like x.
    BIAS = "Bias"
    # A bool tensor shaped like the operand `like`.
    MASK = "Mask"
    # A JIT-compiled region (csrc/runtime): its MLIR op, fxmlir.mlir_jit, is
    # written by hand (it calls a func.func by symbol); only its torch op is
    # generated.
    JIT = "Jit"
    # y = residual + dropout(x + bias): a bias op (residual, when given, and
    # y shaped like x) whose `mask` result is bool shaped like x, or, with
    # `packed`, 1 bit per element: uint8 [ceil(numel / 8)], element i in bit
    # i % 8 of byte i / 8.
    DROPOUT = "Dropout"
    # grad * mask * scale with a packed mask (as DROPOUT's): `result` shaped
    # like `grad`.
    PACKED_MASK = "PackedMask"
    # Matrix products of a linear layer, x @ weight^T over x's last dim:
    # every tensor's dims are named in `dims` ("*" for x's leading dims, K
    # for x's last, N for the output features), so the verifier checks that
    # the names agree across tensors.
    LINEAR = "Linear"
    # A linear layer and the cross-entropy of its rows: x [..., K] (M rows),
    # weight [N, K], bias [N] or none, integer target [M], logits [..., N]
    # or none or empty ([0]: not returned); the loss and the rows'
    # log-sum-exp `lse` [M] are float32.
    LINEAR_LOSS = "LinearLoss"
    # Tensors cast to one dtype: result i is input i's values in `dtype`,
    # its shape and strides.
    CASTS = "Casts"
    # An embedding's weight gradient: grad [..., D] (floating point),
    # integer indices [...] (grad's leading dims), result [num_weights, D]
    # in grad's dtype.
    EMBEDDING_GRAD = "EmbeddingGrad"


# Which translation unit registers each part of a family: its torch schemas,
# its Meta kernels and each device's kernels. tools/gen_ops.py writes every
# unit its own registration file (<unit>Registration.inc beside it), which
# the unit includes. A part not named in FAMILY_UNITS goes to its default
# unit. The CPU kernels of the bias and dropout families (every activation
# and dtype instantiated) compile in units of their own, in parallel; the
# JIT family lives with the compiler, in libfxmlir_jit_ops (csrc/runtime).
DEFAULT_UNITS = {
    "schemas": "csrc/ops/FusedOps.cpp",
    "Meta": "csrc/ops/FusedOps.cpp",
    "CPU": "csrc/ops/FusedOpsCPU.cpp",
    "CUDA": "csrc/ops/cuda/FusedOpsCUDA.cu",
}
FAMILY_UNITS = {
    (Family.BIAS, "CPU"): "csrc/ops/FusedOpsCPUBias.cpp",
    (Family.DROPOUT, "CPU"): "csrc/ops/FusedOpsCPUDropout.cpp",
    (Family.JIT, "schemas"): "csrc/runtime/MlirJit.cpp",
    (Family.JIT, "Meta"): "csrc/runtime/MlirJit.cpp",
    (Family.JIT, "CPU"): "csrc/runtime/MlirJit.cpp",
    (Family.JIT, "CUDA"): "csrc/runtime/MlirJitCUDA.cu",
}


def registration_unit(family: Family, part: str) -> str:
    """The unit that registers `part` ("schemas", "Meta", "CPU", "CUDA") of
    `family`."""
    return FAMILY_UNITS.get((family, part), DEFAULT_UNITS[part])


@dataclass(frozen=True)
class FusedOp:
    schema: str  # the torch schema, `name(args) -> results`
    summary: str
    description: str  # markdown with an example, for the dialect's docs
    family: Family
    bool_tensors: tuple[str, ...] = ()  # arguments/results holding torch.bool
    tags: tuple[str, ...] = ()  # torch.Tag names
    devices: tuple[str, ...] = ("CPU", "CUDA")  # real kernels (Meta: always)
    # Tensors the backward formula (ops.py: backward_<name>) needs, inputs
    # or results by name; None when the op has no formula (it never appears
    # before autodiff).
    saves: tuple[str, ...] | None = None
    # LINEAR family: (tensor, dims) for every tensor but x ("*K"), dims
    # such as "*N" (x's leading dims, then N) or "NK".
    dims: tuple[tuple[str, str], ...] = ()
    # Results after the first that gradients flow through too (the formula
    # gets each one's as `grad_<name>`); the others are for backward only.
    differentiable: tuple[str, ...] = ()
    # Whether the dialect has the op (generated; mlir_jit's written by hand);
    # False for one that only the exporter calls, after the round trip.
    in_dialect: bool = True

    @property
    def name(self) -> str:
        return self.schema.split("(", 1)[0]

    @property
    def function_schema(self) -> torch._C.FunctionSchema:
        return torch._C.parse_schema(f"fxmlir::{self.schema}")


_BIAS_DOC = """`bias` is 1-D and is added along dim `axis` of `x` (negative counts
    from the end)."""

FUSED_OPS = (
    FusedOp(
        "bias_add(Tensor x, Tensor bias, int axis) -> Tensor",
        summary="x + bias broadcast along one axis",
        description=f"""
    {_BIAS_DOC} It is the canonical form that `addmm` and broadcast
    `add` decompose to, so fusion patterns need to match only one spelling.

    ```mlir
    %y = fxmlir.bias_add %x, %b {{axis = 1 : i64}}
        : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```""",
        family=Family.BIAS,
        saves=(),
    ),
    FusedOp(
        'fused_bias_act(Tensor x, Tensor bias, int axis, str activation) -> Tensor',
        summary="act(x + bias) in one kernel",
        description=f"""
    {_BIAS_DOC} `activation` is {_activation_list()}.

    ```mlir
    %y = fxmlir.fused_bias_act %x, %b {{activation = "gelu", axis = 1 : i64}}
        : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```""",
        family=Family.BIAS,
        saves=("x", "bias"),
    ),
    FusedOp(
        "fused_bias_act_grad(Tensor grad, Tensor x, Tensor bias, int axis, str activation) "
        "-> Tensor",
        summary="grad * act'(x + bias) in one kernel",
        description="""
    The gradient of `fused_bias_act` with respect to `x`; `grad` is shaped
    like `x`. The bias gradient is its sum over the other dims.

    ```mlir
    %dx = fxmlir.fused_bias_act_grad %g, %x, %b {activation = "gelu_tanh", axis = 1 : i64}
        : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```""",
        family=Family.BIAS,
        saves=("grad", "x", "bias"),
    ),
    FusedOp(
        "random_mask_like(Tensor like, float p, bool? eager_random=None) -> Tensor",
        summary="a random boolean keep mask shaped like a tensor",
        description="""
    True with probability 1 - `p`. The random stream is torch's generator for
    the tensor's device (its seed and Philox offset are read when the kernel
    runs), so `torch.manual_seed` reproduces a run. With `eager_random` the
    mask is the one eager's `dropout` of `like` draws, by eager's own ATen
    calls, which leave the generator where eager's leave it: on CPU
    `empty_like(like).bernoulli_(1 - p)` (at::dropout's draw), on CUDA
    `at::native_dropout` (eager's fused Philox kernel); p = 0 or no elements
    draw nothing, as in eager. Without it, fxmlir's own Philox stream, 16
    random bits an element on a CPU (`p` rounded up to a multiple of 2^-16:
    the draws bound the CPU kernels) and 24 on CUDA (2^-24). The op is not
    Pure: two masks must never be merged.

    ```mlir
    %m = fxmlir.random_mask_like %x {p = 1.000000e-01 : f64}
        : (tensor<8x16xf32>) -> tensor<8x16xi1>
    ```""",
        family=Family.MASK,
        bool_tensors=("result",),
        tags=("nondeterministic_seeded",),
    ),
    FusedOp(
        "fused_bias_add_mask_scale(Tensor x, Tensor bias, Tensor mask, int axis, "
        "float scale) -> Tensor",
        summary="(x + bias) * mask * scale in one kernel",
        description="""
    Dropout applied to a bias add: `mask` is the boolean keep mask (from
    `random_mask_like`) shaped like `x`, `scale` is 1 / (1 - p).

    ```mlir
    %y = fxmlir.fused_bias_add_mask_scale %x, %b, %m {axis = 1 : i64, scale = 1.25 : f64}
        : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xi1>) -> tensor<8x16xf32>
    ```""",
        family=Family.BIAS,
        bool_tensors=("mask",),
        saves=("mask",),
    ),
    FusedOp(
        "fused_bias_dropout_add(Tensor x, Tensor bias, Tensor? residual, int axis, float p, "
        'bool packed=True, str activation="none", bool? eager_random=None) '
        "-> (Tensor y, Tensor mask)",
        summary="residual + dropout(act(x + bias)) in one kernel that draws its mask",
        description=f"""
    Megatron's `bias_dropout_add`: `y = residual + act(x + bias) * mask / (1 - p)`
    (no residual: `y = dropout(act(x + bias))`). `activation` is
    {_activation_list()}: a dropout after an activation (`Linear -> GELU ->
    Dropout`) costs no pass of its own. The keep mask is drawn inside the
    kernel from torch's generator for the device (Philox, like
    `random_mask_like`: `torch.manual_seed` reproduces it); with
    `eager_random`, it is `random_mask_like`'s with `eager_random`, eager's
    mask, drawn before the kernel runs (one more pass, writing the mask).
    `mask` is what backward needs: with `packed`, 1 bit per element (uint8, ceil(numel / 8)
    bytes, element i in bit i % 8 of byte i / 8), 8x less than the bool mask
    `native_dropout` saves; without, that bool mask shaped like `x`.
    Not Pure: two dropouts must never be merged.

    ```mlir
    %y, %m = fxmlir.fused_bias_dropout_add %x, %b, %r {{activation = "gelu", axis = 1 : i64, p = 1.000000e-01 : f64, packed = true}}
        : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xui8>)
    ```""",
        family=Family.DROPOUT,
        tags=("nondeterministic_seeded",),
        # x and bias for the activation's gradient (not read without one).
        saves=("x", "bias", "mask"),
    ),
    FusedOp(
        "packed_mask_scale(Tensor grad, Tensor mask, float scale) -> Tensor",
        summary="grad * mask * scale with a mask packed at 1 bit per element",
        description="""
    The backward of dropout with a packed mask (`fused_bias_dropout_add`'s
    with `packed`): `mask` is uint8 [ceil(grad.numel() / 8)], element i in
    bit i % 8 of byte i / 8.

    ```mlir
    %dx = fxmlir.packed_mask_scale %g, %m {scale = 1.1111111111111112 : f64}
        : (tensor<8x16xf32>, tensor<16xui8>) -> tensor<8x16xf32>
    ```""",
        family=Family.PACKED_MASK,
        saves=("mask",),
    ),
    FusedOp(
        'fused_linear_gelu(Tensor x, Tensor weight, Tensor bias, str approximate="none") '
        "-> (Tensor y, Tensor pre)",
        summary="gelu(x @ weight^T + bias), the pre-activation kept for backward",
        description="""
    A linear layer and its GELU in one matrix product where the device has
    such an epilogue: on CUDA, with `approximate = "tanh"`, one cuBLASLt
    matmul (`CUBLASLT_EPILOGUE_GELU_AUX_BIAS`) writes `y` and the
    pre-activation `pre = x @ weight^T + bias` (its aux output, what
    backward reads); elsewhere (CPU, erf GELU) a matrix product, then one
    kernel adds the bias, writes `pre` and `y`. `x` is [..., K], `weight`
    [N, K] (F.linear's), `bias` [N]. `pre` is for backward only: no gradient
    flows through it.

    ```mlir
    %y, %pre = fxmlir.fused_linear_gelu %x, %w, %b {approximate = "tanh"}
        : (tensor<8x16xbf16>, tensor<32x16xbf16>, tensor<32xbf16>) -> (tensor<8x32xbf16>, tensor<8x32xbf16>)
    ```""",
        family=Family.LINEAR,
        dims=(("weight", "NK"), ("bias", "N"), ("y", "*N"), ("pre", "*N")),
        saves=("x", "weight", "bias", "pre"),
    ),
    FusedOp(
        'fused_linear_gelu_grad(Tensor grad, Tensor x, Tensor weight, Tensor pre, '
        'str approximate="none") -> (Tensor grad_x, Tensor grad_weight, Tensor grad_bias)',
        summary="the gradients of fused_linear_gelu's inputs",
        description="""
    `g = gelu_backward(grad, pre)`, then `grad_x = g @ weight`, `grad_weight =
    g^T @ x` and `grad_bias = g` summed over the rows. On CUDA the bias
    gradient comes out of the weight-gradient matmul (cuBLASLt's
    `CUBLASLT_EPILOGUE_BGRADB`) instead of another pass over `g`.

    ```mlir
    %dx, %dw, %db = fxmlir.fused_linear_gelu_grad %g, %x, %w, %pre {approximate = "tanh"}
        : (tensor<8x32xbf16>, tensor<8x16xbf16>, tensor<32x16xbf16>, tensor<8x32xbf16>)
        -> (tensor<8x16xbf16>, tensor<32x16xbf16>, tensor<32xbf16>)
    ```""",
        family=Family.LINEAR,
        dims=(("weight", "NK"), ("grad", "*N"), ("pre", "*N"), ("grad_x", "*K"),
              ("grad_weight", "NK"), ("grad_bias", "N")),
    ),
    FusedOp(
        'fused_linear_gelu_grad_mm(Tensor grad_a, Tensor grad_b, Tensor x, Tensor weight, '
        'Tensor pre, str approximate="none") '
        "-> (Tensor grad_x, Tensor grad_weight, Tensor grad_bias)",
        summary="fused_linear_gelu_grad of a gradient that is a matrix product",
        description="""
    `fused_linear_gelu_grad(grad_a @ grad_b, x, weight, pre)`: the output
    gradient of the GELU is the next layer's input gradient, a matrix
    product (`grad_a` [..., J], `grad_b` [J, N]). On CUDA with
    `approximate = "tanh"` that product is one cuBLASLt matmul whose
    `CUBLASLT_EPILOGUE_DGELU_BGRAD` epilogue applies the GELU gradient (from
    `pre`) and sums the bias gradient; the GELU gradient never makes a
    round trip through memory.

    ```mlir
    %dx, %dw, %db = fxmlir.fused_linear_gelu_grad_mm %ga, %gb, %x, %w, %pre {approximate = "tanh"}
        : (tensor<8x16xbf16>, tensor<16x32xbf16>, tensor<8x16xbf16>, tensor<32x16xbf16>,
           tensor<8x32xbf16>) -> (tensor<8x16xbf16>, tensor<32x16xbf16>, tensor<32xbf16>)
    ```""",
        family=Family.LINEAR,
        dims=(("grad_a", "*J"), ("grad_b", "JN"), ("weight", "NK"), ("pre", "*N"),
              ("grad_x", "*K"), ("grad_weight", "NK"), ("grad_bias", "N")),
    ),
    FusedOp(
        "linear_weight_bias_grad(Tensor grad, Tensor x) -> (Tensor grad_weight, Tensor grad_bias)",
        summary="a linear layer's weight and bias gradients in one matmul",
        description="""
    `grad_weight = grad^T @ x` and `grad_bias = grad` summed over the rows
    (`grad` [..., N], `x` [..., K]). On CUDA the bias gradient comes out of
    the matmul's `CUBLASLT_EPILOGUE_BGRADB` epilogue instead of another pass
    over `grad`.

    ```mlir
    %dw, %db = fxmlir.linear_weight_bias_grad %g, %x
        : (tensor<8x32xf32>, tensor<8x16xf32>) -> (tensor<32x16xf32>, tensor<32xf32>)
    ```""",
        family=Family.LINEAR,
        dims=(("grad", "*N"), ("grad_weight", "NK"), ("grad_bias", "N")),
    ),
)


_LINEAR_LOSS_DOC = """`x` is [..., K], `weight` [N, K] (F.linear's) in x's dtype or, for
    a 16-bit x, float32 (autocast's cast of it folded in: each block is cast
    as it is read, and its gradient is float32), `bias` [N] or none,
    `target` [M] class indices for the M rows of x (its leading dims
    flattened), rows equal to `ignore_index` contributing nothing;
    `reduction` is 1 (mean over the rows not ignored: NaN when every row is)
    or 2 (sum), F.cross_entropy's enum. Row maxima and exponentials are
    float32 whatever x's dtype (the loss is float32), as after
    transformers' `logits.float()`."""

FUSED_OPS += (
    FusedOp(
        "fused_linear_cross_entropy(Tensor x, Tensor weight, Tensor? bias, Tensor target, "
        "int reduction, int ignore_index, bool return_logits) "
        "-> (Tensor loss, Tensor lse, Tensor logits)",
        summary="cross_entropy(x @ weight^T + bias, target) a block of columns at a time",
        description=f"""
    A language model's output projection and its loss in one op: the
    [tokens, vocabulary] log-softmax and its gradient never exist. {_LINEAR_LOSS_DOC}
    `lse` (the rows' log-sum-exp) is what backward needs besides the
    inputs. With `return_logits` (the graph uses the layer's output too: a
    model that returns its logits), `logits` is that output, [..., N],
    computed in one product, and its gradient joins the loss's in the
    backward's blocks; without, `logits` is empty ([0]) and the kernel
    computes the logits a block of vocabulary columns at a time, never all
    of them.

    ```mlir
    %loss, %lse, %z = fxmlir.fused_linear_cross_entropy %x, %w, %none, %t {{ignore_index = -100 : i64, reduction = 1 : i64, return_logits = false}}
        : (tensor<8x16xf32>, tensor<32x16xf32>, none, tensor<8xsi64>) -> (tensor<f32>, tensor<8xf32>, tensor<0xf32>)
    ```""",
        family=Family.LINEAR_LOSS,
        saves=("x", "weight", "bias", "target", "logits", "lse"),
        differentiable=("logits",),
    ),
    FusedOp(
        "fused_linear_cross_entropy_grad(Tensor grad, Tensor? grad_logits, Tensor x, "
        "Tensor weight, Tensor? bias, Tensor target, Tensor? logits, Tensor lse, "
        "int reduction, int ignore_index) "
        "-> (Tensor grad_x, Tensor grad_weight, Tensor grad_bias)",
        summary="the gradients of fused_linear_cross_entropy's x, weight and bias",
        description=f"""
    From the loss's gradient `grad` (a float32 scalar), the returned logits'
    gradient `grad_logits` ([..., N] or none) and the forward's `lse`: for
    each block of vocabulary columns, `g = (softmax - one_hot) * grad`
    (divided by the rows not ignored for the mean) `+ grad_logits` makes
    that block's `grad_weight = g^T @ x` and `grad_bias` rows whole, and
    adds `g @ weight` to `grad_x`. `logits` ([..., N]), when the forward
    returned them, is read instead of recomputed. {_LINEAR_LOSS_DOC}
    `grad_bias` is [N]: zeros, with no column sums taken, when there is no
    bias.

    ```mlir
    %dx, %dw, %db = fxmlir.fused_linear_cross_entropy_grad %g, %none, %x, %w, %none, %t, %none, %lse {{ignore_index = -100 : i64, reduction = 1 : i64}}
        : (tensor<f32>, none, tensor<8x16xf32>, tensor<32x16xf32>, none, tensor<8xsi64>, none, tensor<8xf32>)
        -> (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>)
    ```""",
        family=Family.LINEAR_LOSS,
    ),
)


FUSED_OPS += (
    FusedOp(
        "mlir_jit(str module, str function, Tensor[] inputs) -> Tensor[]",
        summary="a region of the graph, compiled by MLIR once per signature",
        description="""
    Runs `function` (an outlined `func.func`) of `module` on `inputs`;
    fxmlir.mlir_jit is its MLIR form.""",
        family=Family.JIT,
        devices=("CPU", "CUDA"),
    ),
    FusedOp(
        "mlir_jit_into(str module, str function, Tensor[] inputs, Tensor(a!) out) "
        "-> Tensor(a!)",
        summary="mlir_jit of a one-result pointwise region, its result written into `out`",
        description="""
    mlir_jit for a region the core marks `fxmlir.pointwise` (one result,
    computed element by element from inputs of its shape): the result is
    written into `out`, which has its shape and dtype, contiguous, and is
    returned. fxmlir.inplace_sums passes an input that dies at the call as
    `out`, so that the region takes no new buffer, as an in-place sum would
    not (each element of the inputs is read before that element of the
    result is written).""",
        family=Family.JIT,
        devices=("CPU", "CUDA"),
        in_dialect=False,
    ),
)


FUSED_OPS += (
    FusedOp(
        "cast_tensors(Tensor[] tensors, ScalarType dtype) -> Tensor[]",
        summary="casts of several tensors to one dtype in one call",
        description="""
    `[t.to(dtype) for t in tensors]`: autocast's casts of a step's weights
    in one op call and, for dense tensors of 16- and 32-bit floating types
    on CUDA, one kernel launch, where each cast was a call, a dispatch and a
    launch of its own (fxmlir-group-casts). Each result is a new tensor with its input's
    shape and strides.

    ```mlir
    %w, %b = fxmlir.cast_tensors %w32, %b32 {dtype = bf16}
        : (tensor<16x8xf32>, tensor<16xf32>) -> (tensor<16x8xbf16>, tensor<16xbf16>)
    ```""",
        family=Family.CASTS,
    ),
)


FUSED_OPS += (
    FusedOp(
        "embedding_grad(Tensor grad, Tensor indices, int num_weights, int padding_idx) "
        "-> Tensor",
        summary="an embedding's weight gradient, in a CPU block reused across steps",
        description="""
    `embedding_dense_backward(grad, indices, num_weights, padding_idx,
    scale_grad_by_freq=False)`, the same sums in the same order (bit for
    bit): row k of the result is the sum of grad's rows whose index is k,
    rows indexed `padding_idx` left out (negative: none). The result comes
    from the blocks csrc/ops/ReusedBlocks.h keeps: ATen's takes a fresh
    zero-filled [num_weights, D] block each step (glibc maps one over 32
    MiB anew, its pages faulted in one at a time), this one the block the
    freed gradient of the step before left, zeroed in place.
    fxmlir-reuse-embedding-grads makes it from CPU embedding gradients.

    ```mlir
    %dw = fxmlir.embedding_grad %g, %i {num_weights = 100 : i64, padding_idx = -1 : i64}
        : (tensor<2x8x16xf32>, tensor<2x8xsi64>) -> tensor<100x16xf32>
    ```""",
        family=Family.EMBEDDING_GRAD,
        devices=("CPU",),
    ),
)


def by_name() -> dict[str, FusedOp]:
    return {op.name: op for op in FUSED_OPS}
