"""Round-trip time (import + canonicalize + export) for FX graphs of N nodes.

    python -m benchmarks.roundtrip --nodes 100 1000 10000

The suite (python -m benchmarks) reports the same measurement at a few sizes.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from fxmlir.config import Options
from fxmlir.passes import Selection
from fxmlir.roundtrip import round_trip


def chain(num_ops: int):
    """A function of `num_ops` ATen ops: a residual MLP-like chain."""
    def fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        for i in range(num_ops // 4):
            y = torch.addmm(b, x, w)
            y = torch.nn.functional.gelu(y)
            x = x + y * 0.5
        return x
    return fn


def measure(nodes: int, repeat: int = 3) -> dict[str, float]:
    """The best of `repeat` round trips of a chain of about `nodes` nodes."""
    inputs = (torch.randn(8, 16), torch.randn(16, 16), torch.randn(16))
    options = Options(passes=Selection(explicit=("canonicalize",)))
    gm = make_fx(chain(nodes), tracing_mode="fake")(*inputs)
    count = len(gm.graph.nodes)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        round_trip(gm, "bench", "forward", options)
        best = min(best, (time.perf_counter() - start) * 1e3)
    return {"fx_nodes": count, "round_trip_ms": round(best, 1),
            "ms_per_node": round(best / count, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for nodes in args.nodes:
        print(json.dumps(measure(nodes, args.repeat)))


if __name__ == "__main__":
    main()
