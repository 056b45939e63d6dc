"""The suite's cases: each one runs eager, Inductor and fxmlir in this
process on the same inputs, timed as benchmarks/timing.py does."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

import fxmlir
import fxmlir.ops  # noqa: F401  (loads torch.ops.fxmlir)

from benchmarks import timing
from benchmarks.roundtrip import measure as round_trip_time

ops = torch.ops.fxmlir
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
P_DROP = 0.1


@dataclass(frozen=True)
class Sizes:
    """What a device runs: the issue's sizes on CUDA, smaller ones on a CPU
    (the suite must finish in minutes there)."""

    rows: int  # fused ops: x is [rows, cols], bias along cols
    cols: int
    linear: tuple[int, int, int]  # linear + GELU: tokens, in, out features
    mlp_tokens: tuple[int, int]  # MLP block: batch, sequence
    gpt2_tokens: tuple[int, int]
    warmup: int
    reps: int
    step_reps: int  # training steps are slower: fewer timed calls
    copy_bytes: int
    mlp_cases: tuple[tuple[str, str], ...]  # (GELU approximate, dtype)
    gpt2_cases: tuple[str, ...]  # f32, bf16 autocast
    cuda_graphs: bool  # also time fxmlir with cudagraphs=True, Inductor reduce-overhead
    dtypes: tuple[str, ...] = tuple(DTYPES)  # of every table (--dtypes)
    # The vocabularies users train: where the LM head and its loss hold a
    # step's largest tensors.
    gpt2_vocab: int = 50257
    llama_vocab: int = 32000
    bert_vocab: int = 30522

    def only(self, dtypes: tuple[str, ...]) -> "Sizes":
        """These sizes with the cases of `dtypes` alone."""
        return replace(self, dtypes=dtypes,
                       mlp_cases=tuple(c for c in self.mlp_cases if c[1] in dtypes),
                       gpt2_cases=tuple(c for c in self.gpt2_cases if c in dtypes))


SIZES = {
    "cuda": Sizes(rows=16384, cols=4096, linear=(8192, 1024, 4096), mlp_tokens=(16, 512),
                  gpt2_tokens=(8, 512), warmup=5, reps=30, step_reps=30, copy_bytes=1 << 30,
                  mlp_cases=(("none", "f32"), ("none", "bf16"), ("tanh", "f32"),
                             ("tanh", "bf16")),
                  gpt2_cases=("f32", "bf16"), cuda_graphs=True),
    "cpu": Sizes(rows=2048, cols=1024, linear=(256, 1024, 4096), mlp_tokens=(2, 128),
                 gpt2_tokens=(2, 128), warmup=2, reps=10, step_reps=9, copy_bytes=1 << 28,
                 mlp_cases=(("none", "f32"), ("none", "bf16")), gpt2_cases=("f32", "bf16"),
                 cuda_graphs=False),
}


@dataclass
class Result:
    """One row of a table: the case, its timings by implementation, and
    what else was measured."""

    case: str
    dtype: str
    timings: dict[str, timing.Timing]
    bytes_moved: int = 0  # the fewest bytes the fused op must move
    extra: dict[str, dict[str, float | None]] = field(default_factory=dict)
    threads: int | None = None  # torch's CPU threads; None on a GPU
    # The copy bandwidth of the run that measured the row, at its threads.
    copy_gbps: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "dtype": self.dtype, "bytes_moved": self.bytes_moved,
                "timings_ms": {n: list(t.samples) for n, t in self.timings.items()},
                "extra": self.extra, "threads": self.threads, "copy_gbps": self.copy_gbps}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Result":
        return cls(data["case"], data["dtype"],
                   {n: timing.Timing(tuple(v)) for n, v in data["timings_ms"].items()},
                   data["bytes_moved"], data["extra"], data.get("threads"),
                   data.get("copy_gbps"))


def _compiled(fn: Callable[..., Any], backend: Any = "inductor", **kwargs: Any) -> Callable:
    return torch.compile(fn, backend=backend, dynamic=False, **kwargs)


def _fxmlir(**options: Any) -> Any:
    return fxmlir.backend(**options)


# -- fused elementwise ops -------------------------------------------------------

def _pack(mask: torch.Tensor) -> torch.Tensor:
    """A bool mask packed like fused_bias_dropout_add's (bit i % 8 of byte
    i / 8)."""
    flat = mask.flatten()
    flat = F.pad(flat, (0, -flat.numel() % 8)).view(-1, 8).to(torch.uint8)
    return (flat << torch.arange(8, device=mask.device, dtype=torch.uint8)).sum(1,
                                                                               dtype=torch.uint8)


def bias_gelu(x, b):
    return F.gelu(x + b)


def bias_gelu_backward(g, x, b):
    return torch.ops.aten.gelu_backward(g, x + b)


def bias_dropout_add(x, b, r):
    return r + F.dropout(x + b, P_DROP)


def dropout_backward(g, mask):
    return torch.ops.aten.native_dropout_backward(g, mask, 1 / (1 - P_DROP))


def bias_gelu_dropout(x, b):
    return F.dropout(F.gelu(x + b), P_DROP)


def bias_gelu_dropout_backward(g, mask, x, b):
    return torch.ops.aten.gelu_backward(dropout_backward(g, mask), x + b)


def fused_ops(device: str, sizes: Sizes) -> list[Result]:
    results = []
    for dtype_name in sizes.dtypes:
        dtype = DTYPES[dtype_name]
        x = torch.randn(sizes.rows, sizes.cols, dtype=dtype, device=device)
        b, g, r = torch.randn(sizes.cols, dtype=dtype, device=device), torch.randn_like(x), \
            torch.randn_like(x)
        mask = torch.rand(x.shape, device=device) >= P_DROP
        packed = _pack(mask)
        n, s = x.numel(), x.element_size()
        cases = [
            ("bias + GELU", bias_gelu, (x, b),
             lambda: ops.fused_bias_act(x, b, -1, "gelu"), 2 * n * s),
            ("bias + GELU, backward", bias_gelu_backward, (g, x, b),
             lambda: ops.fused_bias_act_grad(g, x, b, -1, "gelu"), 3 * n * s),
            ("bias + dropout + residual", bias_dropout_add, (x, b, r),
             lambda: ops.fused_bias_dropout_add(x, b, r, -1, P_DROP), 3 * n * s + n // 8),
            ("bias + dropout + residual, backward", dropout_backward, (g, mask),
             lambda: ops.packed_mask_scale(g, packed, 1 / (1 - P_DROP)), 2 * n * s + n // 8),
            ("bias + GELU + dropout", bias_gelu_dropout, (x, b),
             lambda: ops.fused_bias_dropout_add(x, b, None, -1, P_DROP, True, "gelu"),
             2 * n * s + n // 8),
            # fused_bias_dropout_add's backward formula: two kernels.
            ("bias + GELU + dropout, backward", bias_gelu_dropout_backward, (g, mask, x, b),
             lambda: ops.fused_bias_act_grad(
                 ops.packed_mask_scale(g, packed, 1 / (1 - P_DROP)), x, b, -1, "gelu"),
             3 * n * s + n // 8),
        ]
        for name, eager, args, fused, nbytes in cases:
            inductor = _compiled(eager)
            fns = {"eager": lambda e=eager, a=args: e(*a),
                   "Inductor": lambda c=inductor, a=args: c(*a), "fxmlir": fused}
            results.append(Result(name, dtype_name,
                                  timing.measure(fns, device, sizes.warmup, sizes.reps),
                                  bytes_moved=nbytes))
        torch._dynamo.reset()
    return results


# -- linear + GELU -----------------------------------------------------------------

def linear_gelu(x, w, b):
    return F.gelu(F.linear(x, w, b), approximate="tanh")


def linear_gelu_results(device: str, sizes: Sizes) -> list[Result]:
    tokens, k, n = sizes.linear
    results = []
    for dtype_name in sizes.dtypes:
        dtype = DTYPES[dtype_name]
        x = torch.randn(tokens, k, dtype=dtype, device=device, requires_grad=True)
        w = (torch.randn(n, k, dtype=dtype, device=device) / math.sqrt(k)).requires_grad_()
        b = torch.randn(n, dtype=dtype, device=device, requires_grad=True)
        g = torch.randn(tokens, n, dtype=dtype, device=device)
        inductor = _compiled(linear_gelu)
        forward = {
            "eager": lambda: linear_gelu(x, w, b),
            "Inductor": lambda: inductor(x, w, b),
            "fxmlir": lambda: ops.fused_linear_gelu(x, w, b, "tanh")[0],
            "matmul alone": lambda: F.linear(x, w, b),
        }
        if device == "cuda":  # cuBLASLt's GELU_BIAS epilogue, without aux
            forward["torch._addmm_activation"] = \
                lambda: torch._addmm_activation(b, x, w.t(), use_gelu=True)
        with torch.no_grad():
            results.append(Result("forward", dtype_name,
                                  timing.measure(forward, device, sizes.warmup, sizes.reps)))

        def step(fn: Callable[[], torch.Tensor]) -> Callable[[], Any]:
            return lambda: torch.autograd.grad(fn(), (x, w, b), g)

        both = {name: step(forward[name]) for name in ("eager", "Inductor", "fxmlir")}
        results.append(Result("forward + backward", dtype_name,
                              timing.measure(both, device, sizes.warmup, sizes.reps)))
        torch._dynamo.reset()
    return results


# -- training steps ----------------------------------------------------------------

def mlp_block(approximate: str) -> nn.Module:
    return nn.Sequential(nn.Linear(1024, 4096), nn.GELU(approximate=approximate),
                         nn.Dropout(P_DROP), nn.Linear(4096, 1024), nn.Dropout(P_DROP))


def _implementations(model: nn.Module, sizes: Sizes) -> dict[str, Callable]:
    # fxmlir's default outlines JIT regions: "no regions" shows what they
    # add. First calls run in this order, in one process: "no regions" before
    # the default, so that fxmlir's one-time start (its libraries, the MLIR
    # context) is not counted as what regions add.
    impls: dict[str, Callable] = {"eager": model, "Inductor": _compiled(model),
                                  "fxmlir no regions": _compiled(model, _fxmlir(codegen=False)),
                                  "fxmlir": _compiled(model, _fxmlir())}
    if sizes.cuda_graphs:  # the CUDA sizes
        impls["Inductor reduce-overhead"] = _compiled(model, mode="reduce-overhead")
        impls["fxmlir cudagraphs"] = _compiled(model, _fxmlir(cudagraphs=True))
    return impls


PROFILED = ("eager", "Inductor", "fxmlir", "fxmlir no regions")


def _profile(path: Path, title: str, calls: dict[str, Callable[[], Any]],
             device: str) -> None:
    """Appends torch.profiler's per-op table of 3 warm steps of each of
    PROFILED to `path`."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    sort = "cuda_time_total" if device == "cuda" else "self_cpu_time_total"
    with path.open("a") as out:
        for name in (n for n in PROFILED if n in calls):
            timing.synchronize(device)
            with profile(activities=activities) as prof:
                for _ in range(3):
                    calls[name]()
                timing.synchronize(device)
            out.write(f"=== {title}, {name}: 3 steps\n")
            out.write(prof.key_averages().table(sort_by=sort, row_limit=25) + "\n")


def step_call(step: Callable[[Callable], Any], fn: Callable,
              params: list[torch.Tensor]) -> Callable[[], Any]:
    """A timed call of `step` on the implementation `fn`: the gradients of
    `params` freed first, as a training loop's zero_grad(set_to_none) does."""
    def call() -> Any:
        for p in params:
            p.grad = None
        return step(fn)
    return call


def lm_step(device: str, ids: torch.Tensor, labels: torch.Tensor,
            autocast: bool) -> Callable[[Callable], Any]:
    """A language model's training step on `ids`: forward with its loss on
    `labels` (under bf16 autocast where `autocast`), then backward."""
    def step(fn: Callable) -> Any:
        with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
            loss = fn(input_ids=ids, labels=labels).loss
        loss.backward()
    return step


def _step_results(case: str, dtype: str, device: str, sizes: Sizes,
                  impls: dict[str, Callable], step: Callable[[Callable], Any],
                  params: list[torch.Tensor], profile: Path | None) -> Result:
    calls = {name: step_call(step, fn, params) for name, fn in impls.items()}
    extra: dict[str, dict[str, Any]] = {}

    def drop(failed: timing.CallFailed) -> None:
        """An implementation that raises loses its row, not the table's
        others (eager's, their baseline, is needed)."""
        if failed.name == "eager":
            raise failed
        print(f"{case}, {dtype}: {failed}", file=sys.stderr)
        del calls[failed.name]
        extra[failed.name] = {"error": failed.reason}

    for name, call in list(calls.items()):
        try:
            first = timing.first_call_seconds(call, device)
            extra[name] = {"first call s": first,
                           "peak extra MiB": timing.peak_extra_mib(call, device),
                           "saved MiB": None if "cudagraphs" in name or "reduce" in name
                           else timing.saved_mib(call, params)}
        except Exception as error:
            drop(timing.CallFailed(name, error))
    while True:
        try:
            timings = timing.measure(calls, device, sizes.warmup, sizes.step_reps)
            break
        except timing.CallFailed as failed:
            drop(failed)
    result = Result(case, dtype, timings)
    result.extra = extra
    if profile is not None:
        _profile(profile, f"{case}, {dtype}", calls, device)
    return result


def mlp_results(device: str, sizes: Sizes, profile: Path | None = None) -> list[Result]:
    batch, seq = sizes.mlp_tokens
    results = []
    for approximate, dtype_name in sizes.mlp_cases:
        torch._dynamo.reset()
        torch.manual_seed(0)
        dtype = DTYPES[dtype_name]
        model = mlp_block(approximate).to(device, dtype)
        x = torch.randn(batch, seq, 1024, dtype=dtype, device=device)
        g = torch.randn_like(x)
        gelu = "erf GELU" if approximate == "none" else "tanh GELU"
        results.append(_step_results(
            f"MLP block ({gelu})", dtype_name, device, sizes, _implementations(model, sizes),
            lambda fn: fn(x).backward(g), list(model.parameters()), profile))
    torch._dynamo.reset()
    return results


def _transformer_results(title: str, build: Callable[[], nn.Module], vocab: int,
                         device: str, sizes: Sizes, profile: Path | None,
                         masked: bool = False) -> list[Result]:
    """Training steps of a language model with its loss, f32 and bf16
    autocast: a causal LM's on every token, a masked LM's (`masked`) on a
    random 15 % of them (the others' labels -100)."""
    batch, seq = sizes.gpt2_tokens
    results = []
    for dtype_name in sizes.gpt2_cases:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = build().to(device).train()
        ids = torch.randint(0, vocab, (batch, seq), device=device)
        labels = ids.masked_fill(torch.rand(ids.shape, device=device) >= 0.15, -100) \
            if masked else ids
        autocast = dtype_name == "bf16"
        label = "bf16 autocast" if autocast else "f32"
        results.append(_step_results(title, label, device, sizes,
                                     _implementations(model, sizes),
                                     lm_step(device, ids, labels, autocast),
                                     list(model.parameters()), profile))
    torch._dynamo.reset()
    return results


def gpt2_model(vocab: int) -> nn.Module:
    """transformers' GPT-2, 4 layers, 512 wide, random init."""
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=512, n_head=8, vocab_size=vocab,
                                      n_positions=512))


def llama_model(vocab: int) -> nn.Module:
    """LLaMA-style: no biases, RMSNorm, SwiGLU, rotary embeddings; 4 layers,
    512 wide, random init."""
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(
        num_hidden_layers=4, hidden_size=512, num_attention_heads=8, num_key_value_heads=8,
        intermediate_size=1376, vocab_size=vocab, max_position_embeddings=512))


def bert_model(vocab: int) -> nn.Module:
    """transformers' BERT with its masked-LM head, 4 layers, 512 wide, random init."""
    from transformers import BertConfig, BertForMaskedLM

    return BertForMaskedLM(BertConfig(
        num_hidden_layers=4, hidden_size=512, num_attention_heads=8, intermediate_size=2048,
        vocab_size=vocab, max_position_embeddings=512))


def gpt2_results(device: str, sizes: Sizes, profile: Path | None = None) -> list[Result]:
    vocab = sizes.gpt2_vocab
    return _transformer_results("GPT-2 (4 layers, 512 wide)", lambda: gpt2_model(vocab),
                                vocab, device, sizes, profile)


def llama_results(device: str, sizes: Sizes, profile: Path | None = None) -> list[Result]:
    vocab = sizes.llama_vocab
    return _transformer_results("LLaMA-style (4 layers, 512 wide)", lambda: llama_model(vocab),
                                vocab, device, sizes, profile)


# A batch of one, the shape of most fine-tuning: its tokens are a JIT region's
# rows (at any other batch, the batch is), so that its regions share the
# threads as eager's kernels do.
BATCH_OF_ONE_TOKENS = {"cpu": (1, 256), "cuda": (1, 4096)}


def llama_batch_of_one_results(device: str, sizes: Sizes,
                               profile: Path | None = None) -> list[Result]:
    vocab = sizes.llama_vocab
    one = replace(sizes, gpt2_tokens=BATCH_OF_ONE_TOKENS[device])
    return _transformer_results("LLaMA-style, a batch of one", lambda: llama_model(vocab),
                                vocab, device, one, profile)


# The per-step overhead case: LLaMA-style at a size whose kernels take
# microseconds, so that a step's time is what runs around them (Python, the
# dispatcher, AOTAutograd's wrappers, Dynamo's guards, the autograd engine).
OVERHEAD_TOKENS = (1, 8)
OVERHEAD_VOCAB = 64


def tiny_llama_model(vocab: int) -> nn.Module:
    """llama_model's layers, 32 wide: 4 layers, 2 heads, SwiGLU 64 wide."""
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(
        num_hidden_layers=4, hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
        intermediate_size=64, vocab_size=vocab, max_position_embeddings=64))


def overhead_results(device: str, sizes: Sizes, profile: Path | None = None) -> list[Result]:
    # Steps of milliseconds: more of them, for medians as steady as the others'.
    tiny = replace(sizes, gpt2_tokens=OVERHEAD_TOKENS, step_reps=max(sizes.step_reps, 30))
    return _transformer_results("LLaMA-style (4 layers, 32 wide)",
                                lambda: tiny_llama_model(OVERHEAD_VOCAB), OVERHEAD_VOCAB,
                                device, tiny, profile)


def bert_results(device: str, sizes: Sizes, profile: Path | None = None) -> list[Result]:
    vocab = sizes.bert_vocab
    return _transformer_results("BERT (4 layers, 512 wide)", lambda: bert_model(vocab),
                                vocab, device, sizes, profile, masked=True)


def round_trip_results() -> list[dict[str, float]]:
    return [round_trip_time(nodes) for nodes in (100, 1000)]
