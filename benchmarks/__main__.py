"""python -m benchmarks --device cpu|cuda [--only ops,linear,mlp,gpt2,llama,roundtrip] [--threads N]

Runs the suite and writes the device's section of docs/benchmarks.md, its
raw numbers to docs/benchmarks-<device>.json (a run with --only updates its
sections and keeps the others') and a chart, docs/benchmarks-<device>.png,
where matplotlib is installed."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch._functorch.config
import torch._inductor.config

from benchmarks import outline, report, suites, timing

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("ops", "linear", "mlp", "gpt2", "llama", "roundtrip")


def _machine(device: str) -> str:
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        return (f"{props.name}, {props.multi_processor_count} SMs, "
                f"{props.total_memory / 2**30:.0f} GiB; CUDA {torch.version.cuda}")
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {torch.get_num_threads()} torch threads"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


RESULT_KEYS = ("ops", "linear", "mlp", "gpt2", "llama")


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
    parser.add_argument("--threads", type=int,
                        help="torch's CPU threads (default: torch's choice); on a machine "
                             "shared with other jobs, fewer threads than cores keep OpenMP "
                             "from waiting for a busy core")
    args = parser.parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            parser.error("--threads must be at least 1")
        torch.set_num_threads(args.threads)
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        parser.error(f"--only: unknown {', '.join(sorted(only - set(SECTIONS)))}")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: CUDA is not available")

    import transformers

    # "First call" is a cold compile: no Inductor or AOTAutograd artifacts
    # from earlier processes (kernels, graphs).
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="fxmlir-bench-")
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    torch._dynamo.config.cache_size_limit = 64
    sizes = suites.SIZES[args.device]
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
            "commit": _commit(), "machine": _machine(args.device), "torch": torch.__version__,
            "transformers": transformers.__version__}
    run["runs"] = [r for r in run["runs"] if r["command"] != command] + [this]
    run |= {"sizes": sizes, "sizes_note": sizes_note}
    print(f"{this['machine']}; torch {this['torch']}", flush=True)
    run["copy_gbps"] = timing.copy_gbps(args.device, sizes.copy_bytes, sizes.warmup, sizes.reps)
    print(f"copy: {run['copy_gbps']:.1f} GB/s", flush=True)
    steps = {"ops": suites.fused_ops, "linear": suites.linear_gelu_results,
             "mlp": suites.mlp_results, "gpt2": suites.gpt2_results,
             "llama": suites.llama_results}
    for key, fn in steps.items():
        if key in only:
            run[key] = fn(args.device, sizes)
            print(f"{key}: done", flush=True)
    if "ops" in only:
        run["ops_copy_gbps"] = run["copy_gbps"]
    if "roundtrip" in only:
        run["roundtrip"] = suites.round_trip_results()
        run["outline"] = outline.results()
    _save(raw, run)
    png = args.out.with_name(f"benchmarks-{args.device}.png")
    run["chart"] = png.name if report.chart(png, args.device, run) else None
    text = report.section(args.device, run)
    report.write(args.out, args.device, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
