"""python -m benchmarks --device cpu|cuda [--only ops,linear,mlp,gpt2,llama,llama1,bert,overhead,roundtrip] [--dtypes f32,bf16] [--threads N] [--profile FILE]

Runs the suite and writes the device's section of docs/benchmarks.md, its
raw numbers to docs/benchmarks-<device>.json (a run with --only or --dtypes
replaces the rows it measured and keeps the others') and a chart,
docs/benchmarks-<device>.png, where matplotlib is installed. Each section is
written as soon as it is measured, so a run stopped midway keeps what it
finished."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch._functorch.config
import torch._inductor.config

from benchmarks import outline, report, suites, timing

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("ops", "linear", "mlp", "gpt2", "llama", "llama1", "bert", "overhead",
            "roundtrip")


RESULT_KEYS = ("ops", "linear", "mlp", "gpt2", "llama", "llama1", "bert", "overhead")


def _save(path: Path, run: dict[str, Any]) -> None:
    data = {k: v for k, v in run.items() if k not in ("sizes", "chart")}
    for key in RESULT_KEYS:
        if key in data:
            data[key] = [r.to_json() for r in data[key]]
    path.write_text(json.dumps(data, indent=1) + "\n")


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    for key in RESULT_KEYS:
        if key in data:
            data[key] = [suites.Result.from_json(r) for r in data[key]]
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=sorted(suites.SIZES), required=True)
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma list of {', '.join(SECTIONS)}")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--dtypes", default=",".join(suites.DTYPES),
                        help=f"comma list of {', '.join(suites.DTYPES)}: the cases measured")
    parser.add_argument("--profile", type=Path,
                        help="append torch.profiler's per-op table of each training step "
                             f"({', '.join(suites.PROFILED)}) to this file")
    parser.add_argument("--threads", type=int,
                        help="torch's CPU threads (default: torch's choice); on a machine "
                             "shared with other jobs, fewer threads than cores keep OpenMP "
                             "from waiting for a busy core")
    args = parser.parse_args(argv)
    # Made now, not when the run has measured everything and writes.
    for path in (args.out, args.profile):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
    if args.threads is not None:
        if args.threads < 1:
            parser.error("--threads must be at least 1")
        torch.set_num_threads(args.threads)
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        parser.error(f"--only: unknown {', '.join(sorted(only - set(SECTIONS)))}")
    dtypes = tuple(args.dtypes.split(","))
    if set(dtypes) - set(suites.DTYPES):
        parser.error(f"--dtypes: unknown {', '.join(sorted(set(dtypes) - set(suites.DTYPES)))}; "
                     f"accepted: {', '.join(suites.DTYPES)}")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: CUDA is not available")

    import transformers

    # "First call" is a cold compile: no Inductor, AOTAutograd or fxmlir JIT
    # artifacts from earlier processes (kernels, graphs, compiled regions).
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="fxmlir-bench-")
    os.environ["FXMLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="fxmlir-bench-jit-")
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    torch._dynamo.config.cache_size_limit = 64
    sizes = suites.SIZES[args.device].only(dtypes)
    sizes_note = ("the issue's sizes" if args.device == "cuda" else
                  "smaller than the CUDA tables' (x [16384, 4096], 8192 tokens for linear + "
                  "GELU, 16x512 for the MLP block, 8x512 for GPT-2) so that the suite "
                  "finishes in minutes on this CPU; the tanh-GELU MLP rows are CUDA's only "
                  "(no GEMM epilogue on CPU)")
    # A run updates the sections it measures; the others come from the
    # device's earlier runs (their numbers in benchmarks-<device>.json).
    raw = args.out.with_name(f"benchmarks-{args.device}.json")
    run = _load(raw) if raw.exists() else {"runs": []}
    command = "python -m benchmarks " + shlex.join(sys.argv[1:] if argv is None else argv)
    this = {"command": command, "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "commit": report.commit(), "machine": report.machine(args.device), "torch": torch.__version__,
            "transformers": transformers.__version__}
    run["runs"] = [r for r in run["runs"] if r["command"] != command] + [this]
    run |= {"sizes": sizes, "sizes_note": sizes_note}
    print(f"{this['machine']}; torch {this['torch']}", flush=True)
    run["copy_gbps"] = timing.copy_gbps(args.device, sizes.copy_bytes, sizes.warmup, sizes.reps)
    print(f"copy: {run['copy_gbps']:.1f} GB/s", flush=True)
    kernels = {"ops": suites.fused_ops, "linear": suites.linear_gelu_results}
    steps = {"mlp": suites.mlp_results, "gpt2": suites.gpt2_results,
             "llama": suites.llama_results,
             "llama1": suites.llama_batch_of_one_results, "bert": suites.bert_results,
             "overhead": suites.overhead_results}
    for key in (k for k in SECTIONS if k in only):
        if key in kernels:
            rows = kernels[key](args.device, sizes)
        elif key in steps:
            rows = steps[key](args.device, sizes, args.profile)
        else:
            run["roundtrip"] = suites.round_trip_results()
            run["outline"] = outline.results()
            rows = None
        if rows is not None:
            for row in rows:
                row.copy_gbps = run["copy_gbps"]
                if args.device == "cpu":  # a row per thread count
                    row.threads = torch.get_num_threads()
            run[key] = _merged(run.get(key, []), rows)
        _write(args, raw, run)
        print(f"{key}: done", flush=True)
    print(report.section(args.device, run))
    return 0


def _merged(old: list[suites.Result], new: list[suites.Result]) -> list[suites.Result]:
    """`new` in place of the rows of `old` with its cases, dtypes and thread
    counts, in order of case, dtype and threads."""
    def key(r: suites.Result) -> tuple[str, str, int]:
        return r.case, r.dtype, r.threads or 0

    fresh = {key(r) for r in new}
    merged = [r for r in old if key(r) not in fresh] + new
    cases = list(dict.fromkeys((r.case, r.dtype) for r in merged))
    return sorted(merged, key=lambda r: (cases.index((r.case, r.dtype)), r.threads or 0))


def _write(args: argparse.Namespace, raw: Path, run: dict[str, Any]) -> None:
    _save(raw, run)
    png = args.out.with_name(f"benchmarks-{args.device}.png")
    run["chart"] = png.name if report.chart(png, args.device, run) else None
    report.write(args.out, args.device, report.section(args.device, run))


if __name__ == "__main__":
    sys.exit(main())
