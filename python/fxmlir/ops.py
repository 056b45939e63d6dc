"""The fused torch ops ``torch.ops.fxmlir.*`` and their autograd formulas.

Importing this module loads ``libfxmlir_ops.so`` (the schemas and CPU, CUDA
and Meta kernels of every op in fxmlir/fused_ops.py but mlir_jit, whose
library needs the compiler: fxmlir.jit_ops; built by CMake next to this
file) and registers the backward of every op the table gives a `saves`
list: ``backward_<op name>`` below, called with the op's arguments by name
(the saved tensors and the non-tensor arguments, `axis` made non-negative),
the output gradient, and the names of the inputs that need a gradient.

The formulas of ops that can appear before autodiff save only inputs (x,
bias, mask), never the activation: recomputing from them is what fusing
before autodiff buys. The gradient ops have formulas too, so that double
backward (gradient penalties, Hessian-vector products) is exact.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch

from fxmlir.fused_ops import FUSED_OPS, FusedOp, activations
from fxmlir.op_libraries import OpsLibraryNotFoundError, load

__all__ = ["LIBRARY_PATH", "OpsLibraryNotFoundError"]

LIBRARY_PATH = load("libfxmlir_ops.so")

Grads = dict[str, torch.Tensor]

fxmlir_ops = torch.ops.fxmlir


# -- helpers of the formulas -----------------------------------------------------

def _bias_grad(grad: torch.Tensor, axis: int) -> torch.Tensor:
    """Sum of grad over every dimension but axis (the bias broadcast)."""
    dims = [d for d in range(grad.dim()) if d != axis]
    # sum over an empty dim list would reduce everything.
    return grad.sum(dims) if dims else grad.clone()


def _bias_view(bias: torch.Tensor, ndim: int, axis: int) -> torch.Tensor:
    """bias shaped to broadcast along `axis` of an ndim tensor."""
    return bias.reshape([-1 if d == axis else 1 for d in range(ndim)])


def _pre_activation_grads(grad_pre: torch.Tensor, a: SimpleNamespace,
                          needs: set[str]) -> Grads:
    """Gradients of x and bias for an op computing f(x + bias), from the
    gradient with respect to x + bias."""
    grads = {"x": grad_pre}
    if "bias" in needs:
        grads["bias"] = _bias_grad(grad_pre, a.axis)
    return grads


def _activation_grad_grads(a: SimpleNamespace, upstream: torch.Tensor,
                           needs: set[str]) -> Grads:
    """Gradients of out = grad * f'(x + bias): linear in grad (the first
    derivative, through the fused kernel), f'' for x and bias (none when
    f'' is 0 almost everywhere, as for relu)."""
    grads = {"grad": _activation_grad(upstream, a, a.activation)} if "grad" in needs else {}
    second = activations()[a.activation].second_derivative
    if second is not None and needs & {"x", "bias"}:
        pre = a.x + _bias_view(a.bias, a.x.dim(), a.axis)
        grads |= _pre_activation_grads(upstream * a.grad * second(pre), a, needs)
    return grads


def _activation_grad(grad: torch.Tensor, a: SimpleNamespace, activation: str) -> torch.Tensor:
    """The gradient with respect to x + bias of `activation`, given the
    gradient of its value."""
    if activation == "none":
        return grad
    return fxmlir_ops.fused_bias_act_grad(grad, a.x, a.bias, a.axis, activation)


# -- the formulas, by op ---------------------------------------------------------

def backward_bias_add(a: SimpleNamespace, grad: torch.Tensor, needs: set[str]) -> Grads:
    return _pre_activation_grads(grad, a, needs)


def backward_fused_bias_act(a: SimpleNamespace, grad: torch.Tensor,
                            needs: set[str]) -> Grads:
    return _pre_activation_grads(_activation_grad(grad, a, a.activation), a, needs)


def backward_fused_bias_act_grad(a: SimpleNamespace, upstream: torch.Tensor,
                                 needs: set[str]) -> Grads:
    return _activation_grad_grads(a, upstream, needs)


def backward_fused_bias_add_mask_scale(a: SimpleNamespace, grad: torch.Tensor,
                                       needs: set[str]) -> Grads:
    return _pre_activation_grads(grad * a.mask * a.scale, a, needs)


def backward_fused_bias_dropout_add(a: SimpleNamespace, grad: torch.Tensor,
                                    needs: set[str]) -> Grads:
    scale = 1 / (1 - a.p)
    if a.packed:
        grad_act = fxmlir_ops.packed_mask_scale(grad, a.mask, scale)
    else:
        grad_act = torch.ops.aten.native_dropout_backward(grad, a.mask, scale)
    grads = _pre_activation_grads(_activation_grad(grad_act, a, a.activation), a, needs)
    if "residual" in needs:
        grads["residual"] = grad
    return grads


def backward_packed_mask_scale(a: SimpleNamespace, upstream: torch.Tensor,
                               needs: set[str]) -> Grads:
    return {"grad": fxmlir_ops.packed_mask_scale(upstream, a.mask, a.scale)}


def backward_fused_linear_gelu(a: SimpleNamespace, grad: torch.Tensor,
                               needs: set[str]) -> Grads:
    if not torch.is_grad_enabled() and "x" in needs:
        grad_x, grad_weight, grad_bias = fxmlir_ops.fused_linear_gelu_grad(
            grad, a.x, a.weight, a.pre, a.approximate)
        return {"x": grad_x, "weight": grad_weight, "bias": grad_bias}
    # Double backward (create_graph) recomputes the pre-activation from the
    # inputs, so that it is differentiable; without a gradient for x, the
    # fused op would compute one for nothing.
    pre = a.pre
    if torch.is_grad_enabled():
        pre = torch.nn.functional.linear(a.x, a.weight, a.bias)
    g = torch.ops.aten.gelu_backward(grad, pre, approximate=a.approximate)
    rows = g.reshape(-1, g.shape[-1])
    grads = {"weight": rows.t() @ a.x.reshape(-1, a.x.shape[-1]), "bias": rows.sum(0)}
    if "x" in needs:
        grads["x"] = g @ a.weight
    return grads


def backward_fused_linear_cross_entropy(a: SimpleNamespace, grad: torch.Tensor,
                                        needs: set[str]) -> Grads:
    """Returned logits are read, not recomputed, and their gradient joins
    the loss's block by block."""
    returned = a.return_logits
    if grad is None:  # only the logits were differentiated
        grad = a.lse.new_zeros(())
    grad_x, grad_weight, grad_bias = fxmlir_ops.fused_linear_cross_entropy_grad(
        grad, a.grad_logits if returned else None, a.x, a.weight, a.bias, a.target,
        a.logits if returned else None, a.lse, a.reduction, a.ignore_index)
    return {"x": grad_x, "weight": grad_weight, "bias": grad_bias}


# -- registration from the table ---------------------------------------------------

def _register_autograd(op: FusedOp) -> None:
    """Registers backward_<op name>. Results after the first (a mask, a
    pre-activation) are for backward only, no gradient flowing through
    them, unless the table names them `differentiable`: the formula gets
    their gradients as `grad_<name>`."""
    formula = globals()[f"backward_{op.name}"]
    schema = op.function_schema
    names = [arg.name for arg in schema.arguments]
    results = [ret.name or "result" for ret in schema.returns]

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        outputs = output if isinstance(output, tuple) else (output,)
        ctx.mark_non_differentiable(*(value for name, value in zip(results[1:], outputs[1:])
                                      if name not in op.differentiable))
        if op.differentiable:
            # A result nobody differentiated gets None, not zeros of its
            # size (a [tokens, vocabulary] tensor for returned logits).
            ctx.set_materialize_grads(False)
        values = dict(zip(names, inputs)) | dict(zip(results, outputs))
        ctx.save_for_backward(*(values[n] for n in op.saves))
        ctx.constants = {n: v for n, v in values.items()
                         if v is not None and not isinstance(v, torch.Tensor)}
        if "axis" in ctx.constants:
            ndim = values["x"].dim()
            ctx.constants["axis"] %= max(ndim, 1)

    def backward(ctx: Any, grad: torch.Tensor, *others: Any) -> tuple[Any, ...]:
        needs = {n for n, needed in zip(names, ctx.needs_input_grad) if needed}
        result_grads = {f"grad_{n}": g for n, g in zip(results[1:], others)
                        if n in op.differentiable}
        a = SimpleNamespace(**ctx.constants, **dict(zip(op.saves, ctx.saved_tensors)),
                            **result_grads)
        grads = formula(a, grad, needs)
        return tuple(grads.get(n) if n in needs else None for n in names)

    torch.library.register_autograd(f"fxmlir::{op.name}", backward,
                                    setup_context=setup_context)


for _op in FUSED_OPS:
    if _op.saves is not None:
        _register_autograd(_op)
