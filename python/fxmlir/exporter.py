"""fxmlir module -> FX GraphModule calling torch.ops.aten.* / torch.ops.fxmlir.*.

Reads the core's JSON form of the module. Typed ops become calls of the
OpOverload their name spells (`fxmlir.aten.add.Tensor` ->
torch.ops.aten.add.Tensor, `fxmlir.bias_add` -> torch.ops.fxmlir.bias_add),
their arguments rebuilt from the schema; `fxmlir.call` ops call back what the
importer recorded. Nodes the passes left alone keep their original metadata;
new nodes get `meta["val"]` by fake-tensor propagation, so later stages see
shapes.
"""

from __future__ import annotations

import copy
import operator
from typing import Any, Mapping

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx._lazy_graph_module import _LazyGraphModule
from torch.utils import _pytree as pytree

from fxmlir import aten_calls, mlir_attrs, schema
from fxmlir.importer import ImportedGraph, node_value
from fxmlir.inplace_sums import POINTWISE, sum_in_place
from fxmlir.symbolic_sizes import DYNAMIC_SIZE, RESULT_SHAPE_SIZES, SizeValues


class ExportFailure(RuntimeError):
    """An op the exporter cannot turn back into an FX node."""


class _GraphBuilder:
    def __init__(self, imported: ImportedGraph, original: fx.GraphModule,
                 jit_functions: Mapping[str, str], used: set[int]) -> None:
        self.imported = imported
        # The JSON values some op or the return reads.
        self.used = used
        self.jit_functions = jit_functions
        self.original = {n.name: n for n in original.graph.nodes}
        self.graph_fake_modes = [
            v.fake_mode for n in original.graph.nodes
            for v in pytree.tree_leaves(n.meta.get("val", n.meta.get("example_value")))
            if isinstance(v, FakeTensor)][:1]
        self.graph = fx.Graph()
        self.graph._codegen = copy.deepcopy(original.graph._codegen)
        # JSON value id -> FX node / Python value, or (node, index) of a
        # result of a multi-result op that nothing reads.
        self.env: dict[int, Any] = {}
        # Sizes the nodes the exporter makes take, from the graph's inputs.
        self.sizes = SizeValues(self.graph)

    def value(self, value_id: int) -> Any:
        value = self.env[value_id]
        if isinstance(value, tuple):  # a result of a multi-result op
            node, index = value
            item = self.graph.call_function(operator.getitem, (node, index))
            item.meta["val"] = node_value(node)[index]
            self.env[value_id] = value = item
        return value

    def add_op(self, op: dict) -> None:
        name = op["name"]
        results = op["results"]
        if name == "fxmlir.none":
            self.env[results[0]["id"]] = None
            return
        if name == "fxmlir.get_attr":
            node = self.graph.get_attr(op["attributes"]["name"]["str"])
            self._bind(node, op, single=True, same=self._same_call(op, node.target))
            return
        operands = [self.value(i) for i in op["operands"]]
        if name == "fxmlir.mlir_jit":  # a JIT region: the call carries its function
            import fxmlir.jit_ops  # noqa: F401 - the compiler's op library, when needed

            callee = op["attributes"]["callee"]["symbol"]
            node = self.graph.call_function(
                torch.ops.fxmlir.mlir_jit.default,
                (self.jit_functions[callee], callee, operands), name=callee)
            self._bind(node, op, single=False, same=self._same_call(op, node.target))
            if POINTWISE in op["attributes"]:
                node.meta[POINTWISE] = True  # its result may take a dying input's memory
            self._restore_layouts(op, _result_nodes(op))
            return
        if name == "fxmlir.call":
            target = op["attributes"]["target"]["str"]
            opcode, fn = self.imported.callables[target]
            pyobjects = self.imported.pyobjects
            args = tuple(mlir_attrs.decode(op["attributes"]["args"], operands, pyobjects))
            kwargs = {k: mlir_attrs.decode(v, operands, pyobjects)
                      for k, v in op["attributes"]["kwargs"]["dict"].items()}
            args = self._with_symbolic_sizes(op, fn, args)
            same = self._same_call(op, fn)
            node = self.graph.create_node(opcode, fn, args, kwargs,
                                          name=same.name if same is not None else None)
            self._bind(node, op, single=not self._is_multi(op), same=same)
            return
        overload = schema.op_from_mlir_name(name)
        if overload is None:
            raise ExportFailure(f"op {name} names no torch operator")
        args, kwargs = aten_calls.unbind_arguments(overload, operands, op["attributes"])
        args = self._with_symbolic_sizes(op, overload, args)
        same = self._same_call(op, overload)
        node = self.graph.create_node("call_function", overload, args, kwargs,
                                      name=same.name if same is not None else None)
        single = len(overload._schema.returns) == 1 and \
            not isinstance(overload._schema.returns[0].type, torch.ListType)
        self._bind(node, op, single=single, same=same)

    def _with_symbolic_sizes(self, op: dict, target: Any, args: tuple) -> tuple:
        """`args` with the dynamic entries of a RESULT_SHAPE_SIZES op's size
        list (its second argument) rebuilt; as they are for other ops."""
        target_schema = getattr(target, "_schema", None)
        if target_schema is None or target_schema.name not in RESULT_SHAPE_SIZES or \
                not isinstance(args[1], list) or DYNAMIC_SIZE not in args[1]:
            return args
        return (args[0], self._symbolic_sizes(op, args[1]), *args[2:])

    def _symbolic_sizes(self, op: dict, sizes: list[int]) -> list[int | fx.Node]:
        """A view's size list with its dynamic entries read from the
        symbolic shape of the node the op stands for (its location): a
        rewrite that makes a view keeps the location of the value it
        replaces, whose shape the view's result has."""
        original = self.original.get(op.get("loc"))
        value = node_value(original) if original is not None else None
        shape = value.shape if isinstance(value, torch.Tensor) else None
        if shape is None or len(shape) != len(sizes):
            raise ExportFailure(f"op {op['name']} ({op.get('loc', 'no name')}) has symbolic "
                                "sizes and stands for no node of the graph with its shape")
        return [self.sizes.value(dim) if size == DYNAMIC_SIZE else size
                for size, dim in zip(sizes, shape)]

    def _restore_layouts(self, op: dict, outputs: list[tuple[str, int] | None]) -> None:
        """A region writes its results contiguous; where the node a result
        stands for had other strides in the original graph (an elementwise
        op on a transposed input keeps its layout), a later view may depend
        on them, so the result is copied into that layout."""
        for result, output in zip(op["results"], outputs):
            original = self.original.get(output[0]) if output else None
            if original is None:
                continue
            expected = node_value(original)
            if isinstance(expected, (tuple, list)):
                expected = expected[output[1]]
            if not isinstance(expected, torch.Tensor) or expected.is_contiguous():
                continue
            self.env[result["id"]] = self._copy_to_layout(self.value(result["id"]), expected)

    def _copy_to_layout(self, value: fx.Node, expected: torch.Tensor) -> fx.Node:
        """`value` (contiguous) copied into the strides of `expected`: a
        permutation of a dense layout through permute, clone, permute back;
        any other layout through empty_strided and copy."""
        aten = torch.ops.aten
        order = _dense_order(expected)
        if order is not None:
            inverse = sorted(range(len(order)), key=order.__getitem__)
            permuted = self._call(aten.permute.default, value, order)
            dense = self._call(aten.clone.default, permuted,
                               memory_format=torch.contiguous_format)
            return self._call(aten.permute.default, dense, inverse)
        empty = self._call(aten.empty_strided.default, self.sizes.values(expected.shape),
                           self.sizes.values(expected.stride()), dtype=expected.dtype,
                           device=expected.device)
        return self._call(aten.copy.default, empty, value)

    def _call(self, target: Any, *args: Any, **kwargs: Any) -> fx.Node:
        node = self.graph.call_function(target, args, kwargs)
        node.meta["val"] = self._fake_run(node)
        return node

    def _same_call(self, op: dict, target: Any) -> fx.Node | None:
        """The original node that `op` still is (the same target, or the
        typed ATen op the node's call was imported as); None for new ops (a
        rewrite keeps the location of what it replaced)."""
        original = self.original.get(op.get("loc"))
        if original is None:
            return None
        if original.target == target:
            return original
        spellings = aten_calls.typed_candidates(original.op, original.target, original.args,
                                           original.kwargs, _is_tensor_node)
        return original if any(spelled is target for spelled, _, _ in spellings) else None

    def _is_multi(self, op: dict) -> bool:
        return op.get("loc") in self.imported.multi

    def _bind(self, node: fx.Node, op: dict, single: bool, same: fx.Node | None) -> None:
        """Makes `node` the value of `op`'s results, its metadata that of
        `same`, the original node it still is (_same_call; it keeps that
        node's name too), or computed."""
        if same is not None:
            node.meta.update(same.meta)  # a fresh node's meta is empty
        else:
            node.meta["val"] = self._fake_run(node)
        results = op["results"]
        if single and len(results) == 1:
            self.env[results[0]["id"]] = node
        else:
            # Each result taken out at once: the tuple then dies here, and
            # each result after its own last use, not after the last use of
            # any result (a region's outputs would stay alive together).
            for index, result in enumerate(results):
                self.env[result["id"]] = (node, index)
                if result["id"] in self.used:
                    self.value(result["id"])

    def _fake_run(self, node: fx.Node) -> Any:
        if node.op == "get_attr":
            return node_value(self.original[node.target]) if node.target in self.original \
                else None
        args, kwargs = pytree.tree_map_only(
            fx.Node, node_value, (node.args, node.kwargs))
        # The inputs' own fake mode: Dynamo's and AOTAutograd's differ. A
        # factory op has no tensor input: the graph's inputs have the mode.
        modes = [t.fake_mode for t in pytree.tree_leaves((args, kwargs))
                 if isinstance(t, FakeTensor)] or self.graph_fake_modes
        if not modes:
            raise ExportFailure(f"no fake tensor in the graph to compute {node.format_node()}")
        with modes[0]:
            return node.target(*args, **kwargs)

    def finish(self, original: fx.GraphModule, returns: list[int],
               in_place_sums: bool) -> fx.GraphModule:
        (output,) = [n for n in original.graph.nodes if n.op == "output"]
        _, spec = pytree.tree_flatten(output.args[0])
        values = [self.value(i) for i in returns]
        new_output = self.graph.output(pytree.tree_unflatten(values, spec))
        new_output.meta = copy.copy(output.meta)
        if in_place_sums:
            sum_in_place(self.graph)
        # Its code is generated when first needed: the after-autodiff stages
        # switch it to the boxed convention first (runtime_fallback.guarded),
        # which generated it a second time.
        gm = _LazyGraphModule(original, self.graph, original.__class__.__name__)
        gm.meta = copy.copy(getattr(original, "meta", {}))
        return gm


def _dense_order(tensor: torch.Tensor) -> list[int] | None:
    """The dims from outermost to innermost when the strides are a
    permutation of a dense row-major layout, else None."""
    order = sorted(range(tensor.dim()), key=lambda d: (-tensor.stride(d), d))
    expected = 1
    for dim in reversed(order):
        if tensor.shape[dim] != 1 and tensor.stride(dim) != expected:
            return None
        expected *= tensor.shape[dim]
    return order


def _result_nodes(op: dict) -> list[tuple[str, int] | None]:
    """For each result of an mlir_jit op, the FX node name and result index
    of the op it replaced, as the outliner recorded them at this call (None
    where that op had no name)."""
    recorded = op["attributes"].get("fxmlir.result_nodes")
    if recorded is None:
        return []
    return [(name, index) if name else None for name, index in mlir_attrs.decode(recorded)]


def _is_tensor_node(value: Any) -> bool:
    if not isinstance(value, fx.Node):
        return False
    val = value.meta.get("val", value.meta.get("example_value"))
    return isinstance(val, torch.Tensor)


def export_graph(module_json: dict, imported: ImportedGraph, original: fx.GraphModule,
                 jit_functions: Mapping[str, str] | None = None,
                 in_place_sums: bool = False) -> fx.GraphModule:
    """Rebuilds `original` (whose import is `imported`) from the module;
    `jit_functions` holds the text of the regions its mlir_jit ops call.
    `in_place_sums`: sums write into a dying addend (fxmlir.inplace_sums;
    for graphs run as they are, not traced again)."""
    (function,) = [f for f in module_json["functions"] if f["name"] == imported.func_name]
    jit_functions = jit_functions or {}
    used = {i for op in function["ops"] for i in op["operands"]} | set(function["returns"])
    builder = _GraphBuilder(imported, original, jit_functions, used)
    placeholders = [n for n in original.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(function["arguments"]):
        raise ExportFailure(f"@{imported.func_name} has {len(function['arguments'])} "
                            f"arguments, the graph {len(placeholders)} inputs")
    for node, argument in zip(placeholders, function["arguments"]):
        new = builder.graph.placeholder(node.name, node.type)
        new.meta = copy.copy(node.meta)
        builder.env[argument["id"]] = new
    for op in function["ops"]:
        try:
            builder.add_op(op)
        except ExportFailure:
            raise
        except Exception as e:
            raise ExportFailure(f"op {op['name']} ({op.get('loc', 'no name')}): {e}") from e
    return builder.finish(original, function["returns"], in_place_sums)
