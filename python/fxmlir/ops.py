"""The fused torch ops ``torch.ops.fxmlir.*`` and their autograd formulas.

Importing this module loads ``libfxmlir_ops.so`` (schemas plus CPU, CUDA and
Meta kernels, built by CMake next to this file) and registers the backward of
every op that fusion passes may place before autodiff:

- ``bias_add(x, bias, axis)``
- ``fused_bias_add_gelu(x, bias, axis, approximate)``
- ``fused_bias_add_mask_scale(x, bias, mask, axis, scale)``

The backward formulas save only the inputs (x, bias, mask), never the
activation: recomputing from them is what fusing before autodiff buys.
``fused_bias_add_gelu_grad`` has a formula too, so that double backward
(gradient penalties, Hessian-vector products) through the fused GELU is
exact; ``random_mask_like`` needs none (it returns a bool mask).
"""

import math
from pathlib import Path
from typing import Any

import torch

__all__ = ["LIBRARY_PATH", "OpsLibraryNotFoundError"]

LIBRARY_PATH = Path(__file__).with_name("libfxmlir_ops.so")


class OpsLibraryNotFoundError(ImportError):
    """libfxmlir_ops.so is missing: fxmlir was not built (or not installed)."""


def _load_library() -> None:
    if not LIBRARY_PATH.is_file():
        raise OpsLibraryNotFoundError(
            f"fxmlir op library not found at {LIBRARY_PATH}; build fxmlir "
            "(pip install . or the CMake build) to create it",
            path=str(LIBRARY_PATH),
        )
    torch.ops.load_library(str(LIBRARY_PATH))


_load_library()


def _normalize_axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


def _bias_grad(grad: torch.Tensor, axis: int) -> torch.Tensor:
    """Sum of grad over every dimension but axis (the bias broadcast)."""
    dims = [d for d in range(grad.dim()) if d != axis]
    # sum over an empty dim list would reduce everything.
    return grad.sum(dims) if dims else grad.clone()


def _x_and_bias_grads(
    ctx: Any, grad_pre: torch.Tensor, num_other_inputs: int
) -> tuple[Any, ...]:
    """Gradients of (x, bias, *others) for an op computing f(x + bias):
    `grad_pre` is the gradient w.r.t. x + bias; the other inputs get none."""
    grad_x, grad_bias = ctx.needs_input_grad[:2]
    return (
        grad_pre if grad_x else None,
        _bias_grad(grad_pre, ctx.axis) if grad_bias else None,
    ) + (None,) * num_other_inputs


def _setup_bias_add(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    x, _bias, axis = inputs
    ctx.axis = _normalize_axis(axis, x.dim())


def _backward_bias_add(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    return _x_and_bias_grads(ctx, grad, num_other_inputs=1)


def _setup_bias_add_gelu(
    ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor
) -> None:
    x, bias, axis, approximate = inputs
    ctx.save_for_backward(x, bias)
    ctx.axis = _normalize_axis(axis, x.dim())
    ctx.approximate = approximate


def _backward_bias_add_gelu(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    x, bias = ctx.saved_tensors
    grad_pre = torch.ops.fxmlir.fused_bias_add_gelu_grad(
        grad, x, bias, ctx.axis, ctx.approximate
    )
    return _x_and_bias_grads(ctx, grad_pre, num_other_inputs=2)


def _gelu_second_derivative(v: torch.Tensor, approximate: str) -> torch.Tensor:
    """d^2 gelu(v) / dv^2, in differentiable torch ops (for higher orders)."""
    if approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        t = torch.tanh(k * (v + c * v * v * v))
        du = k * (1 + 3 * c * v * v)  # d(inner) / dv
        return (1 - t * t) * (du - v * t * du * du + 3 * k * c * v * v)
    pdf = torch.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
    return pdf * (2 - v * v)


def _bias_view(bias: torch.Tensor, ndim: int, axis: int) -> torch.Tensor:
    """bias shaped to broadcast along `axis` of an ndim tensor."""
    return bias.reshape([-1 if d == axis else 1 for d in range(ndim)])


def _setup_bias_add_gelu_grad(
    ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor
) -> None:
    grad, x, bias, axis, approximate = inputs
    ctx.save_for_backward(grad, x, bias)
    ctx.axis = _normalize_axis(axis, x.dim())
    ctx.approximate = approximate


def _backward_bias_add_gelu_grad(ctx: Any, upstream: torch.Tensor) -> tuple[Any, ...]:
    # out = grad * gelu'(x + bias): linear in grad, gelu'' for x and bias.
    grad, x, bias = ctx.saved_tensors
    needs_grad, needs_x, needs_bias = ctx.needs_input_grad[:3]
    d_grad = torch.ops.fxmlir.fused_bias_add_gelu_grad(
        upstream, x, bias, ctx.axis, ctx.approximate) if needs_grad else None
    d_pre = None
    if needs_x or needs_bias:
        pre = x + _bias_view(bias, x.dim(), ctx.axis)
        d_pre = upstream * grad * _gelu_second_derivative(pre, ctx.approximate)
    return (d_grad, d_pre if needs_x else None,
            _bias_grad(d_pre, ctx.axis) if needs_bias else None, None, None)


def _setup_bias_add_mask_scale(
    ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor
) -> None:
    x, _bias, mask, axis, scale = inputs
    ctx.save_for_backward(mask)
    ctx.axis = _normalize_axis(axis, x.dim())
    ctx.scale = scale


def _backward_bias_add_mask_scale(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    (mask,) = ctx.saved_tensors
    grad_pre = grad * mask * ctx.scale
    return _x_and_bias_grads(ctx, grad_pre, num_other_inputs=3)


torch.library.register_autograd(
    "fxmlir::bias_add", _backward_bias_add, setup_context=_setup_bias_add
)
torch.library.register_autograd(
    "fxmlir::fused_bias_add_gelu",
    _backward_bias_add_gelu,
    setup_context=_setup_bias_add_gelu,
)
torch.library.register_autograd(
    "fxmlir::fused_bias_add_gelu_grad",
    _backward_bias_add_gelu_grad,
    setup_context=_setup_bias_add_gelu_grad,
)
torch.library.register_autograd(
    "fxmlir::fused_bias_add_mask_scale",
    _backward_bias_add_mask_scale,
    setup_context=_setup_bias_add_mask_scale,
)
