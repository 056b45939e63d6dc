"""The op graph of a module as Graphviz dot, from the core's JSON form.

Nodes are named after the FX nodes (ops' locations) and placeholders,
parameters after their module path (the FX name on hover); every value
carries its full type; fused ops and JIT regions (naming their function) are
filled, opaque calls dashed, as a legend says.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from fxmlir.op_kinds import JIT_OP, OPAQUE_CALL, is_fused_op

_FUSED = 'style="rounded,filled", fillcolor="#ffcc80"'
_JIT = 'style="rounded,filled", fillcolor="#ce93d8"'
_OPAQUE = 'style="rounded,dashed", color="#757575"'
_PLAIN = 'style="rounded"'
_INPUT = 'shape=ellipse, style=filled, fillcolor="#e3f2fd"'


# What the fills and borders mean, drawn beside the graph.
_LEGEND = [
    '  subgraph cluster_legend {',
    '    label="legend"; fontname="monospace"; fontsize=10; color="#bdbdbd";',
    f'    legend_input [label="input / parameter", {_INPUT}];',
    f'    legend_plain [label="ATen op", {_PLAIN}];',
    f'    legend_fused [label="fused op (fxmlir.fused_*)", {_FUSED}];',
    f'    legend_jit [label="JIT region (@function)", {_JIT}];',
    f'    legend_opaque [label="opaque call (no typed op)", {_OPAQUE}];',
    '    legend_input -> legend_plain -> legend_fused -> legend_jit -> legend_opaque '
    '[style=invis];',
    '  }',
]


def type_text(ty: dict[str, Any]) -> str:
    """An MLIR-like spelling of a JSON type: tensor<?x8xf32, cuda:0>."""
    if ty["kind"] == "tensor":
        dims = "".join(f"{'?' if d < 0 else d}x" for d in ty["shape"])
        device = f", {ty['device']}" if ty.get("device") else ""
        return f"tensor<{dims}{ty['dtype']}{device}>"
    if ty["kind"] == "scalar":
        return ty["dtype"]
    return ty.get("text", ty["kind"])


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).replace("\\n", "\\l")


def _attribute_text(value: dict[str, Any]) -> str | None:
    if "float" in value:  # p=0.1, not the double's 17 digits
        return f"{float(value['float']):.6g}"
    for kind in ("int", "str", "bool", "dtype", "device"):
        if kind in value:
            return str(value[kind])
    if "ints" in value:
        return str(value["ints"])
    return None


def _op_label(op: dict[str, Any]) -> str:
    name = op.get("loc") or "+".join(op.get("fused_from", [])) or "(new)"
    lines = [name, op["name"]]
    if op["name"] == OPAQUE_CALL:
        lines.append(op["attributes"]["target"]["str"])
    elif op["name"] == JIT_OP:  # the outlined function it runs
        lines.append("@" + op["attributes"]["callee"]["symbol"])
    else:
        attrs = [f"{k}={text}" for k, v in op["attributes"].items()
                 if (text := _attribute_text(v)) is not None]
        if attrs:
            lines.append(", ".join(attrs))
    lines += [type_text(r["type"]) for r in op["results"]]
    return "\n".join(lines) + "\n"


def _style(op_name: str) -> str:
    if op_name == JIT_OP:
        return _JIT
    if is_fused_op(op_name):
        return _FUSED
    return _OPAQUE if op_name == OPAQUE_CALL else _PLAIN


def function_dot(function: dict[str, Any], argument_names: Sequence[str] = (),
                 input_names: Mapping[str, str] | None = None) -> str:
    """The dot graph of one function of the JSON form. `argument_names`
    names its arguments in order (else %argN); `input_names` adds a
    parameter's name to the argument of that name."""
    input_names = input_names or {}
    lines = [f"digraph {_quote(function['name'])} {{",
             '  node [shape=box, fontname="monospace", fontsize=10];',
             '  edge [color="#616161"];', *_LEGEND]
    source: dict[int, tuple[str, int, int]] = {}  # value id -> (node, result, results)
    for index, argument in enumerate(function["arguments"]):
        name = argument_names[index] if index < len(argument_names) else f"%arg{index}"
        # A parameter by its module path; its FX name (the .mlir's) on hover.
        label = input_names.get(name, name)
        node = f"arg{index}"
        lines.append(f"  {node} [label={_quote(label + chr(10) + type_text(argument['type']))},"
                     f" tooltip={_quote(name)}, {_INPUT}];")
        source[argument["id"]] = (node, 0, 1)
    for index, op in enumerate(function["ops"]):
        node = f"op{index}"
        lines.append(f"  {node} [label={_quote(_op_label(op))}, {_style(op['name'])}];")
        for operand in op["operands"]:
            lines.append(_edge(source[operand], node))
        for result_index, result in enumerate(op["results"]):
            source[result["id"]] = (node, result_index, len(op["results"]))
    lines.append('  output [shape=ellipse, style=filled, fillcolor="#e8f5e9"];')
    for value in function["returns"]:
        lines.append(_edge(source[value], "output"))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _edge(source: tuple[str, int, int], target: str) -> str:
    # Only a multi-result op's edges are labelled: labels slow dot's layout.
    node, result, results = source
    label = f" [label={_quote(f'#{result}')}, fontsize=8]" if results > 1 else ""
    return f"  {node} -> {target}{label};"


def module_dot(module_json: dict[str, Any], func_name: str, gm: Any,
               input_names: Mapping[str, str]) -> str:
    """The op graph of the function `func_name`, its arguments named after
    the placeholders of `gm`, the FX graph it was imported from."""
    (function,) = [f for f in module_json["functions"] if f["name"] == func_name]
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    return function_dot(function, placeholders, input_names)
