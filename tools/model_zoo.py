"""Tiny random-init transformers models trained through fxmlir: the zoo that
tests/python/test_models.py checks and tools/gen_model_table.py tabulates.

Each model keeps its architecture's default config (activation, biases,
layer layout) with sizes shrunk so that three training steps take seconds.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

import fxmlir
import fxmlir.dump
from fxmlir.roundtrip import FallbackWarning

STAGES = ("before_autodiff", "forward", "backward")
STEPS = 3
VOCAB = 96
SEQ = 12
BATCH = 2
_SMALL = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
              intermediate_size=64)


@dataclass(frozen=True)
class ZooModel:
    name: str
    build: Callable[[float], torch.nn.Module]  # dropout -> model
    inputs: Callable[[], dict[str, torch.Tensor]]
    # Linear layers followed by GELU: each must become one fused op.
    gelu_bias_sites: int


def _text_inputs() -> dict[str, torch.Tensor]:
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return {"input_ids": ids, "labels": ids}


def _image_inputs() -> dict[str, torch.Tensor]:
    return {"pixel_values": torch.randn(BATCH, 3, 16, 16),
            "labels": torch.randint(0, 2, (BATCH,))}


def _gpt2(p: float) -> torch.nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=VOCAB, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                        resid_pdrop=p, embd_pdrop=p, attn_pdrop=p,
                        bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config)


def _bert(p: float) -> torch.nn.Module:
    from transformers import BertConfig, BertForMaskedLM

    return BertForMaskedLM(BertConfig(vocab_size=VOCAB, max_position_embeddings=32,
                                      hidden_dropout_prob=p, attention_probs_dropout_prob=p,
                                      **_SMALL))


def _roberta(p: float) -> torch.nn.Module:
    from transformers import RobertaConfig, RobertaForMaskedLM

    return RobertaForMaskedLM(RobertaConfig(vocab_size=VOCAB, max_position_embeddings=40,
                                            hidden_dropout_prob=p,
                                            attention_probs_dropout_prob=p, **_SMALL))


def _vit(p: float) -> torch.nn.Module:
    from transformers import ViTConfig, ViTForImageClassification

    return ViTForImageClassification(ViTConfig(image_size=16, patch_size=8, num_labels=2,
                                               hidden_dropout_prob=p,
                                               attention_probs_dropout_prob=p, **_SMALL))


def _t5(p: float) -> torch.nn.Module:
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(vocab_size=VOCAB, d_model=32, d_kv=16, d_ff=64, num_layers=2,
                      num_decoder_layers=2, num_heads=2, dropout_rate=p,
                      decoder_start_token_id=0)
    return T5ForConditionalGeneration(config)


def _llama(p: float) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=VOCAB, max_position_embeddings=32,
                         num_key_value_heads=2, attention_dropout=p, **_SMALL)
    return LlamaForCausalLM(config)


# GPT-2: c_fc + gelu_new per layer. BERT, RoBERTa: intermediate dense + GELU
# per layer and the LM head's transform. ViT: intermediate per layer. T5
# (ReLU) and LLaMA (SiLU) have no GELU and no biases.
MODELS = (
    ZooModel("gpt2", _gpt2, _text_inputs, 2),
    ZooModel("bert", _bert, _text_inputs, 3),
    ZooModel("roberta", _roberta, _text_inputs, 3),
    ZooModel("vit", _vit, _image_inputs, 2),
    ZooModel("t5", _t5, _text_inputs, 0),
    ZooModel("llama", _llama, _text_inputs, 0),
)


@dataclass
class Run:
    losses: list[float]
    fallbacks: list[str]
    # stage -> fused op -> count, over every graph and subgraph body.
    fused: dict[str, Counter]
    # Unfused aten.gelu ops left in forward graphs.
    unfused_gelus: int
    # stage -> (ops inside JIT regions, ops that regions could hold) after
    # autodiff: what compute_ops_in_regions counts.
    region_ops: dict[str, tuple[int, int]]


def _train(model: torch.nn.Module, step: Callable, inputs: dict, autocast: bool,
           ) -> list[float]:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(STEPS):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = step(**inputs).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _latest_graphs(dump_dir: Path) -> list[Path]:
    """One dump folder per compiled frame and graph in it
    (<run>/graph_<frame>_<recompile>_<n>): its last recompile (a recompile,
    e.g. after a config change, would count the same sites twice)."""
    latest: dict[tuple[str, str], Path] = {}
    for folder in sorted(dump_dir.glob("*/graph_*"), key=lambda f: int(f.name.split("_")[2])):
        _, frame, _, number = folder.name.split("_")
        latest[frame, number] = folder
    return list(latest.values())


# Ops that are not the non-GEMM compute regions are for: GEMMs and attention
# (library kernels), views and layout changes (no arithmetic), graph
# plumbing, and the regions' own calls.
_NOT_REGION_WORK = re.compile(
    r"fxmlir\.(none|get_attr|mlir_jit|aten\.(mm|addmm|bmm|baddbmm|_scaled_dot_product\w*"
    r"|view|_unsafe_view|reshape|t|transpose\.int|permute|expand|unsqueeze|squeeze\.\w+"
    r"|alias|detach|select\.int|slice\.Tensor|split\.Tensor|split_with_sizes))$")
_OP = re.compile(r'^\s*(?:%[^=]+=\s*)?"?(fxmlir\.[\w.]+)"?', re.MULTILINE)


def compute_ops_in_regions(module_text: str) -> tuple[int, int]:
    """(inside, total): the non-GEMM compute ops of a round-tripped module
    that JIT regions hold, and all of them, inside regions or not."""
    inside = total = 0
    for function in re.split(r"^\s*func\.func ", module_text, flags=re.MULTILINE)[1:]:
        ops = [op for op in _OP.findall(function) if not _NOT_REGION_WORK.match(op)]
        total += len(ops)
        if function.startswith("private @jit_"):
            inside += len(ops)
    return inside, total


def _dump_counts(dump_dir: Path) -> tuple[dict[str, Counter], int, dict[str, tuple[int, int]]]:
    fused = {stage: Counter() for stage in STAGES}
    unfused = 0
    region_ops = {stage: (0, 0) for stage in STAGES[1:]}
    for graph in _latest_graphs(dump_dir):
        for stage in STAGES:
            for summary in graph.glob(f"{stage}/**/summary.json"):
                fused[stage].update(json.loads(summary.read_text())["fused_ops"])
        for final in graph.glob("forward/**/final.mlir"):
            unfused += final.read_text().count("fxmlir.aten.gelu ")
        for stage in region_ops:
            for final in graph.glob(f"{stage}/**/final.mlir"):
                inside, total = compute_ops_in_regions(final.read_text())
                region_ops[stage] = (region_ops[stage][0] + inside,
                                     region_ops[stage][1] + total)
    return fused, unfused, region_ops


def train_both(entry: ZooModel, autocast: bool, dropout: float = 0.0,
               passes: str = "default", codegen: bool | None = None) -> tuple[Run, list[float]]:
    """The model trained through fxmlir, and its eager twin's losses; codegen
    None is fxmlir's default (CPU regions where they pay)."""
    torch.manual_seed(0)
    model = entry.build(dropout).train()
    eager = copy.deepcopy(model)
    inputs = entry.inputs()
    torch._dynamo.reset()
    with tempfile.TemporaryDirectory() as folder:
        settings = {} if codegen is None else {"codegen": codegen}
        compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=folder,
                                                               passes=passes, **settings))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", FallbackWarning)
            losses = _train(model, compiled, inputs, autocast)
        fused, unfused, region_ops = _dump_counts(Path(folder))
        # graph.svg renders in the background: the folder must not go
        # while a render still writes into it.
        fxmlir.dump.wait_for_renders()
    torch._dynamo.reset()
    fallbacks = [str(w.message) for w in caught if issubclass(w.category, FallbackWarning)]
    return (Run(losses, fallbacks, fused, unfused, region_ops),
            _train(eager, eager, inputs, autocast))
