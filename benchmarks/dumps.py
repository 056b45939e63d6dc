"""What IR dumps cost a first training step: a two-block transformer
(Linear, GELU, Dropout, LayerNorm, residuals) compiled through fxmlir, its
first forward + backward timed with and without `dump_dir`, each in a fresh
process (a cold compile), alternating, medians.

    python -m benchmarks.dumps --reps 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SCRIPT = """
import sys, tempfile, time, torch, torch.nn as nn
import fxmlir

class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.attn = nn.Linear(width, width)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = x + self.drop(self.attn(self.norm1(x)))
        return x + self.drop(self.fc2(self.drop(nn.functional.gelu(self.fc1(self.norm2(x))))))

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(Block(256), Block(256))
options = {"dump_dir": tempfile.mkdtemp()} if sys.argv[1] == "dumps" else {}
compiled = torch.compile(model, backend=fxmlir.backend(**options))
x = torch.randn(8, 64, 256)
start = time.perf_counter()
compiled(x).sum().backward()
print(time.perf_counter() - start)
"""


def first_step_s(variant: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FXMLIR_")}
    env["FXMLIR_CACHE_DIR"] = tempfile.mkdtemp()  # JIT regions compile, as a new user's
    out = subprocess.run([sys.executable, "-c", SCRIPT, variant], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"no dumps": [], "dumps": []}
    for rep in range(args.reps):
        order = ["no dumps", "dumps"] if rep % 2 == 0 else ["dumps", "no dumps"]
        for variant in order:
            times[variant].append(first_step_s("dumps" if variant == "dumps" else "plain"))
    medians = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({"first_step_s": medians, "samples": times,
                      "dumps_add": medians["dumps"] / medians["no dumps"] - 1}, indent=1))


if __name__ == "__main__":
    main()
