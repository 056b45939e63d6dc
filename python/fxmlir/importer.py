"""FX GraphModule -> fxmlir graph, in the core's JSON form (Module.to_json's),
which the core builds and verifies (Context.import_graph): Python spells no
MLIR.

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
from typing import Any, Callable, NamedTuple

import torch
import torch.fx as fx
from torch.utils import _pytree as pytree

from fxmlir import aten_calls, mlir_attrs, schema
from fxmlir.fake_values import fake_value
from fxmlir.mlir_types import NONE, UnsupportedValue, is_tensor, value_type
from fxmlir.mutation import mutation_touching_nodes
from fxmlir.symbolic_sizes import DYNAMIC_SIZE, RESULT_SHAPE_SIZES

# The type of a value fxmlir does not look into (see the module docstring).
OPAQUE = NONE

Type = dict[str, Any]

class ImportFailure(RuntimeError):
    """A node the importer cannot represent; names the node and the reason."""

    def __init__(self, node: fx.Node | None, reason: str) -> None:
        where = f"node '{node.name}' ({_describe(node)})" if node is not None else "graph"
        super().__init__(f"{where}: {reason}")
        self.node = node


@dataclass
class ImportedGraph:
    """An imported graph and what the exporter needs to rebuild it."""

    graph: dict[str, Any]
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


class _TypedOp(NamedTuple):
    """An op's typed signature, its MLIR name, whether it returns a list and
    whether it carries operandSegmentSizes."""

    signature: schema.OpSignature
    name: str
    variadic: bool
    segmented: bool


class _FunctionBuilder:
    def __init__(self, gm: fx.GraphModule, func_name: str,
                 is_registered_op: Callable[[str], bool]) -> None:
        self.gm = gm
        self.func_name = func_name
        self.is_registered_op = is_registered_op
        self.ops: list[dict[str, Any]] = []
        # FX node -> the ids of its value(s), and their types.
        self.values: dict[fx.Node, list[int]] = {}
        self.types: dict[fx.Node, list[Type]] = {}
        self.next_id = 0
        # Nodes whose value is a list or tuple: used only through getitem.
        self.multi: set[fx.Node] = set()
        self.none_value: int | None = None
        self.result = ImportedGraph({}, func_name)
        self.touches_mutation = mutation_touching_nodes(gm.graph)
        self.typed_ops: dict[torch._ops.OpOverload, _TypedOp | None] = {}

    # -- values --------------------------------------------------------------

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def _none(self) -> int:
        if self.none_value is None:
            self.none_value = self._new_id()
            self.ops.insert(0, {"name": "fxmlir.none", "operands": [], "attributes": {},
                                "results": [{"id": self.none_value, "type": NONE}]})
        return self.none_value

    def _use(self, node: fx.Node, user: fx.Node) -> tuple[int, Type]:
        types = self.types.get(node)
        if types is None:
            raise ImportFailure(user, f"uses '{node.name}', which has no value")
        if node in self.multi:
            raise ImportFailure(user, f"uses '{node.name}' (a list of {len(types)} "
                                      "values) as a single value")
        return self.values[node][0], types[0]

    # -- nodes ---------------------------------------------------------------

    def placeholder(self, node: fx.Node) -> dict[str, Any]:
        ty = self._type_of(node, node.meta.get("val", node.meta.get("example_value")))
        (value,) = self._define(node, [ty])
        return {"id": value, "type": ty, "loc": node.name}

    def get_attr(self, node: fx.Node) -> None:
        value = self.gm
        for part in node.target.split("."):
            value = getattr(value, part, None)
        # Anything but a tensor (a higher-order op's subgraph) is opaque.
        ty = self._type_of(node, value) if isinstance(value, torch.Tensor) else OPAQUE
        self._emit(node, "fxmlir.get_attr", [], {"name": {"str": node.target}}, [ty])

    def call(self, node: fx.Node) -> None:
        if self._is_result_projection(node):
            source, index = node.args
            index %= len(self.types[source])
            self.values[node] = [self.values[source][index]]
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

    def output(self, node: fx.Node) -> list[int]:
        leaves, _ = pytree.tree_flatten(node.args[0])
        returned = []
        for leaf in leaves:
            if leaf is None:
                returned.append(self._none())
            elif isinstance(leaf, fx.Node):
                returned.append(self._use(leaf, node)[0])
            else:
                raise ImportFailure(node, f"returns the constant {leaf!r}")
        return returned

    # -- helpers -------------------------------------------------------------

    def _type_of(self, node: fx.Node, value: Any) -> Type:
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

    def _define(self, node: fx.Node, types: list[Type]) -> list[int]:
        self.types[node] = types
        self.values[node] = [self._new_id() for _ in types]
        return self.values[node]

    def _emit(self, node: fx.Node, name: str, operands: list[int],
              attributes: dict[str, Any], result_types: list[Type]) -> None:
        ids = self._define(node, result_types)
        self.ops.append({"name": name, "operands": operands, "attributes": attributes,
                         "results": [{"id": i, "type": t} for i, t in zip(ids, result_types)],
                         "loc": node.name})

    def _is_result_projection(self, node: fx.Node) -> bool:
        if node.op != "call_function" or node.target is not operator.getitem:
            return False
        source, index = node.args
        return isinstance(source, fx.Node) and source in self.multi

    def _is_tensor_value(self, value: Any) -> bool:
        return isinstance(value, fx.Node) and value in self.types and \
            value not in self.multi and is_tensor(self.types[value][0])

    def _emit_typed(self, node: fx.Node, op: torch._ops.OpOverload, args: tuple,
                    kwargs: dict, result_types: list[Type]) -> bool:
        """Emits the generated op for `op`; False when it has none or the
        call's arguments are not all constants and tensor values."""
        typed = self._typed_op(op)
        if typed is None:
            return False
        signature, op_name, variadic, segmented = typed
        if not all(is_tensor(t) for t in result_types):
            return False
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
        operands: list[int] = []
        segments: list[int] = []
        attributes: dict[str, Any] = {}
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
                    elif isinstance(item, fx.Node):
                        value, ty = self._use(item, node)
                        if not is_tensor(ty):
                            return False
                        operands.append(value)
                    else:
                        return False
                segments.append(len(items))
            elif value is None:
                if not arg.optional:
                    return False
            else:
                if _is_symbolic(value):
                    return False
                try:
                    attributes[arg.ods_name] = mlir_attrs.typed(value, arg.attr.value)
                except (UnsupportedValue, TypeError, ValueError):
                    return False
        if segmented:
            attributes["operandSegmentSizes"] = {"i32s": segments}
        self._emit(node, op_name, operands, attributes, result_types)
        return True

    def _typed_op(self, op: torch._ops.OpOverload) -> _TypedOp | None:
        """What _emit_typed needs of `op` alone, once per op of the graph:
        None when the core has no typed op for it."""
        if op in self.typed_ops:
            return self.typed_ops[op]
        signature = aten_calls.typed_signature(op)
        typed = None
        if signature is not None and self.is_registered_op(name := schema.mlir_op_name(op)):
            typed = _TypedOp(
                signature, name,
                any(r.kind is schema.ResultKind.TENSOR_LIST for r in signature.results),
                aten_calls.has_operand_segments(signature))
        self.typed_ops[op] = typed
        return typed

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

    def _emit_generic(self, node: fx.Node, result_types: list[Type]) -> None:
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
        attributes = {
            "target": {"str": name},
            "args": mlir_attrs.constant(call_args, operand, pyobject),
            "kwargs": {"dict": {k: mlir_attrs.constant(v, operand, pyobject)
                                for k, v in node.kwargs.items()}},
        }
        used = [self._use(arg, node)[0] for arg in operands]
        self._emit(node, "fxmlir.call", used, attributes, result_types)


_SYMBOLIC = (fx.Node, torch.SymInt, torch.SymFloat, torch.SymBool)


def _is_symbolic(value: Any) -> bool:
    """Whether a constant argument holds a graph value or a symbolic size
    (an attribute must be a plain constant)."""
    if isinstance(value, (list, tuple)):
        return any(_is_symbolic(v) for v in value)
    return isinstance(value, _SYMBOLIC)


def _schema_name(target: Any) -> str | None:
    """"aten::slice_backward" for an ATen overload; None for others."""
    schema = getattr(target, "_schema", None)
    return schema.name if schema is not None else None


def import_graph(gm: fx.GraphModule, func_name: str,
                 is_registered_op: Callable[[str], bool]) -> ImportedGraph:
    """`gm` as one function `func_name` of a JSON graph."""
    builder = _FunctionBuilder(gm, func_name, is_registered_op)
    arguments: list[dict[str, Any]] = []
    returns: list[int] = []
    for node in gm.graph.nodes:
        try:
            if node.op == "placeholder":
                arguments.append(builder.placeholder(node))
            elif node.op == "get_attr":
                builder.get_attr(node)
            elif node.op in ("call_function", "call_method", "call_module"):
                builder.call(node)
            elif node.op == "output":
                returns = builder.output(node)
        except UnsupportedValue as e:  # a value or argument with no fxmlir form
            raise ImportFailure(node, f"{type(e).__name__}: {e}") from e
    builder.result.graph = {"functions": [{"name": func_name, "arguments": arguments,
                                           "ops": builder.ops, "returns": returns}]}
    return builder.result
