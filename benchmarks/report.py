"""docs/benchmarks.md: one section per device, each replaced by a run on
that device, the other kept; a PNG chart next to it where matplotlib is."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any, Callable

import torch

from benchmarks.suites import BATCH_OF_ONE_TOKENS, OVERHEAD_TOKENS, OVERHEAD_VOCAB, Result
from benchmarks.timing import format_ms

DEVICES = {"cpu": "CPU", "cuda": "CUDA"}  # each run names its machine
_ROOT = Path(__file__).resolve().parent.parent

_HEADER = """# Benchmarks

Written by `python -m benchmarks --device cpu|cuda`
([benchmarks/]({benchmarks})): eager, Inductor (torch.compile's default
backend) and fxmlir run in one process on the same inputs. Every implementation
is warmed up, then timed one call at a time in alternation (A B C, C B A, ...);
tables give the median and the interquartile range as a percentage of it (±).
GB/s is the fewest bytes an op must move (inputs read once, outputs written
once) over its median time, compared with the same run's device-to-device copy
(on a CPU, at the row's thread count). "Peak extra" is the most memory a
training step holds at once beyond what was allocated before it (its inputs, the
parameters, the previous step's gradients, which it frees; each section says how
it is measured); "saved" what autograd keeps for backward during the step
(parameters it keeps by reference not counted); "threads" torch's CPU threads;
"first call" the wall-clock time of the first step, compiling included
(Inductor's, AOTAutograd's and, in runs since 2026-11-27, fxmlir's JIT caches
empty: a cold compile). Every number below comes from a run (raw samples in
benchmarks-<device>.json); a run replaces the tables it measured. A run's commit is that of
the fxmlir it imported: the checkout's when fxmlir runs from the checkout's sources, else the
one an installed package was built from (its `BUILD_COMMIT`, written by setup.py), followed
by the checkout's where the two differ.
"""


def header(path: Path) -> str:
    """The page's opening, its link to benchmarks/ relative to `path`."""
    return _HEADER.format(benchmarks=source_link(path, "benchmarks"))


def source_link(path: Path, source: str) -> str:
    """`source` (relative to the repository) as a link from the page `path`
    writes, wherever that page lies (docs/, docs/avx2/)."""
    return os.path.relpath(_ROOT / source, path.resolve().parent)


# How each device's step tables measure "peak extra MiB".
PEAK_NOTES = {
    "cpu": "Peak extra MiB: torch's memory profiler (its timeline of every allocation and "
           "free) over the third step of each implementation, its first two run: in this "
           "process, one implementation after another, not a process each (each would "
           "compile again).",
    "cuda": "Peak extra MiB: torch.cuda.max_memory_allocated() over the second step of each "
            "implementation, less what was allocated before it: in this process, one "
            "implementation after another.",
}


def _marker(device: str, end: bool) -> str:
    return f"<!-- {'END' if end else 'BEGIN'} {device} -->"


def _pending(device: str) -> str:
    return (f"## {DEVICES[device]}\n\nPending: no run on this device yet. "
            f"`python -m benchmarks --device {device}` writes this section"
            + (" (on a GPU machine: `bash scripts/gpu_session.sh`)." if device == "cuda"
               else ".") + "\n")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _mib(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def _threads(results: list[Result]) -> tuple[list[str], Callable[[Result], list[str]]]:
    """A "threads" column where the rows record theirs (CPU runs)."""
    if all(r.threads is None for r in results):
        return [], lambda r: []
    return ["threads"], lambda r: [str(r.threads) if r.threads else "–"]


def _copies(results: list[Result]) -> str:
    """The CPU ops' copy bandwidths by thread count, for the sentence on "of copy"."""
    copies = {r.threads: r.copy_gbps for r in results if r.threads and r.copy_gbps}
    listed = ", ".join(f"{gbps:.1f} GB/s at {n} thread{'s' * (n > 1)}"
                       for n, gbps in sorted(copies.items()))
    return f", at its thread count: {listed}" if copies else ""


def _ops_table(results: list[Result]) -> str:
    header, threads = _threads(results)
    rows = []
    for r in results:
        fused = r.timings["fxmlir"].median
        gbps = r.bytes_moved / (fused * 1e-3) / 1e9
        rows.append([r.case, r.dtype, *threads(r), r.timings["eager"].text(),
                     r.timings["Inductor"].text(), r.timings["fxmlir"].text(), f"{gbps:.0f}",
                     f"{100 * gbps / r.copy_gbps:.0f}%" if r.copy_gbps else "–",
                     f"{r.timings['eager'].median / fused:.2f}x"])
    return _table(["op", "dtype", *header, "eager ms", "Inductor ms", "fxmlir ms",
                   "fxmlir GB/s", "of copy", "fxmlir vs eager"], rows)


def _linear_table(results: list[Result]) -> str:
    names = list(dict.fromkeys(n for r in results for n in r.timings))
    header, threads = _threads(results)
    rows = [[r.case, r.dtype, *threads(r)] + [r.timings[n].text() if n in r.timings else "–"
                                             for n in names] for r in results]
    return _table(["pass", "dtype", *header] + [f"{n} ms" for n in names], rows)


def _step_table(results: list[Result]) -> str:
    header, threads = _threads(results)
    rows = []
    for r in results:
        eager = r.timings["eager"].median
        for name, t in r.timings.items():
            extra = r.extra.get(name, {})
            rows.append([r.case, r.dtype, *threads(r), name, t.text(),
                         f"{eager / t.median:.2f}x", _mib(extra.get("peak extra MiB")),
                         _mib(extra.get("saved MiB")),
                         f"{extra.get('first call s', 0.0):.2f}"])
    failed = [f"- {r.case}, {r.dtype}, {name} failed: {extra['error'][:300]}"
              for r in results for name, extra in r.extra.items() if "error" in extra]
    return _table(["model", "dtype", *header, "implementation", "step ms", "vs eager",
                   "peak extra MiB", "saved MiB", "first call s"], rows) + \
        ("\n" + "\n".join(failed) + "\n" if failed else "")



# Vector extensions worth naming beside a CPU's figures, as /proc/cpuinfo
# spells their flags.
_EXTENSIONS = (("avx2", "AVX2"), ("avx512f", "AVX-512"), ("avx512_bf16", "AVX-512 BF16"),
               ("amx_bf16", "AMX BF16"))


def machine(device: str, threads: bool = True) -> str:
    """The device the figures come from: a GPU's name and size, or a CPU's
    model, vector extensions and (`threads`) torch's thread count."""
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        return (f"{props.name}, {props.multi_processor_count} SMs, "
                f"{props.total_memory / 2**30:.0f} GiB; CUDA {torch.version.cuda}")
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
                break
    except OSError:
        pass
    extensions = ", ".join(name for flag, name in _EXTENSIONS if flag in flags)
    described = f"{model} ({extensions or 'no AVX2'})"
    return f"{described}, {torch.get_num_threads()} torch threads" if threads else described


def _describe(directory: Path) -> str:
    """`git describe` of the checkout holding `directory`."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=directory,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def commit(package: Path | None = None) -> str:
    """The commit of the fxmlir that runs (the imported package, or
    `package`): this checkout's where it runs from its sources, else the
    commit an installed package was built from (its BUILD_COMMIT), with the
    checkout's beside it where they differ."""
    checkout = Path(__file__).resolve().parent.parent
    if package is None:
        import fxmlir

        package = Path(fxmlir.__file__).resolve().parent
    here = _describe(checkout)
    if package == checkout / "python" / "fxmlir":
        return here
    recorded = package / "BUILD_COMMIT"
    built = recorded.read_text().strip() if recorded.is_file() else "unknown"
    return built if built == here else f"{built} (installed package; checkout {here})"


# The language models' step sections: title, and the model and step they time.
_LANGUAGE_MODELS = {
    "gpt2": ("GPT-2", "transformers' GPT2LMHeadModel, random init: 4 layers, 512 wide, 8 heads, "
             "vocabulary {sizes.gpt2_vocab}, dropout 0.1; forward with the LM loss and backward."),
    "llama": ("LLaMA-style", "transformers' LlamaForCausalLM, random init: 4 layers, 512 wide, "
              "8 heads, SwiGLU 1376 wide, vocabulary {sizes.llama_vocab} (no biases, RMSNorm, "
              "rotary embeddings); forward with the LM loss and backward."),
    "bert": ("BERT", "transformers' BertForMaskedLM, random init: 4 layers, 512 wide, 8 heads, "
             "GELU 2048 wide, vocabulary {sizes.bert_vocab}, dropout 0.1; forward with the "
             "masked-LM loss (a random 15 % of the tokens labelled) and backward."),
}
# The training-step tables' keys, in their order.
STEP_KEYS = ("mlp", "gpt2", "llama", "llama1", "bert", "overhead")


def section(device: str, run: dict[str, Any]) -> str:
    """The markdown of one device's runs (merged by key, see __main__)."""
    sizes = run["sizes"]
    out = [f"## {DEVICES[device]}\n"]
    out += [f"- `{r['command']}`: {r['date']}, fxmlir commit {r['commit']}, machine "
            f"{r['machine']}, torch {r['torch']}, transformers {r['transformers']}"
            for r in run["runs"]]
    out += [f"- sizes: {run['sizes_note']}", ""]
    out.append(f"Copy bandwidth (the latest run's): **{run['copy_gbps']:.1f} GB/s** "
               f"(a {sizes.copy_bytes >> 20} MiB copy, bytes read + written); "
               "\"of copy\" compares with the copy of the run that measured the op"
               f"{_copies(run.get('ops', []))}.\n")
    if any(run.get(key) for key in STEP_KEYS):
        out.append(PEAK_NOTES[device] + "\n")
    if run.get("ops"):
        out.append(f"### Fused elementwise ops, x [{sizes.rows}, {sizes.cols}]\n")
        out.append(_ops_table(run["ops"]))
    if run.get("linear"):
        tokens, k, n = sizes.linear
        out.append(f"### Linear + tanh GELU, [{tokens}, {k}] x [{n}, {k}]^T + bias\n")
        out.append(_linear_table(run["linear"]))
    if run.get("mlp"):
        batch, seq = sizes.mlp_tokens
        out.append(f"### MLP block training step, {batch}x{seq} tokens\n\n"
                   "`Linear(1024, 4096) -> GELU -> Dropout(0.1) -> Linear(4096, 1024) -> "
                   "Dropout(0.1)`, forward and backward.\n")
        out.append(_step_table(run["mlp"]))
    batch, seq = sizes.gpt2_tokens
    for key, (title, model) in _LANGUAGE_MODELS.items():
        if run.get(key):
            out.append(f"### {title} training step, {batch}x{seq} tokens\n\n"
                       f"{model.format(sizes=sizes)}\n")
            out.append(_step_table(run[key]))
    if run.get("llama1"):
        batch, seq = BATCH_OF_ONE_TOKENS[device]
        out.append(f"### LLaMA-style training step, a batch of one: {batch}x{seq} tokens\n\n"
                   "The LLaMA-style model above on one sequence, the shape of most "
                   "fine-tuning: the JIT regions' rows are its tokens (at any other batch, "
                   "the batch).\n")
        out.append(_step_table(run["llama1"]))
    if run.get("overhead"):
        batch, seq = OVERHEAD_TOKENS
        out.append(f"### Per-step overhead: a tiny LLaMA-style step, {batch}x{seq} tokens\n\n"
                   "The LLaMA-style model above at 32 wide (2 heads, SwiGLU 64 wide, "
                   f"vocabulary {OVERHEAD_VOCAB}): its kernels take microseconds, so a step "
                   "is what runs around them (Python, the dispatcher, AOTAutograd's wrappers, "
                   "Dynamo's guards, the autograd engine).\n")
        out.append(_step_table(run["overhead"]))
    if run.get("roundtrip"):
        out.append("### Round trip (import, canonicalize, export) by graph size\n")
        out.append(_table(["FX nodes", "round trip ms", "ms per node"],
                          [[str(r["fx_nodes"]), format_ms(r["round_trip_ms"]),
                            f"{r['ms_per_node']:.3f}"] for r in run["roundtrip"]]))
    if run.get("outline"):
        out.append("### Outlining JIT regions by region size\n\n"
                   "`fxmlir-outline-jit-regions` on a chain of add/tanh/mul ops: one region, "
                   "or many small ones with an `mm` every 4 ops (`python -m benchmarks.outline`).\n")
        out.append(_table(["ops", "mm every", "outline s", "µs per op"],
                          [[str(r["ops"]), str(r["gemm_every"] or "-"), f"{r['outline_s']:.3f}",
                            f"{r['us_per_op']:.2f}"] for r in run["outline"]]))
    if run.get("chart"):
        out.append(f"![{DEVICES[device]} speedups over eager]({run['chart']})\n")
    else:
        out.append("No chart: matplotlib is not installed where this ran "
                   "(`pip install 'fxmlir[benchmarks]'` installs it).\n")
    return "\n".join(out)


def write(path: Path, device: str, text: str) -> None:
    """Replaces the device's section of the document, keeping the other's."""
    old = path.read_text() if path.exists() else ""
    sections = {}
    for name in DEVICES:
        found = re.search(re.escape(_marker(name, False)) + r"\n(.*?)" +
                          re.escape(_marker(name, True)), old, re.DOTALL)
        sections[name] = found.group(1) if found else _pending(name)
    sections[device] = text
    body = [header(path)]
    for name in DEVICES:
        body += [_marker(name, False), sections[name].rstrip("\n"), _marker(name, True), ""]
    path.write_text("\n".join(body))


def chart(path: Path, device: str, run: dict[str, Any]) -> bool:
    """A bar chart of speedups over eager; False without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for key in ("ops", *STEP_KEYS) for r in run.get(key) or []]
    labels = [f"{r.case} {r.dtype}" for r in rows]
    names = [n for n in ("Inductor", "fxmlir", "fxmlir no regions", "fxmlir codegen",
                         "Inductor reduce-overhead",
                         "fxmlir cudagraphs")
             if any(n in r.timings for r in rows)]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.5))
    height = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [r.timings["eager"].median / r.timings[name].median if name in r.timings
                  else 0.0 for r in rows]
        ax.barh([y + i * height for y in range(len(rows))], values, height, label=name)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks([y + 0.4 - height / 2 for y in range(len(rows))], labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("speedup over eager (median time)")
    ax.set_title(f"fxmlir benchmarks, {DEVICES[device]}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
