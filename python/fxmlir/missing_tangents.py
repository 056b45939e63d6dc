"""Backward graphs called without the gradients nobody computed.

A training step differentiates its loss, and a model returns more than its
loss: transformers' key/value caches, an encoder's output, the logits.
AOTAutograd's one backward node takes a gradient (a tangent) for every
differentiable output, and autograd fills each one nobody differentiated
with zeros: allocated when the backward starts, all of them held at the
step's peak until the graph reads them, then added to the gradients that
matter. Eager's per-op graph never allocates them.

Where fxmlir compiled the backward (`Backward`), the forward's outputs
tell autograd to pass None instead (`release`), and the backward runs,
for each set of missing tangents it meets, its graph rewritten with those
tangents zero (`without`): a sum with zero is its other operand (or that
operand's row-major copy, where the sum's strides are row-major and its
are not); a view, product or reduction of zero is zero; a zero that any
other op reads is materialized there. That graph goes through the same
round trip, compiled at the first call that misses those tangents. A zero
the rewrite cannot spell (a symbolic shape, a layout other than
contiguous) has the whole graph called with the zeros filled in, as
autograd would have.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

import sympy
import torch
import torch.fx as fx

from fxmlir.fake_values import fake_value
from fxmlir.fallback import fall_back

log = logging.getLogger("fxmlir")

_TANGENT = "tangents_"
aten = torch.ops.aten

# A zero as their first operand makes them zero.
_ZERO_OF_FIRST = {
    aten.view, aten._unsafe_view, aten.reshape, aten.transpose, aten.permute, aten.t,
    aten.expand, aten.unsqueeze, aten.squeeze, aten.clone, aten.alias, aten.detach,
    aten.slice, aten.select, aten.slice_backward, aten.select_backward, aten._to_copy,
    aten.neg, aten.sum, aten.mean, aten.div,
}
# A zero as any operand makes them zero (autograd never multiplies a
# tangent it left out: eager's gradient has no such product).
_ZERO_OF_ANY = {aten.mul, aten.mm, aten.bmm, aten.matmul}


class _Unspellable(Exception):
    """A zero the rewritten graph would have to materialize and cannot."""


def release(outputs: Any) -> None:
    """Has autograd pass None, not zeros, for the gradients nobody computes
    to the backward node of `outputs`, where that backward takes them."""
    if not torch.is_grad_enabled() or _compiled_autograd():
        return
    for output in outputs if isinstance(outputs, (list, tuple)) else (outputs,):
        node = getattr(output, "grad_fn", None)
        if node is not None and type(node).__name__ == "CompiledFunctionBackward":
            if _accepts(getattr(type(node)._forward_cls, "compiled_bw", None)):
                node.set_materialize_grads(False)
            return


def _compiled_autograd() -> bool:
    """Compiled autograd traces the backward node itself: left as torch has it."""
    from torch._dynamo import compiled_autograd

    return bool(torch._dynamo.config.compiled_autograd
                or compiled_autograd.compiled_autograd_enabled)


def _accepts(compiled_bw: Any) -> bool:
    """Whether AOTAutograd's compiled backward (or what it wraps) is a Backward."""
    while compiled_bw is not None:
        if getattr(compiled_bw, "accepts_missing_tangents", False):
            return True
        compiled_bw = getattr(compiled_bw, "__wrapped__", None)
    return False


class Backward:
    """A backward graph in AOTAutograd's boxed convention whose tangents may
    be None: `compile` compiles it, or a rewrite of it, named by the label
    given, into the same convention; `full` is the graph compiled already,
    if it is (None: compiled at the first call that takes every tangent)."""

    def __init__(self, graph: fx.GraphModule, full: Callable[[list[Any]], Any] | None,
                 compile: Callable[[fx.GraphModule, str], Callable[[list[Any]], Any]],
                 name: str = "backward", strict: bool = False) -> None:
        self._graph = graph
        self._name = name
        self._strict = strict
        self._placeholders = list(graph.graph.find_nodes(op="placeholder"))
        self._tangents = [i for i, node in enumerate(self._placeholders)
                          if node.name.startswith(_TANGENT)]
        self._symbols = {value.node.expr: i for i, node in enumerate(self._placeholders)
                         if isinstance(value := fake_value(node), torch.SymInt)
                         and isinstance(value.node.expr, sympy.Symbol)}
        self._compile = compile
        self._variants: dict[tuple[int, ...], Callable[[list[Any]], Any]] = \
            {} if full is None else {(): full}
        self._boxed_call = True
        # Only if any missing tangent can at worst be filled in at run time.
        self.accepts_missing_tangents = bool(self._tangents) and all(
            self._fillable(self._placeholders[i]) for i in self._tangents)

    def __call__(self, inputs: list[Any]) -> Any:
        missing = tuple(i for i in self._tangents if inputs[i] is None)
        run = self._variants.get(missing)
        if run is None:
            run = self._variants[missing] = self._variant(missing) if missing else \
                self._compile(self._graph, "backward")
        return run(inputs)

    def _variant(self, missing: tuple[int, ...]) -> Callable[[list[Any]], Any]:
        names = [self._placeholders[i].name for i in missing]
        try:
            graph = without(self._graph, names)
        except _Unspellable as reason:
            log.info("fxmlir: %s without %s fills them in: %s", self._name, names, reason)
            return self._filled(missing)
        except Exception as error:  # noqa: BLE001 - the step goes on, as autograd's
            fall_back(f"fxmlir: {self._name} graph takes zeros for {', '.join(names)}: "
                      f"its rewrite without them failed: {type(error).__name__}: {error}",
                      self._strict, error)
            return self._filled(missing)
        rewrites = sum(1 for other in self._variants if other)
        run = self._compile(graph, f"backward_without_tangents_{rewrites + 1}")
        kept = [i for i in range(len(self._placeholders)) if i not in missing]

        def call(inputs: list[Any]) -> Any:
            args = [inputs[i] for i in kept]
            inputs.clear()  # each input dies after its last use, as AOTAutograd's own
            return run(args)

        return call

    def _filled(self, missing: tuple[int, ...]) -> Callable[[list[Any]], Any]:
        def call(inputs: list[Any]) -> Any:
            for i in missing:  # as AOTAutograd's tangents: its traced layout
                value = fake_value(self._placeholders[i])
                inputs[i] = torch.empty_strided(
                    self._evaluated(value.shape, inputs), self._evaluated(value.stride(), inputs),
                    dtype=value.dtype, device=value.device).zero_()
            return self(inputs)  # every tangent there now

        return call

    def _fillable(self, tangent: fx.Node) -> bool:
        value = fake_value(tangent)
        if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
            return False
        symbols = set(self._symbols)
        return all(isinstance(d, int) or d.free_symbols <= symbols
                   for d in _exprs((*value.shape, *value.stride())))

    def _evaluated(self, sizes: Sequence[Any], inputs: list[Any]) -> list[int]:
        """Sizes or strides at run time: their symbols are the graph's size inputs."""
        binding = {symbol: inputs[i] for symbol, i in self._symbols.items()}
        return [int(d.xreplace(binding)) if not isinstance(d, int) else d
                for d in _exprs(sizes)]


def _contiguous(value: torch.Tensor) -> bool:
    """Whether `value`'s strides are its shape's row-major ones, compared as
    expressions (a symbolic comparison would add a guard)."""
    expected: Any = 1
    for size, stride in reversed(list(zip(_dims(value), _exprs(value.stride())))):
        if size != 1 and stride != expected:
            return False
        expected = expected * size
    return True


def without(gm: fx.GraphModule, tangents: Sequence[str]) -> fx.GraphModule:
    """A copy of the backward graph `gm` with the named tangent inputs gone,
    as if they were zero. Raises _Unspellable where a zero that an op reads
    cannot be materialized in the graph."""
    graph = fx.Graph()
    output = graph.graph_copy(gm.graph, {})
    graph.output(output)
    zeros = {node for node in graph.find_nodes(op="placeholder") if node.name in tangents}
    materialized: dict[fx.Node, fx.Node] = {}
    for node in list(graph.nodes):
        if node.op not in ("call_function", "output") or \
                not any(arg in zeros for arg in node.all_input_nodes):
            continue
        replacement = _folded(node, zeros)
        if replacement is node:
            zeros.add(node)
        elif replacement is not None:
            node.replace_all_uses_with(replacement)
        else:  # anything else reads the zero itself
            node.args, node.kwargs = fx.node.map_arg(
                (node.args, node.kwargs),
                lambda arg, reader=node: _materialized(graph, arg, reader, materialized)
                if arg in zeros else arg)
    graph.eliminate_dead_code()
    for node in graph.find_nodes(op="placeholder"):
        if node.name in tangents:
            graph.erase_node(node)
    graph.lint()
    return fx.GraphModule(gm, graph)


def _folded(node: fx.Node, zeros: set[fx.Node]) -> fx.Node | None:
    """What `node` is with its operands in `zeros` zero: itself (then zero
    too), the operand it reduces to (or its copy), or None (it reads a
    materialized zero)."""
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload) or \
            not isinstance(fake_value(node), torch.Tensor):
        return None
    packet = node.target.overloadpacket
    first = node.args[0] if node.args else None
    if packet in _ZERO_OF_FIRST and first in zeros:
        return node
    if packet in _ZERO_OF_ANY:
        return node
    if packet in (aten.add, aten.sub) and node.target.name().endswith(".Tensor"):
        a, b = node.args[:2]
        alpha = node.kwargs.get("alpha", 1)
        if a in zeros and b in zeros:
            return node
        if b in zeros:
            return _standing_for(a, node)
        if packet is aten.add and alpha == 1:
            return _standing_for(b, node)
    return None


def _standing_for(operand: Any, node: fx.Node) -> fx.Node | None:
    """`operand` as the value of `node`: itself where shape, strides (what
    later views need) and dtype agree; a row-major copy where only the
    strides differ and `node`'s are row-major; None otherwise."""
    value, result = fake_value(operand), fake_value(node)
    if not isinstance(value, torch.Tensor) or value.dtype != result.dtype or \
            _dims(value) != _dims(result):
        return None
    if _exprs(value.stride()) == _exprs(result.stride()):
        return operand
    if not _contiguous(result):
        return None
    with node.graph.inserting_before(node):
        copy = node.graph.call_function(aten.clone.default, (operand,),
                                        {"memory_format": torch.contiguous_format})
    copy.meta["val"] = result
    return copy


def _dims(value: torch.Tensor) -> tuple[Any, ...]:
    return _exprs(value.shape)


def _exprs(sizes: Sequence[Any]) -> tuple[Any, ...]:
    """Sizes or strides as ints and sympy expressions."""
    return tuple(d.node.expr if isinstance(d, torch.SymInt) else d for d in sizes)


def _materialized(graph: fx.Graph, zero: fx.Node, reader: fx.Node,
                  materialized: dict[fx.Node, fx.Node]) -> fx.Node:
    """A zeros node standing for `zero`, before `reader`."""
    if zero in materialized:  # inserted before its first reader: before this one too
        return materialized[zero]
    value = fake_value(zero)
    if any(isinstance(d, torch.SymInt) for d in value.shape) or not _contiguous(value):
        raise _Unspellable(f"'{reader.name}' reads '{zero.name}', a zero of symbolic shape "
                           f"or strided layout")
    with graph.inserting_before(reader):
        node = graph.call_function(aten.zeros.default, (list(value.shape),),
                                   {"dtype": value.dtype, "device": value.device,
                                    "pin_memory": False})
    node.meta["val"] = torch.zeros_like(value)
    materialized[zero] = node
    return node

