"""python -m benchmarks.regions [--models mlp,gpt2,llama,llama1,bert,overhead] [--dtypes f32,bf16] [--threads 1,2] [--write FILE]

The cost model's verdicts, checked one JIT region at a time: every region
the outline pass finds in a model's training step without its cost model
(on each round trip's graph just before outlining, from a dump) is timed as
one `mlir_jit` call and as its ATen ops one by one, alternating, on random
inputs of its types, each side run as a round-tripped graph's body runs
(a graph program, fxmlir/graph_program.py, where the build has one; else
the generated Python, fxmlir/direct_calls.py); beside it, whether the cost
model keeps it. A
kept region slower than its ops, or a refused one faster, is a wrong
verdict. "llama1" is the LLaMA-style step at a batch of one (the suite's
llama1 section: its regions split their rows along the tokens); "overhead"
the suite's per-step overhead model (LLaMA-style, 32 wide, 1 x 8 tokens),
where a call's overhead is all a region saves.
Prints a markdown table per thread count, model and dtype (`--write`: to a
file too, docs/regions.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
import operator
import re
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import torch
import torch.fx as fx

import fxmlir
import fxmlir.jit_ops  # noqa: F401  (loads torch.ops.fxmlir.mlir_jit)
from benchmarks import report, suites, timing
from fxmlir import _C, aten_calls, direct_calls, graph_program, mlir_attrs, schema

_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
           "si64": torch.int64, "i64": torch.int64, "si32": torch.int32, "i1": torch.bool}
_TENSOR = re.compile(r"tensor<((?:\d+x)*)(\w+), #fxmlir\.device<\"cpu\">>")
_OUTLINE = "fxmlir-outline-jit-regions"
MODELS = ("mlp", "gpt2", "llama", "llama1", "bert", "overhead")


def _step(name: str, dtype: str) -> tuple[Callable[[], Any], torch.nn.Module]:
    """The suite's training step of `name`, compiled by fxmlir (its dumps
    land where the caller's backend says), and the model."""
    autocast = dtype == "bf16"
    if name == "mlp":
        model = suites.mlp_block("none").to(dtype=suites.DTYPES[dtype])
        x = torch.randn(*suites.SIZES["cpu"].mlp_tokens, 1024, dtype=suites.DTYPES[dtype])
        return (lambda net: net(x).backward(torch.randn_like(x))), model
    sizes = suites.SIZES["cpu"]
    if name == "overhead":
        vocab = suites.OVERHEAD_VOCAB
        model = suites.tiny_llama_model(vocab)
        ids = torch.randint(0, vocab, suites.OVERHEAD_TOKENS)
    else:
        family = "llama" if name == "llama1" else name
        build = {"gpt2": suites.gpt2_model, "llama": suites.llama_model,
                 "bert": suites.bert_model}[family]
        vocab = getattr(sizes, f"{family}_vocab")
        model = build(vocab)
        tokens = suites.BATCH_OF_ONE_TOKENS["cpu"] if name == "llama1" else sizes.gpt2_tokens
        ids = torch.randint(0, vocab, tokens)

    def step(net: Callable[..., Any]) -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = net(input_ids=ids, labels=ids).loss
        loss.backward()

    return step, model


def _before_outline(dump: Path) -> list[Path]:
    """Each round trip's snapshot just before the outline pass."""
    snapshots = []
    for stage in sorted(p for p in dump.rglob("*") if p.is_dir()):
        files = sorted(stage.glob("[0-9][0-9]-*.mlir"))
        for before, after in zip(files, files[1:]):
            if after.name.endswith(f"-{_OUTLINE}.mlir"):
                snapshots.append(before)
    return snapshots


def _body(text: str, name: str) -> str:
    """A region's text without its name: the same region outlined twice."""
    return text.replace(f"@{name}(", "@region(")


def _candidates(snapshot: Path) -> list[tuple[str, str, bool]]:
    """(name, text, kept by the cost model) of each region outlining finds."""
    context = _C.Context()
    module = context.parse(snapshot.read_text(), str(snapshot))
    every, kept = module.clone(), module.clone()
    every.outline_jit_regions(min_ops=2, cost_model=False)
    kept.outline_jit_regions(min_ops=2, cost_model=True)
    kept_bodies = {_body(r.text, r.name) for r in kept.jit_regions()}
    return [(r.name, r.text, _body(r.text, r.name) in kept_bodies)
            for r in every.jit_regions() if r.device_type == "cpu"]


def _inputs(text: str, name: str) -> list[torch.Tensor]:
    """Random inputs of the region's argument types (integers zero: valid
    indices and targets)."""
    signature = re.search(rf"@{re.escape(name)}\((.*?)\) ->", text, re.S).group(1)
    inputs = []
    for dims, element in _TENSOR.findall(signature):
        shape = [int(d) for d in dims.split("x") if d]
        dtype = _DTYPES[element]
        inputs.append(torch.randn(shape).to(dtype) if dtype.is_floating_point
                      else torch.zeros(shape, dtype=dtype))
    return inputs


def _runner(graph: fx.Graph) -> Callable[[list[torch.Tensor]], list[Any]]:
    """`graph` run as a round-tripped graph's body runs."""
    gm = fx.GraphModule(torch.nn.Module(), graph)
    program = graph_program.forward(gm)
    if program is not None:
        run = program[0]
        return lambda args: list(run(list(args)))
    forward = direct_calls.forward(gm.code, type(gm).forward.__globals__, gm)
    return lambda args: list(forward(*args))


def _region(text: str, name: str, inputs: int) -> Callable[[list[torch.Tensor]], list[Any]]:
    """The region as one `mlir_jit` call of a graph."""
    graph = fx.Graph()
    arguments = [graph.placeholder(f"arg{i}") for i in range(inputs)]
    graph.output(graph.call_function(torch.ops.fxmlir.mlir_jit.default,
                                     (text, name, arguments)))
    return _runner(graph)


def _eager(text: str, name: str) -> Callable[[list[torch.Tensor]], list[Any]]:
    """The region's ops as ATen calls, one by one, as a round-tripped graph
    would run them."""
    module = _C.Context().parse(text, name)
    (function,) = [f for f in json.loads(module.to_json())["functions"] if f["name"] == name]
    graph = fx.Graph()
    values: dict[int, Any] = {a["id"]: graph.placeholder(f"arg{i}")
                              for i, a in enumerate(function["arguments"])}
    for op in function["ops"]:
        results = op["results"]
        if op["name"] == "fxmlir.none":
            values[results[0]["id"]] = None
            continue
        operands = [values[i] for i in op["operands"]]
        attributes = op["attributes"]
        if op["name"] == "fxmlir.call":  # an untyped ATen op: "aten::name.overload"
            namespace, _, qualified = attributes["target"]["str"].partition("::")
            packet, _, overload_name = qualified.partition(".")
            overload = getattr(getattr(getattr(torch.ops, namespace), packet),
                               overload_name or "default")
            args = tuple(mlir_attrs.decode(attributes["args"], operands))
            kwargs = {k: mlir_attrs.decode(v, operands)
                      for k, v in attributes["kwargs"]["dict"].items()}
        else:
            overload = schema.op_from_mlir_name(op["name"])
            if overload is None:
                raise ValueError(f"no ATen op for {op['name']}")
            args, kwargs = aten_calls.unbind_arguments(overload, operands, attributes)
        node = graph.call_function(overload, args, kwargs)
        returns = overload._schema.returns
        if len(returns) == 1 and not isinstance(returns[0].type, torch.ListType):
            values[results[0]["id"]] = node
            continue
        for index, result in enumerate(results):
            values[result["id"]] = graph.call_function(operator.getitem, (node, index))
    graph.output(tuple(values[i] for i in function["returns"]))
    return _runner(graph)


def measure(model: str, dtype: str, reps: int = 15) -> list[dict[str, Any]]:
    """Each region candidate of the model's step: its time both ways and
    the cost model's verdict."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    step, module = _step(model, dtype)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fxmlir-regions-") as dump:
        net = torch.compile(module, backend=fxmlir.backend(dump_dir=dump), dynamic=False)
        for _ in range(2):
            step(net)
            module.zero_grad(set_to_none=True)
        seen = set()
        for snapshot in _before_outline(Path(dump)):
            for name, text, kept in _candidates(snapshot):
                if _body(text, name) in seen:  # the same region in another graph
                    continue
                seen.add(_body(text, name))
                args = _inputs(text, name)
                try:
                    eager = _eager(text, name)
                    eager(args)
                    region = _region(text, name, len(args))
                except Exception as error:  # noqa: BLE001 - reported, not timed
                    rows.append({"region": name, "kept": kept, "error": str(error)})
                    continue
                times = timing.measure({
                    "region": lambda: region(args),
                    "ops": lambda: eager(args)}, "cpu", 3, reps)
                rows.append({"region": name, "kept": kept,
                             "region ms": times["region"].median,
                             "ops ms": times["ops"].median,
                             "graph": snapshot.parent.relative_to(dump).as_posix()})
    return rows


def _wrong(row: dict[str, Any]) -> bool:
    """A kept region slower than its ops, or a refused one at least as fast."""
    return (row["ops ms"] >= row["region ms"]) != row["kept"]


def _table(rows: list[dict[str, Any]]) -> str:
    lines = ["| region | graph | cost model | region ms | ATen ops ms | speedup | verdict |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        verdict = "keep" if row["kept"] else "refuse"
        if "error" in row:
            lines.append(f"| {row['region']} | | {verdict} | | | | not run: {row['error']} |")
            continue
        lines.append(f"| {row['region']} | {row['graph'].split('/', 1)[-1]} | {verdict} | "
                     f"{timing.format_ms(row['region ms'])} | {timing.format_ms(row['ops ms'])} | "
                     f"{row['ops ms'] / row['region ms']:.2f}x | "
                     f"{'**wrong**' if _wrong(row) else 'right'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mlp,gpt2,llama,llama1,bert",
                        help=f"comma list of {', '.join(MODELS)}")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--threads", default="1",
                        help="torch's CPU threads, a table each: 1 or 1,2")
    parser.add_argument("--write", type=Path, help="also write the tables to this markdown file")
    args = parser.parse_args(argv)
    try:
        threads = [int(n) for n in args.threads.split(",")]
    except ValueError:
        threads = []
    if not threads or min(threads) < 1:
        parser.error(f"--threads: thread counts of at least 1, comma-separated (1 or 1,2), "
                     f"got {args.threads!r}")
    models = args.models.split(",")
    if unknown := [m for m in models if m not in MODELS]:
        parser.error(f"--models: unknown {', '.join(map(repr, unknown))}; "
                     f"accepted: {', '.join(MODELS)}")
    command = "python -m benchmarks.regions " + shlex.join(sys.argv[1:] if argv is None else argv)
    out = [f"- `{command}`: {datetime.datetime.now():%Y-%m-%d %H:%M}, fxmlir commit "
           f"{report.commit()}, machine {report.machine('cpu', threads=False)}, "
           f"torch {torch.__version__}"]
    print(out[0], flush=True)
    for count in threads:
        torch.set_num_threads(count)
        for model in models:
            for dtype in args.dtypes.split(","):
                rows = measure(model, dtype)
                wrong = sum(1 for r in rows if "error" not in r and _wrong(r))
                section = (f"\n### {model} {dtype}, {count} thread{'s' * (count > 1)}: "
                           f"{len(rows)} regions, {wrong} wrong verdicts\n\n" + _table(rows))
                print(section, flush=True)
                out.append(section)
    if args.write:
        preamble = _PREAMBLE.format(source=report.source_link(args.write, "benchmarks/regions.py"))
        args.write.write_text(preamble + "\n".join(out) + "\n")


_PREAMBLE = """# JIT regions against their ATen ops

Written by `python -m benchmarks.regions --write FILE` ([benchmarks/regions.py](
{source})): every JIT region the outline pass finds in the suite's training
steps (its CPU sizes; "llama1": the LLaMA-style step at a batch of one, 1 x 256 tokens;
"overhead": the per-step overhead model, LLaMA-style 32 wide on 1 x 8 tokens) without its
cost model, timed as one `mlir_jit` call and as the ATen ops it replaces, one by one, each
side run as a round-tripped graph's body runs (a graph program), alternating, medians of 15
on random inputs of its types; "cost model" is whether the round trip keeps it. A verdict is
wrong where a kept region is slower than its ops or a refused one faster. Regions that
several graphs share are timed once.

"""


if __name__ == "__main__":
    main()
