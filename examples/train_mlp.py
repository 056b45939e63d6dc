"""A GPT-style MLP block (Linear -> GELU -> Dropout -> Linear) trained with
torch.compile through fxmlir, writing the IR of every compiled graph.

    python examples/train_mlp.py --dump-dir fxmlir-dumps --steps 20
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn


class MLPBlock(nn.Module):
    def __init__(self, hidden: int, dropout: float) -> None:
        super().__init__()
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.act = nn.GELU()
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(4 * hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(self.drop(self.act(self.fc1(x))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--dump-dir", default="fxmlir-dumps")
    parser.add_argument("--passes", default="default", help="see fxmlir.passes.describe()")
    args = parser.parse_args()

    import fxmlir

    torch.manual_seed(0)
    model = MLPBlock(args.hidden, args.dropout)
    compiled = torch.compile(model, backend=fxmlir.backend(passes=args.passes,
                                                           dump_dir=args.dump_dir))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.hidden)
    target = torch.randn(args.batch, args.hidden)
    start = time.perf_counter()
    for step in range(args.steps):
        loss = nn.functional.mse_loss(compiled(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 5 == 0 or step == args.steps - 1:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    print(f"{args.steps} steps in {time.perf_counter() - start:.2f} s")
    print(f"IR dumps (.mlir, .dot, summary.json per graph and stage): {args.dump_dir}/ "
          f"(`fxmlir report {args.dump_dir}` tables them)")


if __name__ == "__main__":
    main()
