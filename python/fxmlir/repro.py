"""Reproducing a fallback: a failed round trip's folder holds repro.py (written
by fxmlir.repro_script), which calls `rerun` here: `python repro.py` or
`fxmlir repro FOLDER` runs that round trip again with the run's settings, in
a fresh process. It raises where fxmlir failed, or says the failure did not
reproduce (one that depends on the run: a full disk, an injected fault).

The graph is rebuilt by tracing the script's module symbolically and
propagating fake tensors of the example inputs' shapes and dtypes, so calls
that take no tensor (a grad-mode switch) run while tracing rather than
staying in the graph."""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
from torch.fx.passes.fake_tensor_prop import FakeTensorProp
from torch.utils import _pytree as pytree

from fxmlir.config import Options
from fxmlir.roundtrip import round_trip


def rerun(module: torch.nn.Module, inputs: list[Any], stage: str,
          settings: dict[str, Any]) -> int:
    """Runs the `stage` round trip of `module`'s graph (raising as the run
    failed); if it passes, prints how far its result is from the graph's and
    returns 0."""
    gm = fx.symbolic_trace(module)
    FakeTensorProp(gm).propagate(*inputs)  # the values' types, as the graph recorded them
    exported = round_trip(gm, "repro", stage, Options.from_env().updated(settings))
    expected = pytree.tree_leaves(gm(*inputs))
    got = pytree.tree_leaves(exported(*inputs))
    diff = max((float((a.double() - b.double()).abs().max()) for a, b in zip(expected, got)
                if isinstance(a, torch.Tensor) and a.numel() and a.is_floating_point()),
               default=0.0)
    print(f"fxmlir: the {stage} round trip passed here: the failure did not reproduce "
          f"(largest difference from the graph's outputs: {diff:.3g})")
    return 0
