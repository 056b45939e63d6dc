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


# compare.py, beside a stage's fx_before.py and fx_after.py.
COMPARE_SOURCE = '''"""fxmlir: runs fx_before.py's and fx_after.py's graphs on the same seeded
inputs and prints how far apart each output is: `python compare.py`.
Random ops draw the same seed in both, but fused dropouts draw their own
masks unless the run had eager_random."""

import importlib.util
import pathlib

import torch
from torch.utils import _pytree as pytree


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


if __name__ == "__main__":
    before, after = load("fx_before.py"), load("fx_after.py")
    torch.manual_seed(0)
    inputs = before.example_inputs()
    largest = 0.0
    for index, (a, b) in enumerate(zip(run(before, inputs), run(after, inputs))):
        if not isinstance(a, torch.Tensor) or not a.is_floating_point() or a.numel() == 0:
            print(f"output {index}: {a if not isinstance(a, torch.Tensor) else tuple(a.shape)}")
            continue
        diff = float((a.double() - b.double()).abs().max())
        scale = float(a.double().abs().max()) or 1.0
        largest = max(largest, diff)
        print(f"output {index}: {tuple(a.shape)} {a.dtype}, max |after - before| = {diff:.3g} "
              f"(relative {diff / scale:.3g})")
    print(f"largest difference: {largest:.3g}")
'''
