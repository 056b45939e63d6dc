"""Tiny random-init transformers models (tools/model_zoo.py) train through
fxmlir like eager at dropout 0, in f32 and under bf16 CPU autocast, without a
fallback, with every GELU after a bias fused before and after autodiff and
JIT regions (on by default on CPU) in both graphs after autodiff."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers", reason="transformers is not installed "
                    "(scripts/setup.sh installs it)")

_spec = importlib.util.spec_from_file_location(
    "model_zoo", Path(__file__).parents[2] / "tools" / "model_zoo.py")
model_zoo = importlib.util.module_from_spec(_spec)
sys.modules["model_zoo"] = model_zoo  # dataclasses look their module up
_spec.loader.exec_module(model_zoo)

# bf16 rounds differently once GELU and its bias, or a region, are one kernel.
TOLERANCE = {False: dict(rtol=1e-5, atol=1e-5), True: dict(rtol=2e-3, atol=2e-3)}


@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "bf16"])
@pytest.mark.parametrize("entry", model_zoo.MODELS, ids=lambda m: m.name)
def test_model_trains_like_eager_with_fusions_and_jit_regions(entry, autocast):
    run, eager_losses = model_zoo.train_both(entry, autocast)
    assert run.fallbacks == []
    torch.testing.assert_close(run.losses, eager_losses, **TOLERANCE[autocast])
    sites = entry.gelu_bias_sites
    assert run.fused["before_autodiff"]["fxmlir.fused_bias_act"] == sites
    assert run.fused["forward"]["fxmlir.fused_bias_act"] == sites
    assert run.fused["backward"]["fxmlir.fused_bias_act_grad"] == sites
    assert run.unfused_gelus == 0
    # Layer or RMS norms with their residual adds, the attention's scale,
    # mask and softmax, the loss: regions in both graphs of every model.
    for stage in ("forward", "backward"):
        assert run.fused[stage]["fxmlir.mlir_jit"] > 0
        inside, total = run.region_ops[stage]
        assert 0 < inside <= total


def test_dropout_after_a_bias_fuses_in_gpt2():
    # GPT-2's residual dropouts follow c_proj's bias: one fused dropout each
    # (2 per layer, with the residual add), its packed mask drawn in forward
    # and read by backward.
    (gpt2,) = [m for m in model_zoo.MODELS if m.name == "gpt2"]
    run, eager_losses = model_zoo.train_both(gpt2, autocast=False, dropout=0.1)
    assert run.fallbacks == []
    assert run.fused["before_autodiff"]["fxmlir.fused_bias_dropout_add"] == 4
    assert run.fused["backward"]["fxmlir.packed_mask_scale"] == 4
    # Other masks than eager's: the loss falls all the same.
    assert run.losses[-1] < run.losses[0]
