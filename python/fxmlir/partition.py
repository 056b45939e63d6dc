"""AOTAutograd's partition of the joint forward + backward graph, as fxmlir
runs it: the joint graph's common subexpressions eliminated without
Inductor (fxmlir.joint_cse, in place of min-cut's own CSE, which imports
Inductor's pattern matcher: half a second of a process's first call),
mixed-dtype layer norms' statistics retyped (fxmlir.layer_norm_stats),
then torch's partition."""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.fx as fx

from fxmlir.joint_cse import eliminate_common_subexpressions
from fxmlir.layer_norm_stats import fix_statistics


def prepared(partition: Callable[..., Any]) -> Callable[..., Any]:
    """`partition` (an AOTAutograd partition_fn) on the prepared joint graph."""
    def partition_prepared(joint: fx.GraphModule, joint_inputs: Any, **kwargs: Any) -> Any:
        eliminate_common_subexpressions(joint.graph)
        joint.recompile()
        fix_statistics(joint)
        with torch._functorch.config.patch(cse=False):
            return partition(joint, joint_inputs, **kwargs)
    return partition_prepared
