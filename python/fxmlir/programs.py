"""fxmlir.optimize: the passes applied to a GraphModule or an ExportedProgram,
for torch.export / AOTInductor users who never call torch.compile.

    ep = torch.export.export(model, (x,))
    ep = fxmlir.optimize(ep)                 # calls torch.ops.fxmlir.* now
    torch.export.save(ep, "model.pt2")       # loads where fxmlir is installed

Unlike the torch.compile backend, which keeps the original graph when a
round trip fails, this raises: the caller asked for the rewrite. A graph the
passes cannot read (torch IR from torch.fx.symbolic_trace or Dynamo: module
calls, no fake values) is refused with the reason.

With codegen=True, the composite ops export keeps whole but the JIT lowers
only in their decomposed form (softmax, log_softmax, layer_norm, var_mean)
are decomposed first, so that they can join JIT regions.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import replace
from typing import Any, TypeVar

import torch
import torch.fx as fx
from torch.export import ExportedProgram
from torch.export.graph_signature import TensorArgument
from torch.utils import _pytree as pytree

from fxmlir.config import Options, STAGES
from fxmlir.roundtrip import round_trip

Program = TypeVar("Program", fx.GraphModule, ExportedProgram)

# Numbers the programs of this process in dumps: program_0, program_1, ...
_numbers = itertools.count()

# The CompositeImplicitAutograd ops export keeps whose decompositions the JIT
# lowers (_softmax, _log_softmax, native_layer_norm, var_mean.correction:
# docs/jit-regions.md); AOTAutograd, under torch.compile, always decomposes them.
_JIT_DECOMPOSED = (torch.ops.aten.softmax.int, torch.ops.aten.log_softmax.int,
                   torch.ops.aten.layer_norm.default, torch.ops.aten.var_mean.dim)


def optimize(program: Program, *, stage: str = "inference", **options: Any) -> Program:
    """`program` rewritten by the stage's passes.

    program: an ExportedProgram, or a GraphModule of ATen ops whose nodes
        carry fake values in meta["val"] (torch.export, make_fx, AOTAutograd).
    stage: whose default pipeline runs: "inference" (the default: forward-only
        fusions, dropout included), "forward", "backward", or
        "before_autodiff" (only fusions with autograd formulas: for a program
        that will be trained through).
    options: as for fxmlir.backend (passes=..., dump_dir=...).
    """
    accepted = (*STAGES, "inference")
    if stage not in accepted:
        raise ValueError(f"stage={stage!r} is invalid; accepted values: {', '.join(accepted)}")
    opts = Options.from_env().updated(options)
    # A program carries JIT regions only when asked: they need the compiler
    # where it loads.
    opts = replace(opts, codegen=bool(opts.codegen))
    graph_id = f"program_{next(_numbers)}"
    import fxmlir.ops  # noqa: F401 - the rewritten graph calls torch.ops.fxmlir.*

    if isinstance(program, ExportedProgram):
        return _optimize_exported(program, graph_id, stage, opts)
    if isinstance(program, fx.GraphModule):
        reason = _unreadable(program)
        if reason is not None:
            raise ValueError(f"fxmlir.optimize cannot rewrite this GraphModule: {reason}; it "
                             "takes a graph of ATen ops with fake values in meta['val'] "
                             "(torch.export.export, make_fx(..., tracing_mode='fake'), "
                             "AOTAutograd)")
        return round_trip(program, graph_id, stage, opts)
    raise TypeError(f"fxmlir.optimize takes a torch.fx.GraphModule or a "
                    f"torch.export.ExportedProgram, got {type(program).__name__}")


def _unreadable(gm: fx.GraphModule) -> str | None:
    """Why the passes cannot read `gm`, or None: a torch IR graph calls
    modules and methods and carries no fake values, so the round trip would
    keep it as it is."""
    nodes = list(gm.graph.nodes)
    for node in nodes:
        if node.op in ("call_module", "call_method"):
            return (f"node {node.name!r} calls {node.op.removeprefix('call_')} "
                    f"{node.target!r} (a torch IR graph, as torch.fx.symbolic_trace makes)")
    for node in nodes:
        if node.op in ("placeholder", "call_function") and "val" not in node.meta:
            return (f"node {node.name!r} has no fake value in meta['val'] (a graph traced "
                    "without fake tensors, as torch.fx.symbolic_trace makes)")
    return None


def _optimize_exported(ep: ExportedProgram, graph_id: str, stage: str,
                       opts: Options) -> ExportedProgram:
    if opts.codegen and any(n.target in _JIT_DECOMPOSED for n in ep.graph.nodes):
        defaults = torch.export.default_decompositions()
        ep = ep.run_decompositions({op: defaults[op] for op in _JIT_DECOMPOSED})
    names = {spec.arg.name: spec.target for spec in ep.graph_signature.input_specs
             if spec.target is not None and hasattr(spec.arg, "name")}
    gm = round_trip(ep.graph_module, graph_id, stage, opts, input_names=names)
    # The signature names inputs and outputs by node name: FX may rename a
    # placeholder ("input" shadows a builtin), the passes replace outputs.
    signature = copy.deepcopy(ep.graph_signature)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    (output,) = [n for n in gm.graph.nodes if n.op == "output"]
    for specs, nodes in ((signature.input_specs, placeholders),
                         (signature.output_specs, pytree.tree_leaves(output.args[0]))):
        for spec, node in zip(specs, nodes):
            if isinstance(spec.arg, TensorArgument) and isinstance(node, fx.Node):
                spec.arg = TensorArgument(name=node.name)
    return ep._update(gm, signature)
