"""CUDA graphs over the graphs fxmlir compiles (`cudagraphs=True`,
FXMLIR_CUDA_GRAPHS=1).

PyTorch's own CUDA-graph trees (the machinery of torch.compile's
"cudagraphs" backend and of Inductor's mode="reduce-overhead") record each
compiled forward and backward graph once per input shape and then replay it:
a step launches one graph instead of one kernel per op, and the Python and
dispatcher work of the ops is gone from the step. As with reduce-overhead,
a graph's outputs live in memory the next replay of that graph reuses.

Random ops draw new values at each replay: fxmlir's kernels read the Philox
seed and offset on the device, from the state torch's generator advances for
every replay. A graph that cannot be captured (CPU tensors, several devices,
ops torch marks unsafe) runs as it is, with a warning saying why.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import torch.fx as fx
from torch._dynamo.backends import cudagraphs as dynamo_cudagraphs
from torch._inductor import cudagraph_trees
from torch._inductor.cudagraph_utils import BoxedDeviceIndex, get_placeholder_info
from torch._inductor.utils import BoxedBool, count_tangents, num_fw_fixed_arguments


class CudaGraphsSkipped(UserWarning):
    """cudagraphs=True was asked for a graph CUDA graphs cannot capture."""


class CudaGraphs:
    """The CUDA graphs of one graph Dynamo compiled: its forward, backward
    and inference graphs share the device and the decision to skip."""

    def __init__(self, graph_id: str, num_dynamo_inputs: int) -> None:
        self.graph_id = graph_id
        self.num_dynamo_inputs = num_dynamo_inputs
        self.enabled = BoxedBool(True)
        self.device = BoxedDeviceIndex(None)

    def _skipped(self, stage: str, graph: fx.GraphModule, fixed: int) -> bool:
        reason = dynamo_cudagraphs.check_for_skip(graph, fixed)
        if reason:
            warnings.warn(f"fxmlir: {self.graph_id}/{stage}: cudagraphs=True has no effect: "
                          f"{reason}", CudaGraphsSkipped, stacklevel=3)
        return bool(reason)

    def _record(self, graph: fx.GraphModule, compiled: Callable[..., Any],
                inputs: list[Any], fixed: int, **kind: bool) -> Callable[..., Any]:
        replay = cudagraph_trees.cudagraphify_impl(
            compiled, inputs, range(fixed), device_index=self.device.value,
            stack_traces=dynamo_cudagraphs.get_stack_traces(graph),
            placeholders=get_placeholder_info(graph.graph),
            mutated_input_idxs=dynamo_cudagraphs.find_input_mutations(graph.graph), **kind)
        replay._boxed_call = True
        return replay

    def forward(self, stage: str, graph: fx.GraphModule, compiled: Callable[..., Any],
                inputs: list[Any]) -> Callable[..., Any]:
        """The forward (or inference) graph's replay. `graph` is the graph
        AOTAutograd gave (its metadata: devices, placeholders, mutations),
        `compiled` the boxed function that runs its round trip."""
        fixed = num_fw_fixed_arguments(self.num_dynamo_inputs, len(inputs))
        if self._skipped(stage, graph, fixed):
            BoxedBool.disable(self.enabled)
            return compiled
        self.device.set(dynamo_cudagraphs.get_device_index(graph))
        return self._record(graph, compiled, inputs, fixed, is_backward=False,
                            is_inference=stage == "inference")

    def backward(self, graph: fx.GraphModule, compiled: Callable[..., Any],
                 inputs: list[Any]) -> Callable[..., Any]:
        if not self.enabled:
            return compiled
        fixed = count_tangents(graph)
        if self._skipped("backward", graph, fixed):
            # The forward replays from the trees: tell them backward runs.
            manager = cudagraph_trees.get_manager(self.device.value or 0,
                                                  create_if_none_exists=False)

            def run(args: list[Any]) -> Any:
                if manager is not None:
                    manager.set_to_running_backward()
                return compiled(args)

            run._boxed_call = True
            return run
        return self._record(graph, compiled, inputs, fixed, is_backward=True,
                            is_inference=False)
