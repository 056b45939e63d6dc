"""FX GraphModule -> fxmlir module (MLIR text, parsed and verified by the core).

Schema-driven: a call whose ATen overload (the OpOverload itself, or the op
a torch builtin, Python operator, Tensor method, basic indexing or functional
wrapper of Dynamo's graphs calls, python/fxmlir/dynamo_calls.py) maps to a
generated op (python/fxmlir/schema.py) becomes that typed op; anything
else (custom ops, higher-order ops, Python callables, ops with symbolic
non-tensor arguments) becomes `fxmlir.call`,
which keeps the call's arguments verbatim, so every graph imports
losslessly. What has no MLIR spelling costs only its own node: a value
without a type (no fake value, a Python object, a subgraph module) is an
opaque value of type `none` that only `fxmlir.call`s use, and a constant
without an attribute stays in the import's Python object table. Value names
and op locations are the FX node names, so diagnostics and dumps point at the
graph the user knows. Nodes that touch memory the graph writes in place are
opaque calls too (fxmlir/mutation.py), so that no pass merges or moves work
across a write.
"""

from __future__ import annotations

import operator
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.fx as fx
from torch.utils import _pytree as pytree

from fxmlir import aten_calls, mlir_attrs, schema
from fxmlir.fake_values import fake_value
from fxmlir.mlir_types import UnsupportedValue, value_type
from fxmlir.mutation import mutation_touching_nodes
from fxmlir.symbolic_sizes import DYNAMIC_SIZE, RESULT_SHAPE_SIZES

# The type of a value fxmlir does not look into (see the module docstring).
OPAQUE = "none"

class ImportFailure(RuntimeError):
    """A node the importer cannot represent; names the node and the reason."""

    def __init__(self, node: fx.Node | None, reason: str) -> None:
        where = f"node '{node.name}' ({_describe(node)})" if node is not None else "graph"
        super().__init__(f"{where}: {reason}")
        self.node = node


@dataclass
class ImportedGraph:
    """An imported graph and what the exporter needs to rebuild it."""

    text: str
    func_name: str
    # fxmlir.call target name -> (FX opcode, FX target).
    callables: dict[str, tuple[str, Any]] = field(default_factory=dict)
    # Constants without an attribute, by their `{pyobject = N}` index.
    pyobjects: list[Any] = field(default_factory=list)
    # Nodes whose list value was imported as one result per element.
    multi: set[str] = field(default_factory=set)
    typed_ops: int = 0
    generic_ops: int = 0
    # Of the generic ops, those kept opaque because they touch mutated memory.
    mutation_ops: int = 0


def _describe(node: fx.Node) -> str:
    if node.op == "call_function":
        return target_name(node.target)
    return f"{node.op} {node.target}"


def target_name(target: Any) -> str:
    """The readable qualified name a fxmlir.call carries."""
    if isinstance(target, torch._ops.OpOverload):
        return target.name() if "." in target.name() else f"{target.name()}.default"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"
    module = getattr(target, "__module__", None) or "<unknown>"
    return f"{module}.{getattr(target, '__qualname__', repr(target))}"


def node_value(node: fx.Node) -> Any:
    if "val" not in node.meta and "example_value" not in node.meta:
        raise ImportFailure(node, "has no meta['val'] (graphs need fake-tensor metadata)")
    return fake_value(node)


class _FunctionBuilder:
    def __init__(self, gm: fx.GraphModule, func_name: str,
                 is_registered_op: Callable[[str], bool]) -> None:
        self.gm = gm
        self.func_name = func_name
        self.is_registered_op = is_registered_op
        self.lines: list[str] = []
        # FX node -> SSA name of its value(s), and their MLIR types.
        self.values: dict[fx.Node, str] = {}
        self.types: dict[fx.Node, list[str]] = {}
        # Nodes whose value is a list or tuple: used only through getitem.
        self.multi: set[fx.Node] = set()
        self.none_value: str | None = None
        self.result = ImportedGraph("", func_name)
        self.touches_mutation = mutation_touching_nodes(gm.graph)

    # -- values --------------------------------------------------------------

    def _none(self) -> str:
        if self.none_value is None:
            self.none_value = "%fxmlir_none"
            self.lines.insert(0, '    %fxmlir_none = "fxmlir.none"() : () -> none')
        return self.none_value

    def _use(self, node: fx.Node, user: fx.Node) -> tuple[str, str]:
        types = self.types.get(node)
        if types is None:
            raise ImportFailure(user, f"uses '{node.name}', which has no value")
        if node in self.multi:
            raise ImportFailure(user, f"uses '{node.name}' (a list of {len(types)} "
                                      "values) as a single value")
        return self.values[node], types[0]

    # -- nodes ---------------------------------------------------------------

    def placeholder(self, node: fx.Node) -> str:
        ty = self._type_of(node, node.meta.get("val", node.meta.get("example_value")))
        self.values[node] = f"%{node.name}"
        self.types[node] = [ty]
        return f'%{node.name}: {ty} loc("{node.name}")'

    def get_attr(self, node: fx.Node) -> None:
        value = self.gm
        for part in node.target.split("."):
            value = getattr(value, part, None)
        # Anything but a tensor (a higher-order op's subgraph) is opaque.
        ty = self._type_of(node, value) if isinstance(value, torch.Tensor) else OPAQUE
        self._define(node, [ty])
        self.lines.append(f'    %{node.name} = "fxmlir.get_attr"() {{name = '
                          f'{mlir_attrs.string(node.target)}}} : () -> {ty} loc("{node.name}")')

    def call(self, node: fx.Node) -> None:
        if self._is_result_projection(node):
            source, index = node.args
            index %= len(self.types[source])
            self.values[node] = f"{self.values[source]}#{index}"
            self.types[node] = [self.types[source][index]]
            return
        if "val" in node.meta or "example_value" in node.meta:
            val = node_value(node)
            if isinstance(val, (list, tuple)) and self._only_projected(node, len(val)):
                self.multi.add(node)
                self.result.multi.add(node.name)
            results = list(val) if node in self.multi else ([] if val is None else [val])
            result_types = [self._type_of(node, v) for v in results]
        else:  # no fake value (autocast's context, an RNG-state op): opaque
            result_types = [OPAQUE] if node.users else []
        candidates = [] if node in self.touches_mutation else aten_calls.typed_candidates(
            node.op, node.target, node.args, node.kwargs, self._is_tensor_value)
        if any(self._emit_typed(node, *call, result_types) for call in candidates):
            self.result.typed_ops += 1
        else:
            self._emit_generic(node, result_types)
            self.result.generic_ops += 1
            self.result.mutation_ops += node in self.touches_mutation

    def output(self, node: fx.Node) -> list[str]:
        leaves, _ = pytree.tree_flatten(node.args[0])
        names, types = [], []
        for leaf in leaves:
            if leaf is None:
                names.append(self._none())
                types.append("none")
            elif isinstance(leaf, fx.Node):
                name, ty = self._use(leaf, node)
                names.append(name)
                types.append(ty)
            else:
                raise ImportFailure(node, f"returns the constant {leaf!r}")
        if names:
            self.lines.append(f"    func.return {', '.join(names)} : {', '.join(types)}")
        else:
            self.lines.append("    func.return")
        return types

    # -- helpers -------------------------------------------------------------

    def _type_of(self, node: fx.Node, value: Any) -> str:
        """The value's MLIR type, OPAQUE for what has none."""
        try:
            return value_type(value)
        except UnsupportedValue:
            return OPAQUE

    def _only_projected(self, node: fx.Node, size: int) -> bool:
        """Whether every use of a list-valued node takes one element by a
        constant index (otherwise the list is one opaque value)."""
        return all(user.op == "call_function" and user.target is operator.getitem
                   and len(user.args) == 2 and user.args[0] is node
                   and type(user.args[1]) is int and -size <= user.args[1] < size
                   for user in node.users)

    def _define(self, node: fx.Node, types: list[str]) -> str:
        self.types[node] = types
        name = f"%{node.name}"
        self.values[node] = name
        return f"{name}:{len(types)}" if node in self.multi else name

    def _is_result_projection(self, node: fx.Node) -> bool:
        if node.op != "call_function" or node.target is not operator.getitem:
            return False
        source, index = node.args
        return isinstance(source, fx.Node) and source in self.multi

    def _results(self, node: fx.Node, types: list[str]) -> tuple[str, str]:
        lhs = f"{self._define(node, types)} = " if types else ""
        rhs = types[0] if len(types) == 1 else f"({', '.join(types)})"
        return lhs, rhs

    def _is_tensor_value(self, value: Any) -> bool:
        return isinstance(value, fx.Node) and value in self.types and \
            value not in self.multi and self.types[value][0].startswith("tensor<")

    def _emit_typed(self, node: fx.Node, op: torch._ops.OpOverload, args: tuple,
                    kwargs: dict, result_types: list[str]) -> bool:
        """Emits the generated op for `op`; False when it has none or the
        call's arguments are not all constants and tensor values."""
        signature = aten_calls.typed_signature(op)
        if signature is None or not self.is_registered_op(schema.mlir_op_name(op)):
            return False
        if any(not t.startswith("tensor<") for t in result_types):
            return False
        variadic = any(r.kind is schema.ResultKind.TENSOR_LIST for r in signature.results)
        if not variadic and len(result_types) != len(signature.results):
            return False
        try:
            bound = aten_calls.bind_arguments(op, args, kwargs)
        except TypeError:
            return False
        if op._schema.name in RESULT_SHAPE_SIZES:  # (self, size) or (self, shape)
            sizes = op._schema.arguments[1].name
            bound[sizes] = self._result_shape_sizes(node, bound[sizes])
        if op._schema.name == "aten::slice" and self._ends_at_size(bound):
            bound["end"] = sys.maxsize  # torch's spelling of "to the end"
        if not aten_calls.fits(signature, bound, self._is_tensor_value):
            return False
        operands: list[str] = []
        operand_types: list[str] = []
        segments: list[int] = []
        attributes: list[str] = []
        for arg in signature.args:
            value = bound[arg.name]
            if arg.is_operand:
                is_list = arg.kind in (schema.ArgKind.TENSOR_LIST,
                                       schema.ArgKind.OPTIONAL_TENSOR_LIST)
                items = value if is_list else [value]
                if items is None:
                    return False
                for item in items:
                    if item is None and arg.kind in (schema.ArgKind.OPTIONAL_TENSOR,
                                                     schema.ArgKind.OPTIONAL_TENSOR_LIST):
                        operands.append(self._none())
                        operand_types.append("none")
                    elif isinstance(item, fx.Node):
                        name, ty = self._use(item, node)
                        if not ty.startswith("tensor<"):
                            return False
                        operands.append(name)
                        operand_types.append(ty)
                    else:
                        return False
                segments.append(len(items))
            elif value is None:
                if not arg.optional:
                    return False
            else:
                if any(isinstance(v, (fx.Node, torch.SymInt, torch.SymFloat, torch.SymBool))
                       for v in pytree.tree_leaves(value)):
                    return False
                try:
                    attributes.append(f"{arg.ods_name} = {mlir_attrs.typed(value, arg.attr.value)}")
                except (UnsupportedValue, TypeError, ValueError):
                    return False
        if aten_calls.has_operand_segments(signature):
            attributes.append("operandSegmentSizes = array<i32: "
                              + ", ".join(map(str, segments)) + ">")
        lhs, rhs = self._results(node, result_types)
        attr_dict = f" {{{', '.join(attributes)}}}" if attributes else ""
        self.lines.append(
            f'    {lhs}"{schema.mlir_op_name(op)}"({", ".join(operands)}){attr_dict} : '
            f'({", ".join(operand_types)}) -> {rhs} loc("{node.name}")')
        return True

    @staticmethod
    def _ends_at_size(bound: dict[str, Any]) -> bool:
        """Whether a slice's end is its input's symbolic size along the dim
        (`x[:, :n]` where n is x's varying length): the slice runs to the
        end, whatever the size."""
        end, source = bound.get("end"), bound.get("self")
        end = node_value(end) if isinstance(end, fx.Node) else end
        value = node_value(source) if isinstance(source, fx.Node) else None
        if not isinstance(end, torch.SymInt) or not isinstance(value, torch.Tensor) or \
                not isinstance(bound.get("dim"), int):
            return False
        size = value.shape[bound["dim"]]
        return isinstance(size, torch.SymInt) and size.node.expr == end.node.expr

    def _result_shape_sizes(self, node: fx.Node, sizes: Any) -> Any:
        """A view's size list (or torch.Size node) with each symbolic size
        that is the result's size in its dim spelled DYNAMIC_SIZE; as it was
        when some size is neither an int nor that."""
        result = node_value(node)
        if isinstance(sizes, fx.Node):  # a torch.Size node of Dynamo's graph
            sizes = node_value(sizes)
        if not isinstance(sizes, (list, tuple)) or not isinstance(result, torch.Tensor) or \
                len(sizes) != result.dim():
            return sizes
        spelled = []
        for size, dim in zip(sizes, result.shape):
            value = node_value(size) if isinstance(size, fx.Node) else size
            if type(value) is int:
                spelled.append(value)
            elif isinstance(value, torch.SymInt) and isinstance(dim, torch.SymInt) and \
                    value.node.expr == dim.node.expr:
                spelled.append(DYNAMIC_SIZE)
            else:
                return sizes
        return spelled

    def _emit_generic(self, node: fx.Node, result_types: list[str]) -> None:
        operands: list[fx.Node] = []
        index: dict[fx.Node, int] = {}

        def operand(arg: fx.Node) -> int:
            if arg not in index:
                index[arg] = len(operands)
                operands.append(arg)
            return index[arg]

        if node.op == "call_function":
            name = target_name(node.target)
        else:  # call_method / call_module keep their opcode in the name
            name = f"{node.op}:{node.target}"
        self.result.callables[name] = (node.op, node.target)
        def pyobject(value: Any) -> int:
            self.result.pyobjects.append(value)
            return len(self.result.pyobjects) - 1

        call_args = list(node.args)
        if _schema_name(node.target) in RESULT_SHAPE_SIZES and len(call_args) > 1:
            # Symbolic sizes that are the result's: no SymInt operand (the
            # op then lowers alone in a JIT region), read back by the exporter.
            call_args[1] = self._result_shape_sizes(node, call_args[1])
        args = mlir_attrs.constant(call_args, operand, pyobject)
        kwargs = ", ".join(f"{mlir_attrs.string(k)} = {mlir_attrs.constant(v, operand, pyobject)}"
                           for k, v in node.kwargs.items())
        used = [self._use(arg, node) for arg in operands]
        lhs, rhs = self._results(node, result_types)
        self.lines.append(
            f'    {lhs}"fxmlir.call"({", ".join(n for n, _ in used)}) '
            f'{{target = {mlir_attrs.string(name)}, args = {args}, kwargs = {{{kwargs}}}}} : '
            f'({", ".join(t for _, t in used)}) -> {rhs} loc("{node.name}")')


def _schema_name(target: Any) -> str | None:
    """"aten::slice_backward" for an ATen overload; None for others."""
    schema = getattr(target, "_schema", None)
    return schema.name if schema is not None else None


def import_graph(gm: fx.GraphModule, func_name: str,
                 is_registered_op: Callable[[str], bool]) -> ImportedGraph:
    """The MLIR text of `gm` as one `func.func @func_name`."""
    builder = _FunctionBuilder(gm, func_name, is_registered_op)
    arguments: list[str] = []
    result_types: list[str] = []
    for node in gm.graph.nodes:
        try:
            if node.op == "placeholder":
                arguments.append(builder.placeholder(node))
            elif node.op == "get_attr":
                builder.get_attr(node)
            elif node.op in ("call_function", "call_method", "call_module"):
                builder.call(node)
            elif node.op == "output":
                result_types = builder.output(node)
        except UnsupportedValue as e:  # a value or argument with no fxmlir form
            raise ImportFailure(node, f"{type(e).__name__}: {e}") from e
    signature = f"({', '.join(result_types)})"
    text = "\n".join([f"func.func @{func_name}({', '.join(arguments)}) -> {signature} {{",
                      *builder.lines, "}", ""])
    builder.result.text = text
    return builder.result
