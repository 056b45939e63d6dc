"""python -m benchmarks.without_pass PASS [--device cpu|cuda] [--models gpt2,llama] [--dtype bf16|f32] [--reps N]

What one pass buys a training step: eager, fxmlir, and fxmlir with PASS
taken out of every stage (`passes="-PASS"`), side by side in one process,
warm, alternating, medians (benchmarks.timing.measure); beside each fxmlir
row, the calls a step makes of the ops that carry a step's host cost (from
torch.profiler: `_to_copy`, `mm`, `fxmlir::mlir_jit`, `fxmlir::cast_tensors`).
The models and sizes are the step tables' (benchmarks.suites: GPT-2 and the
LLaMA-style model, the device's tokens). Prints a markdown table.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

import torch

import fxmlir
from benchmarks import suites, timing

COUNTED = ("aten::_to_copy", "aten::mm", "fxmlir::mlir_jit", "fxmlir::cast_tensors")
MODELS = {"gpt2": (suites.gpt2_model, "gpt2_vocab"), "llama": (suites.llama_model, "llama_vocab")}


def calls_per_step(step: Callable[[], Any], device: str) -> dict[str, int]:
    """How many times one step calls each of COUNTED."""
    from torch.profiler import profile

    with profile() as prof:
        step()
        timing.synchronize(device)
    counts = {e.key: e.count for e in prof.key_averages()}
    return {name: counts.get(name, 0) for name in COUNTED}


def rows(pass_name: str, model: str, device: str, dtype: str, reps: int) -> list[str]:
    sizes = suites.SIZES[device]
    build, vocab_field = MODELS[model]
    vocab = getattr(sizes, vocab_field)
    torch._dynamo.reset()
    torch.manual_seed(0)
    net = build(vocab).to(device).train()
    ids = torch.randint(0, vocab, sizes.gpt2_tokens, device=device)
    params = list(net.parameters())
    impls = {"eager": net,
             "fxmlir": torch.compile(net, backend=fxmlir.backend(), dynamic=False),
             f"fxmlir -{pass_name}": torch.compile(
                 net, backend=fxmlir.backend(passes=f"-{pass_name}"), dynamic=False)}

    step = suites.lm_step(device, ids, ids, autocast=dtype == "bf16")
    calls = {name: suites.step_call(step, fn, params) for name, fn in impls.items()}
    for call in calls.values():  # compiled, first calls out of the timing
        call()
    timings = timing.measure(calls, device, sizes.warmup, reps)
    eager = timings["eager"].median
    lines = []
    for name, t in timings.items():
        counts = "" if name == "eager" else ", ".join(
            f"{op.split('::')[1]} {n}" for op, n in calls_per_step(calls[name], device).items())
        lines.append(f"| {model} | {dtype} | {name} | {t.median:.3f} ±{t.spread:.0f}% "
                     f"| {eager / t.median:.2f}x | {counts} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pass_name", metavar="PASS", help="a pipeline pass (fxmlir.passes.describe())")
    parser.add_argument("--device", choices=sorted(suites.SIZES), default="cpu")
    parser.add_argument("--models", default="gpt2,llama", help="comma list of gpt2, llama")
    parser.add_argument("--dtype", choices=("bf16", "f32"), default="bf16")
    parser.add_argument("--reps", type=int, default=None,
                        help="timed steps of each (default: the step tables')")
    args = parser.parse_args(argv)
    from fxmlir import passes

    if args.pass_name not in passes.registry():
        parser.error(f"{args.pass_name!r} is not a pipeline pass; "
                     f"accepted: {', '.join(passes.registry())}")
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"--models {args.models!r}: unknown {unknown}; accepted: {', '.join(MODELS)}")
    reps = args.reps or suites.SIZES[args.device].step_reps
    print("| model | dtype | implementation | step ms | vs eager | calls a step |")
    print("|---|---|---|---|---|---|")
    for model in models:
        for line in rows(args.pass_name, model, args.device, args.dtype, reps):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
