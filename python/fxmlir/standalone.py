"""A GraphModule as a Python script that runs on its own (the dumps'
fx_before.py and fx_after.py): the graph's code as a module class, the
imports its code needs, and random inputs of the recorded shapes.

Tensor attributes (constants) get random values of their shape: the script
reproduces the computation, not the numbers of the training run.
"""

from __future__ import annotations

import math
import types
from typing import Any

import torch
import torch.fx as fx
from torch.utils import _pytree as pytree


def _hint(value: Any) -> Any:
    """A concrete int for a symbolic size (its hint)."""
    if isinstance(value, torch.SymInt):
        hint = value.node.hint
        return int(hint) if hint is not None else 2
    return value


def _tensor_expr(tensor: torch.Tensor) -> str:
    shape = tuple(_hint(d) for d in tensor.shape)
    make = "randn" if tensor.dtype.is_floating_point or tensor.dtype.is_complex else "zeros"
    return f"torch.{make}({shape}, dtype={tensor.dtype}, device={str(tensor.device)!r})"


def _value_expr(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return _tensor_expr(value)
    value = _hint(value)
    if isinstance(value, (int, float, bool)) or value is None:
        return repr(value)
    return f"None  # {type(value).__name__} not reproducible"


def _import_line(name: str, value: Any) -> str:
    """How the script binds a global the graph's code uses."""
    if isinstance(value, types.ModuleType):
        return f"import {value.__name__} as {name}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{name} = float({str(value)!r})"
    if value is type(None):
        return f"{name} = type(None)"
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
    if module and qualname and "<" not in qualname:
        top, _, rest = qualname.partition(".")
        binding = f"from {module} import {top}"
        return binding + (f"\n{name} = {top}.{rest}" if rest else
                          ("" if top == name else f" as {name}"))
    return f"{name} = None  # {value!r} cannot be imported"


def _plain_code(gm: fx.GraphModule) -> fx.graph.PythonCode:
    """The graph's code with the default codegen (no pytree in/out specs,
    which refer to attributes of the original module)."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for node in gm.graph.nodes:
        env[node] = graph.node_copy(node, lambda n: env[n])
    return graph.python_code(root_module="self")


def _class_source(gm: fx.GraphModule, class_name: str, imports: dict[str, str],
                  classes: list[str]) -> None:
    code = _plain_code(gm)
    for name, value in code.globals.items():
        if name != "__builtins__":
            imports.setdefault(name, _import_line(name, value))
    init = []
    targets = sorted({n.target for n in gm.graph.nodes if n.op == "get_attr"})
    for target in targets:
        value: Any = gm
        for part in target.split("."):
            value = getattr(value, part)
        owner, _, leaf = target.rpartition(".")
        where = f"self.{owner}" if owner else "self"
        if isinstance(value, fx.GraphModule):
            body = f"{class_name}_{target.replace('.', '_')}"
            _class_source(value, body, imports, classes)
            init.append(f"setattr({where}, {leaf!r}, {body}())")
        else:
            init.append(f"setattr({where}, {leaf!r}, {_value_expr(value)})")
    body_lines = ["    def __init__(self) -> None:", "        super().__init__()",
                  *(f"        {line}" for line in init)]
    forward = [f"    {line}" if line.strip() else "" for line in code.src.strip().splitlines()]
    classes.append("\n".join([f"class {class_name}(torch.nn.Module):", *body_lines, "",
                              *forward, ""]))


def standalone_source(gm: fx.GraphModule, title: str, when: str,
                      doc: list[str] | None = None, main: list[str] | None = None) -> str:
    """The script of `gm` (graph `title`, `when` its round trip); `doc` and
    `main` replace the docstring's body and the `__main__` block, which
    prints what the graph returns on example_inputs()."""
    imports: dict[str, str] = {"torch": "import torch"}
    classes: list[str] = []
    _class_source(gm, "Graph", imports, classes)
    inputs = [_value_expr(pytree.tree_map(_hint, n.meta.get("val", n.meta.get("example_value"))))
              for n in gm.graph.nodes if n.op == "placeholder"]
    uses_fxmlir = any(str(getattr(n.target, "namespace", "")) == "fxmlir"
                      for n in gm.graph.nodes if n.op == "call_function")
    doc = doc or ["Runs on its own: `python <this file>` calls the graph on random inputs",
                  "of the recorded shapes and prints what it returns."]
    header = [f'"""fxmlir: graph {title} {when} its round trip.', "", *doc[:-1],
              f'{doc[-1]}"""', ""]
    if uses_fxmlir:
        imports["fxmlir.ops"] = "import fxmlir.ops  # noqa: F401 - registers torch.ops.fxmlir.*"
    main = main or ["    outputs = Graph()(*example_inputs())",
                    "    for index, output in enumerate(torch.utils._pytree.tree_leaves(outputs)):",
                    "        shown = tuple(output.shape) if isinstance(output, torch.Tensor) "
                    "else output",
                    '        print(f"output {index}: {shown}")']
    main = ["def example_inputs() -> list:",
            "    return [", *(f"        {expr}," for expr in inputs), "    ]", "", "",
            'if __name__ == "__main__":', *main, ""]
    # Imports first, then the bindings of values that are no import.
    lines = sorted(set(imports.values()),
                   key=lambda line: (not line.startswith(("import ", "from ")), line))
    return "\n".join([*header, *lines, "", "",
                      "\n\n".join(classes), "", *main])


# compare.py, beside a stage's fx_before.py and fx_after.py. Its headline is
# the largest relative difference against assert_close's tolerance: the
# absolute one alone read as a failure wherever values are large (1.46e+13
# where every relative difference was tiny).
COMPARE_SOURCE = '''"""fxmlir: runs fx_before.py's and fx_after.py's graphs on the same seeded
inputs and prints how far apart each output is: `python compare.py`.
The headline is the largest relative difference, |after - before| /
(|before| + atol / rtol), against the rtol of torch.testing.assert_close
for the output's dtype: it is at most rtol exactly where assert_close
passes (values below atol / rtol count as that large: atol rules there).
PASS or FAIL says whether every output passes; FAIL exits with status 1.
Random ops draw the same seed in both, but fused dropouts draw their own
masks unless the run had eager_random."""

import importlib.util
import pathlib
import sys

import torch
from torch.utils import _pytree as pytree

# (rtol, atol) per dtype: torch.testing.assert_close's defaults. Other
# floating dtypes (float8) must match exactly, as there.
TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


def load(name: str):
    path = pathlib.Path(__file__).with_name(name)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, inputs: list) -> list:
    torch.manual_seed(0)  # the same constants and random draws in both
    graph = module.Graph()
    # Each graph gets copies: a graph may update its inputs in place.
    copies = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    return pytree.tree_leaves(graph(*copies))


def differences(after: torch.Tensor, before: torch.Tensor, rtol: float,
                atol: float) -> tuple[float, float]:
    """The largest relative and absolute differences of `after` from `before`."""
    a, b = after.double(), before.double()
    # Equal infinities and NaNs in the same places are no difference.
    same = (a == b) | (a.isnan() & b.isnan())
    diff = torch.where(same, 0.0, (a - b).abs()).nan_to_num(torch.inf, torch.inf)
    floor = atol / rtol if rtol else torch.finfo(torch.float64).tiny
    # A difference from a NaN or infinity is infinitely large (inf / inf is NaN).
    relative = torch.where(diff == 0, 0.0, diff / (b.abs() + floor))
    relative = relative.nan_to_num(torch.inf, torch.inf)
    return float(relative.max()), float(diff.max())


if __name__ == "__main__":
    before, after = load("fx_before.py"), load("fx_after.py")
    torch.manual_seed(0)
    inputs = before.example_inputs()
    expected, got = run(before, inputs), run(after, inputs)
    passed = len(expected) == len(got)
    if not passed:
        print(f"{len(expected)} outputs before, {len(got)} after")
    worst = None  # (relative / rtol, output index, dtype)
    relatives, absolutes = {}, {}
    for index, (b, a) in enumerate(zip(expected, got)):
        if not isinstance(b, torch.Tensor) or not b.is_floating_point() or b.numel() == 0:
            print(f"output {index}: {b if not isinstance(b, torch.Tensor) else tuple(b.shape)}")
            continue
        if not isinstance(a, torch.Tensor) or a.shape != b.shape:
            shown = tuple(a.shape) if isinstance(a, torch.Tensor) else a
            print(f"output {index}: {tuple(b.shape)} before, {shown} after: FAIL")
            passed = False
            continue
        rtol, atol = TOLERANCES.get(b.dtype, (0.0, 0.0))
        relatives[index], absolutes[index] = differences(a, b, rtol, atol)
        ok = relatives[index] <= rtol
        passed = passed and ok
        # Outputs of different dtypes rank by how much of their tolerance they use.
        score = relatives[index] / rtol if rtol else (0.0 if ok else float("inf"))
        if worst is None or score > worst[0]:
            worst = (score, index, b.dtype)
        print(f"output {index}: {tuple(b.shape)} {b.dtype}, relative difference "
              f"{relatives[index]:.3g} (rtol {rtol:g}), max |after - before| = "
              f"{absolutes[index]:.3g}: {'ok' if ok else 'FAIL'}")
    verdict = "PASS" if passed else "FAIL"
    if worst is None:
        print(f"largest relative difference: none, no floating-point outputs: {verdict}")
    else:
        _, index, dtype = worst
        rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
        print(f"largest relative difference: {relatives[index]:.3g} (output {index}, "
              f"{dtype}; tolerance rtol {rtol:g}, atol {atol:g}): {verdict}")
        largest = max(absolutes, key=absolutes.get)
        print(f"largest absolute difference: {absolutes[largest]:.3g} (output {largest})")
    sys.exit(0 if passed else 1)
'''
