"""Symbolic sizes as values of the graph that uses them.

A graph compiled for varying shapes holds its sizes as SymInts; a node whose
arguments the exporter computes (a buffer in a recorded layout, say) must not
take a SymInt itself: FX would print the bare symbol (`s12`), which the
graph's code does not define. `SizeValues` rebuilds each size from the
graph's inputs instead: a symbol is a SymInt input, or the size of a tensor
input in which it appears alone, and an expression (`64*s12`) is computed from
those by FX nodes (operator.mul, ...).
"""

from __future__ import annotations

from typing import Any

import sympy
import torch
import torch.fx as fx
from torch.utils._sympy.interp import sympy_interp
from torch.utils._sympy.reference import PythonReferenceAnalysis


# How an op's size list spells a symbolic size: MLIR's dynamic size
# (ShapedType::kDynamic). Only in ops whose size list (their second argument)
# is their result's shape wherever it is symbolic, so that the exporter reads
# the size back from the result's symbolic shape: views (typed ops), and
# slice_backward's input_sizes (an fxmlir.call, lowered from its types).
DYNAMIC_SIZE = -(2**63)
RESULT_SHAPE_SIZES = frozenset({"aten::view", "aten::_unsafe_view", "aten::reshape",
                                "aten::slice_backward"})


class UnboundSize(ValueError):
    """A size whose symbol no input of the graph provides."""


class SizeValues:
    """Turns sizes (int or SymInt) into arguments of nodes of `graph`,
    reading symbols from its inputs (placeholders with `meta["val"]`), which
    must all be there before the first size is asked for."""

    def __init__(self, graph: fx.Graph) -> None:
        self.graph = graph
        self._tracer = fx.proxy.GraphAppendingTracer(graph)
        # Symbol -> a SymInt input, or (tensor input, dim) whose size it is.
        self._sources: dict[sympy.Symbol, fx.Node | tuple[fx.Node, int]] | None = None
        # Symbol or expression -> the node computing it, made once.
        self._made: dict[sympy.Expr, fx.Proxy] = {}

    def _find_sources(self) -> dict[sympy.Symbol, fx.Node | tuple[fx.Node, int]]:
        sources: dict[sympy.Symbol, fx.Node | tuple[fx.Node, int]] = {}
        inputs = [(n, n.meta.get("val", n.meta.get("example_value")))
                  for n in self.graph.nodes if n.op == "placeholder"]
        for node, value in inputs:
            if isinstance(value, torch.SymInt) and isinstance(value.node.expr, sympy.Symbol):
                sources[value.node.expr] = node
        for node, value in inputs:  # after the SymInt inputs: those cost no node
            if isinstance(value, torch.Tensor):
                for dim, size in enumerate(value.shape):
                    if isinstance(size, torch.SymInt) and \
                            isinstance(size.node.expr, sympy.Symbol):
                        sources.setdefault(size.node.expr, (node, dim))
        return sources

    def value(self, size: int | torch.SymInt) -> int | fx.Node:
        """`size` as a node argument: an int, or a node computing it."""
        if not isinstance(size, torch.SymInt):
            return int(size)
        expr = size.node.expr
        if expr.is_number:
            return int(expr)
        if expr not in self._made:
            env = {symbol: self._symbol(symbol, size) for symbol in expr.free_symbols}
            first_new = len(self.graph.nodes)
            result = sympy_interp(PythonReferenceAnalysis, env, expr)
            if not isinstance(result, fx.Proxy):
                return int(result)
            self._annotate(list(self.graph.nodes)[first_new:])
            self._made[expr] = result
        return self._made[expr].node

    def values(self, sizes: Any) -> list[int | fx.Node]:
        return [self.value(size) for size in sizes]

    def _symbol(self, symbol: sympy.Symbol, size: torch.SymInt) -> fx.Proxy:
        if symbol in self._made:
            return self._made[symbol]
        if self._sources is None:
            self._sources = self._find_sources()
        source = self._sources.get(symbol)
        if source is None:
            raise UnboundSize(f"size {size} uses the symbol {symbol}, which no input of the "
                              "graph provides (as a SymInt or as a tensor input's size)")
        if isinstance(source, tuple):
            tensor, dim = source
            node = self.graph.call_function(torch.ops.aten.sym_size.int, (tensor, dim))
            node.meta["val"] = tensor.meta.get("val", tensor.meta.get("example_value")).shape[dim]
        else:
            node = source
        self._made[symbol] = fx.Proxy(node, self._tracer)
        return self._made[symbol]

    @staticmethod
    def _annotate(nodes: list[fx.Node]) -> None:
        """Gives the arithmetic nodes an expression made their SymInt values,
        as every node of a compiled graph has."""
        for node in nodes:
            args = fx.node.map_arg(node.args, lambda n: n.meta["val"])
            node.meta["val"] = node.target(*args)
