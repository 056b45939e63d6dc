"""Where fusions pay: round trips before autodiff + after vs after autodiff only.

Trains a GPT-2 style MLP block and reports the training step time, the bytes
autograd saves for backward, and the fused ops each placement produced.

    python -m benchmarks.placement --hidden 1024 --tokens 4096
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch
import torch.nn as nn

import fxmlir


class GPTMLP(nn.Module):
    def __init__(self, hidden: int, p: float) -> None:
        super().__init__()
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * hidden, hidden)
        self.drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.c_proj(self.act(self.c_fc(x))))


def measure(stages: str | None, args: argparse.Namespace) -> dict:
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = GPTMLP(args.hidden, args.dropout)
    dumps = Path(tempfile.mkdtemp())
    if stages is None:
        step = model
    else:
        step = torch.compile(model, backend=fxmlir.backend(stages=stages, dump_dir=str(dumps)))
    x = torch.randn(args.tokens, args.hidden)
    saved = [0]

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved[0] += t.numel() * t.element_size()
        return t

    times = []
    for i in range(args.warmup + args.steps):
        saved[0] = 0
        start = time.perf_counter()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = step(x)
        out.sum().backward()
        if i >= args.warmup:
            times.append((time.perf_counter() - start) * 1e3)
    fused = {}
    for summary in dumps.glob("*/*/summary.json"):
        for op, n in json.loads(summary.read_text())["fused_ops"].items():
            key = f"{summary.parent.name}:{op.removeprefix('fxmlir.')}"
            fused[key] = fused.get(key, 0) + n
    return {"placement": stages or "eager", "step_ms": round(statistics.median(times), 2),
            "saved_MB": round(saved[0] / 2**20, 1), "fused": fused}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    for stages in (None, "forward,backward", "before_autodiff,forward,backward"):
        print(json.dumps(measure(stages, args)))


if __name__ == "__main__":
    main()
