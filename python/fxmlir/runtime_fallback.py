"""The last line of defence: a round-tripped graph that raises when it runs
(a kernel's error, a layout a later view cannot take) is replaced by the
original graph for good, with a FallbackWarning naming the graph, the node
and the reason, so that training goes on; one that AOTAutograd cannot trace
before autodiff is replaced by Dynamo's graph the same way.

The original graph runs on the same inputs: after autodiff graphs are
functional, so running it again is safe; if it raises too, the error is the
user's and is raised as is.

With the `strict` setting both raise FallbackError instead, with the same
message.
"""

from __future__ import annotations

import linecache
import re
import traceback
from typing import Any, Callable

import torch
import torch.fx as fx
from torch.fx._lazy_graph_module import _LazyGraphModule
from torch.fx.graph import _BoxedCodeGen  # AOTAutograd's boxed convention, as its own graphs

from fxmlir import direct_calls, graph_program
from fxmlir.fallback import fall_back

# Writes a failure's folder from the failing call's inputs and the message;
# says where, and how to avoid the failure.
Dump = Callable[[list[Any], str], str]

# The generated code of a GraphModule: "<eval_with_key>.12".
_FX_CODE = re.compile(r"^<eval_with_key>")
_ASSIGNED = re.compile(r"^\s*(\w+)\s*=")


def _failing_node(error: BaseException) -> str | None:
    """The FX node whose line of the generated code raised, if any."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if _FX_CODE.match(frame.filename):
            line = frame.line or linecache.getline(frame.filename, frame.lineno or 0)
            assigned = _ASSIGNED.match(line or "")
            return assigned.group(1) if assigned else (line or "").strip() or None
    return None


def _describe(error: BaseException) -> str:
    """"node 'view_3': RuntimeError: view size is not compatible ..."."""
    # A graph program names the node on the error (fxmlir/graph_program.py).
    node = getattr(error, "fx_node", None) or _failing_node(error)
    where = f"node '{node}'" if node else "the graph"
    lines = str(error).strip().splitlines()
    return f"{where}: {type(error).__name__}: {lines[0] if lines else ''}"


def warn_traced_fallback(graph: str, error: BaseException, strict: bool,
                         dump: Callable[[str], str] | None = None) -> None:
    """AOTAutograd could not trace the round-tripped graph before autodiff:
    the original one is traced instead (raises under `strict`); `dump`
    writes the failure's folder from the message and says where."""
    message = (f"fxmlir: {graph} graph kept as is: AOTAutograd failed on the round-tripped "
               f"graph: {_describe(error)}")
    if dump is not None:
        message += f" ({dump(message)})"
    fall_back(message, strict, error, stacklevel=3)


class RuntimeFallback:
    """Calls `compiled` in AOTAutograd's boxed convention (it takes the list
    of inputs and empties it, so that each input dies after its last use in
    the graph, as in AOTAutograd's own graphs); on its first call, `original`
    on the same inputs if it fails, and from then on. After a first call that
    succeeded the inputs are not kept for a rerun (they would stay alive
    through the whole graph): a later failure raises FallbackError."""

    def __init__(self, compiled: Callable[[list[Any]], Any], original: Callable[..., Any],
                 graph: str, strict: bool = False, dump: Dump | None = None) -> None:
        self.compiled = compiled
        self.original = original
        self.graph = graph
        self.strict = strict
        self.dump = dump
        self.failed = False
        self.succeeded = False
        # AOTAutograd passes the inputs as one list; on the instance, so that
        # wrappers copying its __dict__ (torch._dynamo.disable) keep it.
        self._boxed_call = True

    def __call__(self, args: list[Any]) -> Any:
        if self.failed:
            return self.original(*args)
        if self.succeeded:
            try:
                return self.compiled(args)
            except Exception as error:
                fall_back(f"fxmlir: {self.graph} graph failed at run time, after its first "
                          f"call ran, when its inputs are no longer kept for a rerun: "
                          f"{_describe(error)}", True, error)
        held = list(args)
        try:
            result = self.compiled(args)
        except Exception as error:
            message = (f"fxmlir: {self.graph} graph failed at run time and is replaced by "
                       f"the original graph: {_describe(error)}")
            if self.dump is not None:
                message += f" ({self.dump(held, message)})"
            if self.strict:
                fall_back(message, True, error)  # raises FallbackError
            result = self.original(*held)  # the user's own error, if any, raises here
            self.failed = True
            fall_back(message, False, stacklevel=2)
            return result
        self.succeeded = True
        return result


def _below_autograd(forward: Callable[..., Any]) -> Callable[..., Any]:
    """`forward` with the dispatcher's autograd keys skipped. AOTAutograd's
    graphs are differentiated already, yet each fused op's Python autograd
    kernel (torch.library.register_autograd) still ran on every call, grad
    mode off, and redispatched: about 13 us an op, half of what fxmlir's
    step cost beyond Inductor's on a small MLP. Views and in-place version
    counters (ADInplaceOrView) are kept."""
    def run(*args: Any) -> Any:
        with torch._C._AutoDispatchBelowAutograd():
            return forward(*args)

    return run


def guarded(compiled: fx.GraphModule, original: fx.GraphModule,
            graph: str, strict: bool = False, dump: Dump | None = None,
            programs: bool = True) -> Callable[[list[Any]], Any]:
    """`compiled`'s forward in the boxed convention, below autograd (an
    after-autodiff graph), falling back to `original`'s when its first call
    raises (`dump` writes the failure's folder); just `compiled`'s when it
    is the original (nothing to fall back to). The body runs as a graph
    program where it can (and `programs`), else as its generated Python."""
    compiled.graph.set_codegen(_BoxedCodeGen())
    compiled.recompile()
    # The generated forward itself, not a lazy one that calls the module.
    _LazyGraphModule.force_recompile(compiled)
    program = graph_program.forward(compiled, graph) if programs else None
    forward = (program[0] if program is not None else
               direct_calls.forward(compiled.code, type(compiled).forward.__globals__, compiled))
    return guard(forward, None if compiled is original else original.forward,
                 graph, strict, dump)


def guard(forward: Callable[[list[Any]], Any], original: Callable[..., Any] | None,
          graph: str, strict: bool = False, dump: Dump | None = None
          ) -> Callable[[list[Any]], Any]:
    """guarded() for generated forwards: `forward` takes the boxed list of
    inputs, `original` (None: nothing to fall back to) the inputs."""
    forward = _below_autograd(forward)
    if original is None:
        def boxed(args: list[Any]) -> Any:
            return forward(args)

        boxed._boxed_call = True  # type: ignore[attr-defined]
        return boxed
    return RuntimeFallback(forward, _below_autograd(original), graph, strict, dump)
