"""Time of fxmlir-outline-jit-regions by region size: one chain of
elementwise ops (a single region), and the same chain cut by a GEMM every
few ops (many small regions). Outlining must grow linearly with the size.

    python -m benchmarks.outline --ops 10000 100000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import fxmlir

OPT = Path(fxmlir.__file__).with_name("fxmlir-opt")
TYPE = 'tensor<8x8xf32, #fxmlir.device<"cpu">>'


def chain_module(num_ops: int, gemm_every: int = 0) -> str:
    """A function of `num_ops` ops cycling through add, tanh and mul, each
    reading the previous result (twice for mul: a reused value), with an
    `mm` instead every `gemm_every` ops when non-zero."""
    lines = [f"func.func @chain(%a: {TYPE}) -> {TYPE} {{"]
    prev = "%a"
    for i in range(num_ops):
        if gemm_every and i % gemm_every == gemm_every - 1:
            op = f"fxmlir.aten.mm {prev}, %a : ({TYPE}, {TYPE}) -> {TYPE}"
        elif i % 3 == 0:
            op = f"fxmlir.aten.add.Tensor {prev}, %a {{alpha = 1 : i64}} : ({TYPE}, {TYPE}) -> {TYPE}"
        elif i % 3 == 1:
            op = f"fxmlir.aten.tanh {prev} : ({TYPE}) -> {TYPE}"
        else:
            op = f"fxmlir.aten.mul.Tensor {prev}, {prev} : ({TYPE}, {TYPE}) -> {TYPE}"
        lines.append(f"  %v{i} = {op}")
        prev = f"%v{i}"
    lines += [f"  return {prev} : {TYPE}", "}"]
    return "\n".join(lines) + "\n"


def measure(num_ops: int, gemm_every: int = 0) -> dict[str, float]:
    """Seconds fxmlir-opt spends in the pass (its --mlir-timing report)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chain.mlir"
        path.write_text(chain_module(num_ops, gemm_every))
        report = subprocess.run(
            [str(OPT), str(path), "--fxmlir-outline-jit-regions", "--mlir-timing",
             "-o", "/dev/null"], check=True, capture_output=True, text=True).stderr
    (seconds,) = [float(line.split()[0]) for line in report.splitlines()
                  if line.strip().endswith("OutlineJitRegions")]
    return {"ops": num_ops, "gemm_every": gemm_every, "outline_s": round(seconds, 3),
            "us_per_op": round(seconds / num_ops * 1e6, 2)}


def results(sizes: tuple[int, ...] = (10_000, 100_000)) -> list[dict[str, float]]:
    return [measure(n, every) for n in sizes for every in (0, 4)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    for row in results(tuple(args.ops)):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
