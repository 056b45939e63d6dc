"""Times the fused torch.ops.fxmlir.* ops against eager's unfused aten ops.

    PYTHONPATH=python python benchmarks/bench_fused_ops.py
    PYTHONPATH=python python benchmarks/bench_fused_ops.py --rows 2048 --cols 1024 --devices cpu

x is [rows, cols] with the bias along the last axis (a Linear's output). GB/s
is the traffic the fused op needs (bytes read + written once) over its time;
the unfused ops move more than that, so their rate is not printed.
"""

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

import fxmlir.ops  # noqa: F401  (loads torch.ops.fxmlir)

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
P_DROP = 0.1


@dataclass
class Case:
    name: str
    fused: Callable[[], torch.Tensor]
    eager: Callable[[], torch.Tensor]
    bytes_moved: int


def make_cases(rows: int, cols: int, dtype: torch.dtype, device: str) -> list[Case]:
    ops = torch.ops.fxmlir
    x = torch.randn(rows, cols, dtype=dtype, device=device)
    grad = torch.randn_like(x)
    bias = torch.randn(cols, dtype=dtype, device=device)
    mask = torch.rand(rows, cols, device=device) >= P_DROP
    scale = 1 / (1 - P_DROP)
    n, size = x.numel(), x.element_size()
    bias_bytes = cols * size
    return [
        Case("bias_add", lambda: ops.bias_add(x, bias, -1), lambda: x + bias,
             2 * n * size + bias_bytes),
        Case("bias_add_gelu",
             lambda: ops.fused_bias_add_gelu(x, bias, -1, "none"),
             lambda: F.gelu(x + bias), 2 * n * size + bias_bytes),
        Case("bias_add_gelu_tanh",
             lambda: ops.fused_bias_add_gelu(x, bias, -1, "tanh"),
             lambda: F.gelu(x + bias, approximate="tanh"), 2 * n * size + bias_bytes),
        Case("bias_add_gelu_grad",
             lambda: ops.fused_bias_add_gelu_grad(grad, x, bias, -1, "none"),
             lambda: torch.ops.aten.gelu_backward(grad, x + bias),
             3 * n * size + bias_bytes),
        Case("random_mask_like", lambda: ops.random_mask_like(x, P_DROP),
             lambda: torch.rand_like(x) >= P_DROP, n),
        Case("bias_add_mask_scale",
             lambda: ops.fused_bias_add_mask_scale(x, bias, mask, -1, scale),
             lambda: (x + bias) * mask * scale, 2 * n * size + n + bias_bytes),
    ]


def time_ms(fn: Callable[[], torch.Tensor], device: str, warmup: int, iters: int) -> float:
    """Median milliseconds per call."""
    for _ in range(warmup):
        fn()
    samples = []
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(iters):
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
    else:
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--cols", type=int, default=4096)
    parser.add_argument("--dtypes", nargs="+", choices=sorted(DTYPES), default=["f32", "bf16"])
    parser.add_argument("--devices", nargs="+", choices=["cpu", "cuda"],
                        default=["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    if "cuda" in args.devices and not torch.cuda.is_available():
        parser.error("--devices cuda: CUDA is not available")

    print(f"x: [{args.rows}, {args.cols}], bias along the last axis, "
          f"median of {args.iters} runs; torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU threads")
    header = (f"{'op':<22}{'device':<8}{'dtype':<7}{'fused ms':>10}{'eager ms':>10}"
              f"{'speedup':>9}{'fused GB/s':>12}")
    print(header)
    print("-" * len(header))
    for device in args.devices:
        for dtype_name in args.dtypes:
            for case in make_cases(args.rows, args.cols, DTYPES[dtype_name], device):
                fused = time_ms(case.fused, device, args.warmup, args.iters)
                eager = time_ms(case.eager, device, args.warmup, args.iters)
                rate = case.bytes_moved / (fused * 1e-3) / 1e9
                print(f"{case.name:<22}{device:<8}{dtype_name:<7}{fused:>10.3f}"
                      f"{eager:>10.3f}{eager / fused:>8.2f}x{rate:>12.1f}")


if __name__ == "__main__":
    main()
