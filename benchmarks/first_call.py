"""python -m benchmarks.first_call [--models gpt2-tiny,gpt2,llama] [--impls ...] [--warm N]

A training step's first call (forward + loss + backward, one thread), cold
and warm: each implementation in processes of its own, the first with empty
caches (a temporary TORCHINDUCTOR_CACHE_DIR and FXMLIR_CACHE_DIR), then N
more on the caches the first left, as a restarted job finds them. "Dynamo
alone" is backend="eager": graph capture with no compiler, the floor for
every backend built on Dynamo. All skip transformers' logger.warning_once,
as fxmlir does, so all compile the same graphs. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

IMPLS = ("dynamo", "inductor", "fxmlir")
LABELS = {"dynamo": "Dynamo alone", "inductor": "Inductor", "fxmlir": "fxmlir"}
TOKENS = {"gpt2-tiny": (2, 64), "gpt2": (2, 256), "llama": (2, 256)}


def _model(name: str) -> Any:
    from benchmarks.suites import SIZES, gpt2_model, llama_model

    if name == "gpt2-tiny":
        from transformers import GPT2Config, GPT2LMHeadModel

        return GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000,
                                          n_positions=256))
    sizes = SIZES["cpu"]
    return gpt2_model(sizes.gpt2_vocab) if name == "gpt2" else llama_model(sizes.llama_vocab)


def measure(name: str, impl: str) -> float:
    """Seconds of one compiled step's first call, in this process."""
    import torch

    from fxmlir.dynamo_backend import skip_transformers_warning_once

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = _model(name).train()
    # GPT-2 calls transformers' logger.warning_once in its forward, where
    # Dynamo breaks the graph; fxmlir has Dynamo skip the call (one graph
    # instead of two). Every implementation here does, so that all compile
    # the same graphs.
    skip_transformers_warning_once()
    ids = torch.randint(0, model.config.vocab_size, TOKENS[name])
    backend = {"dynamo": "eager", "inductor": "inductor", "fxmlir": "fxmlir"}[impl]
    compiled = torch.compile(model, backend=backend)
    begin = time.perf_counter()
    compiled(input_ids=ids, labels=ids).loss.backward()
    return time.perf_counter() - begin


def _run(name: str, impl: str, caches: str) -> float:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "inductor"),
               FXMLIR_CACHE_DIR=os.path.join(caches, "fxmlir"), OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-m", "benchmarks.first_call", "--one",
                          f"{name}:{impl}"], capture_output=True, text=True, env=env)
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{name} {impl}: {out.stderr.strip().splitlines()[-1:]}")
    return float(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="gpt2-tiny,gpt2,llama")
    parser.add_argument("--impls", default=",".join(IMPLS))
    parser.add_argument("--warm", type=int, default=3, help="warm processes (median)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # model:impl, in a child
    args = parser.parse_args()
    if args.one:
        print(measure(*args.one.split(":")))
        return
    impls = args.impls.split(",")
    rows = []
    for name in args.models.split(","):
        row: dict[str, Any] = {"model": name}
        for impl in impls:
            with tempfile.TemporaryDirectory(prefix="fxmlir-first-call-") as caches:
                cold = _run(name, impl, caches)
                warm = statistics.median(_run(name, impl, caches) for _ in range(args.warm))
            row[impl] = {"cold": cold, "warm": warm}
            print(name, impl, json.dumps(row[impl]), file=sys.stderr, flush=True)
        rows.append(row)
    print("| model | " + " | ".join(f"{LABELS[i]} cold | {LABELS[i]} warm" for i in impls)
          + " |")
    print("|---|" + "---|---|" * len(impls))
    for row in rows:
        cells = [f"{row[i]['cold']:.2f} s | {row[i]['warm']:.2f} s" for i in impls]
        print(f"| {row['model']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
