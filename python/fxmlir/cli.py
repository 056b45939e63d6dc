"""The `fxmlir` command (also `python -m fxmlir`) and the `fxmlir-opt` shim.

    fxmlir report DUMP_DIR        the round trips of the dumps as a table
                                  (--html DIR: as one HTML page per run, in DIR)
    fxmlir show GRAPH [--svg]     a stage's op graph: its .dot, or rendered to SVG
    fxmlir explain SCRIPT [ARGS]  run a script through fxmlir; why sites did not fuse
    fxmlir passes                 the passes and the stages that run them

Commands import torch only when they need it (explain). A bad path, an empty
or corrupt file, or a missing tool is one line on stderr naming it and what
is wrong, and exit status 2; `report` skips a run folder whose index cannot be
read, with a note on stderr, and reports the others.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from fxmlir._version import SUPPORTED_TORCH, __version__

OPT = Path(__file__).with_name("fxmlir-opt")


def opt() -> None:
    """`fxmlir-opt` on PATH: runs the binary shipped in the package."""
    os.execv(OPT, [str(OPT), *sys.argv[1:]])


def _report(args: argparse.Namespace) -> int:
    from fxmlir.report import report

    if args.html is not None:
        from fxmlir.report_html import write_pages

        pages, skipped = write_pages(Path(args.dump_dir), Path(args.html))
        # The pages' paths, as `show --svg` prints its SVG's.
        output = "\n".join(map(str, pages))
    else:
        output, skipped = report(Path(args.dump_dir))
    if not output:  # no run could be read: each is an error
        for why in skipped:
            print(f"fxmlir report: {why}", file=sys.stderr)
        return ERROR
    for why in skipped:
        print(f"fxmlir report: skipped {why}", file=sys.stderr)
    print(output)
    return 0


def _dot_of(graph: Path) -> tuple[str, Path]:
    """The dot text of GRAPH (a stage folder, a .dot or a .mlir file) and
    the .dot path it stands for."""
    from fxmlir.report import read_text

    if graph.is_dir():
        graph = graph / "graph.dot"
    if graph.suffix not in (".dot", ".mlir"):
        raise ValueError(f"{graph}: expected a dump's stage folder, a .dot or a .mlir file")
    text = read_text(graph)
    if not text.strip():
        raise ValueError(f"{graph}: empty file")
    if graph.suffix == ".dot":
        return text, graph
    from fxmlir import _C
    from fxmlir.op_graph_dot import function_dot

    try:
        module = _C.Context().parse(text, str(graph))
    except _C.Error as e:
        raise ValueError(f"{graph}: not a valid fxmlir module: "
                         + " ".join(str(e).split())) from e
    functions = json.loads(module.to_json())["functions"]
    if not functions:
        raise ValueError(f"{graph}: no function in the module")
    return function_dot(functions[0]), graph.with_suffix(".dot")


def _show(args: argparse.Namespace) -> int:
    dot, path = _dot_of(Path(args.graph))
    if not args.svg:
        sys.stdout.write(dot)
        return 0
    if shutil.which("dot") is None:
        raise UsageError(f"graphviz's `dot` is not installed, so {path} cannot be rendered; "
                         "install graphviz (e.g. apt-get install graphviz) or open the .dot "
                         "file in any Graphviz viewer")
    svg = Path(args.output) if args.output else path.with_suffix(".svg")
    try:
        subprocess.run(["dot", "-Tsvg", "-o", str(svg)], input=dot, text=True, check=True,
                       capture_output=True)
    except subprocess.CalledProcessError as e:
        svg.unlink(missing_ok=True)
        why = " ".join(e.stderr.split()) or f"exit status {e.returncode}"
        raise UsageError(f"{path}: graphviz's dot could not render it: {why}") from e
    print(svg)
    return 0


def _explain(args: argparse.Namespace) -> int:
    from fxmlir.explain import format_sites, run_script

    script = Path(args.script)
    if not script.exists():
        raise UsageError(f"{script}: no such file")
    sites = run_script(args.script, args.args)
    print(format_sites(sites))
    return 0


def _unparsable(error: str) -> str:
    """What is wrong with a text the core cannot parse, from its error: the
    core's "truncated: ..." when it ran out of text inside a function, else
    the first error itself."""
    truncated = re.search(r"^truncated: .*$", error, re.MULTILINE)
    if truncated is not None:
        return truncated[0]
    match = re.search(r":(\d+):(\d+): error: (.*)", error)
    if match is None:
        return "not MLIR the core can parse"
    return f"not MLIR the core can parse (line {match[1]}:{match[2]}: {match[3]})"


def _region(args: argparse.Namespace) -> int:
    from fxmlir import _C
    from fxmlir.report import read_text

    path = Path(args.mlir)
    text = read_text(path)
    if not text.strip():
        raise ValueError(f"{path}: empty file")
    try:
        module = _C.Context().parse(text, str(path))
    except _C.Error as e:
        raise ValueError(f"{path}: {_unparsable(str(e))}") from e
    regions = {region.name: region for region in module.jit_regions()}
    if args.function is None:
        print("\n".join(regions) if regions else f"{args.mlir}: no JIT region")
        return 0
    if args.function not in regions:
        raise UsageError(f"{args.mlir}: no JIT region @{args.function}; its regions: "
                         f"{', '.join(regions) or 'none'}")
    print(regions[args.function].text, end="")
    return 0


def _repro(args: argparse.Namespace) -> int:
    script = Path(args.folder) / "repro.py"
    if not script.is_file():
        raise UsageError(f"{args.folder}: no repro.py (a failed round trip's folder has one: "
                         "the FallbackWarning names it)")
    return subprocess.run([sys.executable, str(script)]).returncode


def _passes(_: argparse.Namespace) -> int:
    import fxmlir.passes

    print(fxmlir.passes.describe())
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="fxmlir", description=__doc__.split("\n\n")[0])
    main.add_argument("--version", action="version",
                      version=f"fxmlir {__version__} (supports torch {SUPPORTED_TORCH})")
    commands = main.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="the round trips of a dump folder as a table")
    report.add_argument("dump_dir", help="FXMLIR_DUMP_DIR, or one run folder in it")
    report.add_argument("--html", metavar="DIR",
                        help="write the report as one self-contained HTML page per run into "
                             "DIR (DIR/<run>.html; DIR/index.html links them), and print "
                             "their paths instead of the table")
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
    region = commands.add_parser(
        "region", help="the JIT regions of a dumped .mlir file, or one region's function "
                       "alone (the input `fxmlir-opt --fxmlir-jit-cpu` lowers)")
    region.add_argument("mlir", help="a dumped .mlir file (final.mlir)")
    region.add_argument("function", nargs="?", help="a region's function, e.g. jit_add_mul")
    region.set_defaults(run=_region)
    repro = commands.add_parser(
        "repro", help="run a failed round trip's repro.py: the graph's round trip again")
    repro.add_argument("folder", help="the stage folder a FallbackWarning names")
    repro.set_defaults(run=_repro)
    passes = commands.add_parser("passes", help="the passes and the stages that run them")
    passes.set_defaults(run=_passes)
    return main


class UsageError(Exception):
    """A bad argument or missing tool: one line naming it, exit status 2."""


# The exit status of every error a command reports (argparse's too).
ERROR = 2


def main(argv: list[str] | None = None) -> int:
    from fxmlir.report import error_text

    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as e:
        print(f"fxmlir {args.command}: {e}", file=sys.stderr)
    except (OSError, ValueError) as e:
        if args.command == "explain":  # the script's own errors keep their traceback
            raise
        print(f"fxmlir {args.command}: {error_text(e)}", file=sys.stderr)
    return ERROR
