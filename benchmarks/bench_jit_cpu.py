"""Times JIT regions (torch.ops.fxmlir.mlir_jit) against eager and Inductor
on CPU, forward and backward, and the JIT's compile and cache-load times.

    python benchmarks/bench_jit_cpu.py
    python benchmarks/bench_jit_cpu.py --rows 8192 --cols 1024 --no-inductor

Each case is traced to aten ops (make_fx), outlined into regions and run by
mlir_jit (fxmlir.jit.outline). "cost model" says what the round trip would
run: the regions ("region") or eager's kernels ("eager"), its cost model's
verdict to check against the measured speedup. Times are the best of `--iters` calls with
the variants interleaved: on a shared machine, other processes' load only
ever adds time (a preempted call, a parallel region waiting for a thread).
Compile times (LLVM included, analysis not) need an empty cache: the
default is a fresh directory per run.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F


def gelu_new(x):
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
    return 0.5 * x * (1.0 + torch.tanh(inner))


def backward_of(fn):
    def grads(*args):
        *inputs, grad = args
        inputs = [x.detach().requires_grad_() for x in inputs]
        return torch.autograd.grad(fn(*inputs), inputs, grad)
    return grads


def cases(rows: int, cols: int) -> dict[str, tuple[Callable, list[torch.Tensor], int]]:
    """name -> (function, inputs, min ops per region)."""
    x, y, z = (torch.randn(rows, cols) for _ in range(3))
    w, b = torch.randn(cols), torch.randn(cols)
    layer_norm = lambda x, w, b: F.layer_norm(x, (cols,), w, b)  # noqa: E731
    softmax = lambda x: torch.softmax(x, -1)  # noqa: E731
    half = cols // 2
    cos, sin = torch.randn(cols), torch.randn(cols)
    rotary = lambda x, c, s: x * c + torch.cat((-x[:, half:], x[:, :half]), -1) * s  # noqa: E731
    chains = {
        "x.float() * s (bf16)": (lambda x: x.float() * 0.125, [x.bfloat16()], 2),
        "tanh(a + b) * c": (lambda a, b, c: torch.tanh(a + b) * c, [x, y, z], 2),
        "sigmoid(x) * x": (lambda x: torch.sigmoid(x) * x, [x], 2),
        "SwiGLU silu(a) * b": (lambda a, b: F.silu(a) * b, [x, y], 2),
        "gelu_new": (gelu_new, [x], 2),
        "layer_norm": (layer_norm, [x, w, b], 1),
        "softmax": (softmax, [x], 1),
        "rotary (rotate_half)": (rotary, [x, cos, sin], 2),
    }
    result = {}
    for name, (fn, inputs, min_ops) in chains.items():
        result[name] = (fn, inputs, min_ops)
        if name.startswith("x.float"):
            continue
        result[name + " bwd"] = (backward_of(fn), [*inputs, torch.randn(rows, cols)], min_ops)
    return result


def best_ms(fns: list[Callable], iters: int) -> list[float]:
    for fn in fns:
        fn()
        fn()
    samples = [[] for _ in fns]
    for _ in range(iters):
        for fn, times in zip(fns, samples):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
    return [min(times) for times in samples]


COMPILE_SCRIPT = """
import sys, time, torch
from fxmlir import jit
torch.set_num_threads(int(sys.argv[1]))
fn = lambda a, b, c: torch.tanh(a + b) * c
x = torch.randn(256, 1024)
graph = jit.outline(fn, x, x, x)
start = time.perf_counter()
graph(x, x, x)
first = time.perf_counter() - start
calls = []
for _ in range(50):
    start = time.perf_counter()
    graph(x, x, x)
    calls.append(time.perf_counter() - start)
second = min(calls)
s = jit.stats()
print(first * 1e3, second * 1e3, s["compiled"], s["disk_hits"],
      s["compile_seconds"] * 1e3, s["disk_load_seconds"] * 1e3)
"""


def compile_times(threads: int) -> None:
    """First call (analysis + compile), later calls, and a second process's
    first call (analysis + disk cache), with a fresh cache directory, on a
    [256, 1024] tanh(a + b) * c."""
    env = dict(os.environ, FXMLIR_CACHE_DIR=tempfile.mkdtemp(prefix="fxmlir-bench-"))
    for label in ("fresh process, empty cache", "second process, disk cache"):
        out = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, str(threads)], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
        first, second, compiled, disk, compile_ms, load_ms = map(float, out)
        print(f"{label:28s}: first call {first:7.2f} ms (compiled {compiled:.0f}, "
              f"disk hits {disk:.0f}, compile {compile_ms:.2f} ms, disk load "
              f"{load_ms:.2f} ms), later calls {second:.3f} ms (best)")


def cost_model_verdict(fn: Callable, inputs: list[torch.Tensor], min_ops: int) -> str:
    """Whether the round trip's cost model (RegionCost.h) keeps the case's
    regions: to compare with the measured speedup."""
    from fxmlir import jit

    try:
        jit.outline(fn, *inputs, min_ops=min_ops, cost_model=True)
    except ValueError:
        return "eager"
    return "region"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(),
                        help="torch threads; on a shared machine, a thread that "
                        "waits for its core stalls every parallel region (1 avoids it)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    os.environ.setdefault("FXMLIR_CACHE_DIR", tempfile.mkdtemp(prefix="fxmlir-bench-"))
    from fxmlir import jit

    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"[{args.rows}, {args.cols}] f32 inputs")
    compile_times(args.threads)
    header = (f"{'case':24s} {'regions':>7s} {'compile ms':>10s} {'eager ms':>9s} "
              f"{'fxmlir ms':>9s} {'speedup':>8s} {'cost model':>10s}")
    if not args.no_inductor:
        header += f" {'inductor ms':>11s}"
    print(header)
    for name, (fn, inputs, min_ops) in cases(args.rows, args.cols).items():
        graph = jit.outline(fn, *inputs, min_ops=min_ops)
        before = jit.stats()["compile_seconds"]
        graph(*inputs)
        compile_ms = (jit.stats()["compile_seconds"] - before) * 1e3
        variants = [lambda: fn(*inputs), lambda: graph(*inputs)]
        if not args.no_inductor:
            compiled = torch.compile(fn)
            compiled(*inputs)
            variants.append(lambda: compiled(*inputs))
        times = best_ms(variants, args.iters)
        line = (f"{name:24s} {len(graph.regions):7d} {compile_ms:10.1f} {times[0]:9.3f} "
                f"{times[1]:9.3f} {times[0] / times[1]:7.2f}x "
                f"{cost_model_verdict(fn, inputs, min_ops):>10s}")
        if not args.no_inductor:
            line += f" {times[2]:11.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
