"""The `fxmlir` command (also `python -m fxmlir`) and the `fxmlir-opt` shim.

    fxmlir report DUMP_DIR        the round trips of the dumps as a table
    fxmlir show GRAPH [--svg]     a stage's op graph: its .dot, or rendered to SVG
    fxmlir explain SCRIPT [ARGS]  run a script through fxmlir; why sites did not fuse
    fxmlir passes                 the passes and the stages that run them

Commands import torch only when they need it (explain).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

OPT = Path(__file__).with_name("fxmlir-opt")


def opt() -> None:
    """`fxmlir-opt` on PATH: runs the binary shipped in the package."""
    os.execv(OPT, [str(OPT), *sys.argv[1:]])


def _report(args: argparse.Namespace) -> int:
    from fxmlir.report import report

    print(report(Path(args.dump_dir)))
    return 0


def _dot_of(graph: Path) -> tuple[str, Path]:
    """The dot text of GRAPH (a stage folder, a .dot or a .mlir file) and
    the .dot path it stands for."""
    if graph.is_dir():
        graph = graph / "graph.dot"
    if graph.suffix == ".dot":
        return graph.read_text(), graph
    if graph.suffix == ".mlir":
        from fxmlir import _C
        from fxmlir.dot import function_dot

        module = _C.Context().parse(graph.read_text(), str(graph))
        (function, *_) = json.loads(module.to_json())["functions"]
        return function_dot(function), graph.with_suffix(".dot")
    raise ValueError(f"{graph}: expected a dump's stage folder, a .dot or a .mlir file")


def _show(args: argparse.Namespace) -> int:
    dot, path = _dot_of(Path(args.graph))
    if not args.svg:
        sys.stdout.write(dot)
        return 0
    if shutil.which("dot") is None:
        print(f"fxmlir show: graphviz's `dot` is not installed, so {path} cannot be "
              "rendered; install graphviz (e.g. apt-get install graphviz) or open the .dot "
              "file in any Graphviz viewer", file=sys.stderr)
        return 1
    svg = Path(args.output) if args.output else path.with_suffix(".svg")
    subprocess.run(["dot", "-Tsvg", "-o", str(svg)], input=dot, text=True, check=True)
    print(svg)
    return 0


def _explain(args: argparse.Namespace) -> int:
    from fxmlir.explain import format_sites, run_script

    sites = run_script(args.script, args.args)
    print(format_sites(sites))
    return 0


def _passes(_: argparse.Namespace) -> int:
    import fxmlir.passes

    print(fxmlir.passes.describe())
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="fxmlir", description=__doc__.split("\n\n")[0])
    commands = main.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="the round trips of a dump folder as a table")
    report.add_argument("dump_dir", help="FXMLIR_DUMP_DIR, or one run folder in it")
    report.set_defaults(run=_report)
    show = commands.add_parser("show", help="a stage's op graph as dot, or rendered to SVG")
    show.add_argument("graph", help="a dump's stage folder, a .dot or a .mlir file")
    show.add_argument("--svg", action="store_true", help="render with graphviz's dot")
    show.add_argument("-o", "--output", help="the SVG file (default: beside the graph)")
    show.set_defaults(run=_show)
    explain = commands.add_parser(
        "explain", help="run a script with torch.compile routed to fxmlir; for each site "
                        "that did not fuse, the closest pattern and the check it failed")
    explain.add_argument("script")
    explain.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    explain.set_defaults(run=_explain)
    passes = commands.add_parser("passes", help="the passes and the stages that run them")
    passes.set_defaults(run=_passes)
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "explain":  # the script's own errors keep their traceback
        return args.run(args)
    try:
        return args.run(args)
    except (OSError, ValueError) as e:
        print(f"fxmlir {args.command}: {e}", file=sys.stderr)
        return 1
