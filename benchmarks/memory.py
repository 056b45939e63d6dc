"""python -m benchmarks.memory [--device cpu|cuda] [--models gpt2,llama] [--dtypes f32,bf16] [--impls ...]

The peak extra memory of a transformers training step (`model(input_ids,
labels).loss.backward()`, 2 x 256 tokens) at the vocabularies users train:
GPT-2 4 x 512 with 50257, LLaMA-style 4 x 512 (SwiGLU 1376) with 32000.
Each implementation runs in a process of its own (nothing another compiled
or cached counts), two warm-up steps, then fxmlir.memory.step_peak's
`extra`; the median step time of five more steps beside it. "fxmlir
unfused loss" is fxmlir without fxmlir-fuse-linear-cross-entropy: the
same run's before/after of that fusion. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

IMPLS = ("eager", "inductor", "fxmlir", "fxmlir unfused loss")
TOKENS = (2, 256)


def _model(name: str) -> Any:
    from benchmarks.suites import SIZES, gpt2_model, llama_model

    sizes = SIZES["cpu"]  # the vocabularies, the same on every device
    return gpt2_model(sizes.gpt2_vocab) if name == "gpt2" else llama_model(sizes.llama_vocab)


def measure(device: str, name: str, dtype: str, impl: str) -> dict[str, float]:
    """One implementation's peak extra MiB and step ms, in this process."""
    import torch

    import fxmlir
    from benchmarks.timing import peak_extra_mib, synchronize

    torch.manual_seed(0)
    model = _model(name).to(device).train()
    if impl == "inductor":
        model = torch.compile(model)
    elif impl.startswith("fxmlir"):
        passes = "-fxmlir-fuse-linear-cross-entropy" if "unfused" in impl else "default"
        model = torch.compile(model, backend=fxmlir.backend(passes=passes))
    ids = torch.randint(0, model.config.vocab_size, TOKENS, device=device)

    def step() -> None:
        for p in model.parameters():
            p.grad = None
        with torch.autocast(device, dtype=torch.bfloat16, enabled=dtype == "bf16"):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()

    for _ in range(2):
        step()
    extra = peak_extra_mib(step, device)
    times = []
    for _ in range(5):
        synchronize(device)
        begin = time.perf_counter()
        step()
        synchronize(device)
        times.append((time.perf_counter() - begin) * 1e3)
    return {"peak extra MiB": extra, "step ms": statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--models", default="gpt2,llama")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--impls", default=",".join(IMPLS))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # device:model:dtype:impl, in a child
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(*args.one.split(":"))))
        return
    rows = []
    for name in args.models.split(","):
        for dtype in args.dtypes.split(","):
            row: dict[str, Any] = {"model": name, "dtype": dtype}
            for impl in args.impls.split(","):
                out = subprocess.run([sys.executable, "-m", "benchmarks.memory", "--one",
                                      f"{args.device}:{name}:{dtype}:{impl}"],
                                     capture_output=True,
                                     text=True, env=os.environ.copy())
                lines = out.stdout.strip().splitlines()
                row[impl] = json.loads(lines[-1]) if out.returncode == 0 and lines \
                    else {"error": out.stderr.strip().splitlines()[-1:]}
                print(name, dtype, impl, row[impl], file=sys.stderr, flush=True)
            rows.append(row)
    impls = args.impls.split(",")
    print("| model | dtype | " + " | ".join(impls) + " |")
    print("|---|---|" + "---|" * len(impls))
    for row in rows:
        eager = row.get("eager", {}).get("peak extra MiB")
        cells = []
        for impl in impls:
            r = row[impl]
            if "error" in r:
                cells.append(f"error: {r['error']}")
                continue
            ratio = f" ({r['peak extra MiB'] / eager:.2f}×)" if eager else ""
            cells.append(f"{r['peak extra MiB']:.0f} MiB{ratio}, {r['step ms']:.0f} ms")
        print(f"| {row['model']} | {row['dtype']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
