"""Autocast made explicit in a Dynamo graph, so that patterns see the casts.

Under autocast (entered inside the compiled region, `_enter_autocast` /
`_exit_autocast` nodes, or around it, the state when the graph is compiled)
an op's recorded value may have another dtype than its inputs: `linear` of
f32 tensors gives bf16. Patterns that compare dtypes then match nothing. This
pass rewrites such a graph into one that computes the same values without
autocast: each op whose dtype autocast changed gets its floating inputs cast
(`aten._to_copy`) to the dtype autocast ran it in, and the enter/exit nodes
go. The graph then means the same with or without the ambient autocast (a
cast to a tensor's own dtype is a no-op for autocast), and AOTAutograd
differentiates the casts as it would autocast's.

Which inputs autocast cast is observed, not guessed: each op of an autocast
region runs once on its fake inputs under that autocast state (weight cache
off) with a dispatch mode recording the `_to_copy` calls autocast makes; the
rewrite casts exactly those inputs, and is checked by running the op on them
without autocast. A graph where that does not hold, or where autocast would
reach into a subgraph (a checkpointed body), is returned unchanged.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensor
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from fxmlir.fake_values import fake_value

log = logging.getLogger("fxmlir")

# Device types autocast may be enabled for -> its dtype (None: disabled).
State = dict[str, "torch.dtype | None"]
_DEVICE_TYPES = ("cpu", "cuda")


class _Unhandled(Exception):
    """The graph is left as it is; the message says why."""


def _ambient_state() -> State:
    return {d: torch.get_autocast_dtype(d) if torch.is_autocast_enabled(d) else None
            for d in _DEVICE_TYPES}


def _value(node: Any) -> Any:
    """An argument's fake value: a node's, or the constant itself."""
    return fake_value(node) if isinstance(node, fx.Node) else node


def _floating_dtypes(value: Any) -> list[torch.dtype]:
    return [t.dtype for t in pytree.tree_leaves(value)
            if isinstance(t, torch.Tensor) and t.is_floating_point()]


@contextlib.contextmanager
def _autocast_as(state: State, fake_mode: Any) -> Iterator[None]:
    """Fake mode with autocast set to `state` (all off for {}), weight cache off."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(fake_mode)
        for device_type in _DEVICE_TYPES:
            dtype = state.get(device_type)
            if dtype is not None:
                stack.enter_context(torch.autocast(device_type, dtype=dtype,
                                                   cache_enabled=False))
            elif torch.is_autocast_enabled(device_type):
                stack.enter_context(torch.autocast(device_type, enabled=False))
        yield


class _CastRecorder(TorchDispatchMode):
    """Records (input tensor id, dtype) of every `_to_copy` dispatched."""

    def __init__(self) -> None:
        super().__init__()
        self.casts: set[tuple[int, torch.dtype]] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten._to_copy.default and kwargs.get("dtype") is not None:
            self.casts.add((id(args[0]), kwargs["dtype"]))
        return func(*args, **kwargs)


def _run(node: fx.Node, args: tuple, kwargs: dict) -> Any:
    if node.op == "call_method":
        return getattr(args[0], node.target)(*args[1:], **kwargs)
    return node.target(*args, **kwargs)


def _is_in_place(node: fx.Node) -> bool:
    if node.op == "call_method":
        return node.target.endswith("_") and not node.target.endswith("__")
    if isinstance(node.target, torch._ops.OpOverload):
        return any(a.alias_info is not None and a.alias_info.is_write
                   for a in node.target._schema.arguments)
    return False


class _Rewriter:
    def __init__(self, gm: fx.GraphModule, fake_mode: Any) -> None:
        self.gm = gm
        self.fake_mode = fake_mode
        self.graph = fx.Graph()
        self.env: dict[fx.Node, fx.Node] = {}
        # (input, dtype) -> its cast, so an input is cast once.
        self.casts: dict[tuple[fx.Node, torch.dtype], fx.Node] = {}

    def rewrite(self, ambient: State) -> fx.GraphModule:
        stack = [ambient]
        for node in self.gm.graph.nodes:
            if node.op == "call_function" and node.target is _enter_autocast:
                stack.append(self._entered(node, stack[-1]))
            elif node.op == "call_function" and node.target is _exit_autocast:
                stack.pop()
            elif node.op in ("call_function", "call_method", "call_module") and \
                    any(stack[-1].values()):
                self._copy_with_casts(node, stack[-1])
            else:
                self._copy(node)
        gm = fx.GraphModule(self.gm, self.graph, self.gm.__class__.__name__)
        gm.meta = dict(getattr(self.gm, "meta", {}))
        return gm

    def _entered(self, node: fx.Node, outer: State) -> State:
        if any(user.target is not _exit_autocast for user in node.users):
            raise _Unhandled(f"{node.name} is used by more than its exit")
        device_type, dtype, enabled = node.args[:3]
        if device_type not in _DEVICE_TYPES:
            raise _Unhandled(f"autocast for device type {device_type!r}")
        return {**outer, device_type: (dtype or torch.get_autocast_dtype(device_type))
                if enabled else None}

    def _copy(self, node: fx.Node, args: tuple | None = None,
              kwargs: dict | None = None) -> fx.Node:
        new = self.graph.node_copy(node, lambda n: self.env[n])
        if args is not None:
            new.args, new.kwargs = args, kwargs
        self.env[node] = new
        return new

    def _copy_with_casts(self, node: fx.Node, state: State) -> None:
        if node.op == "call_module" or isinstance(node.target, torch._ops.HigherOrderOperator):
            raise _Unhandled(f"{node.name} may run a subgraph under autocast")
        expected = _floating_dtypes(_value(node))
        if not expected or _is_in_place(node):
            self._copy(node)
            return
        casts = self._recorded_casts(node, state) - self._recorded_casts(node, {})
        if not casts:
            self._copy(node)
            return
        dtypes = dict(casts)
        if len(dtypes) != len(casts):
            raise _Unhandled(f"{node.name}: an input is cast to two dtypes")

        def cast(arg: Any) -> Any:
            dtype = dtypes.get(id(_value(arg)))
            return self._cast(arg, dtype) if dtype is not None else self.env[arg]

        new_args, new_kwargs = pytree.tree_map_only(fx.Node, cast, (node.args, node.kwargs))
        fake_args, fake_kwargs = pytree.tree_map_only(fx.Node, _value, (new_args, new_kwargs))
        with _autocast_as({}, self.fake_mode):
            cast_result = _run(node, fake_args, fake_kwargs)
        if _floating_dtypes(cast_result) != expected:
            raise _Unhandled(f"{node.name}: its inputs cast as autocast does do not "
                             f"give {expected}")
        self._copy(node, new_args, new_kwargs)

    def _recorded_casts(self, node: fx.Node, state: State) -> set[tuple[int, torch.dtype]]:
        args, kwargs = pytree.tree_map_only(fx.Node, _value, (node.args, node.kwargs))
        recorder = _CastRecorder()
        with _autocast_as(state, self.fake_mode), recorder:
            _run(node, args, kwargs)
        return recorder.casts

    def _cast(self, arg: fx.Node, dtype: torch.dtype) -> fx.Node:
        key = (arg, dtype)
        if key not in self.casts:
            cast = self.graph.call_function(torch.ops.aten._to_copy.default,
                                            (self.env[arg],), {"dtype": dtype})
            with _autocast_as({}, self.fake_mode):
                cast.meta["val"] = torch.ops.aten._to_copy.default(_value(arg), dtype=dtype)
            self.casts[key] = cast
        return self.casts[key]


def make_casts_explicit(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` computing the same values with its autocast casts explicit and no
    autocast nodes; `gm` itself when there is no autocast or the rewrite
    cannot prove a node's dtype (see the module docstring)."""
    ambient = _ambient_state()
    entered = any(n.op == "call_function" and n.target is _enter_autocast
                  for n in gm.graph.nodes)
    if not entered and not any(ambient.values()):
        return gm
    modes = [v.fake_mode for n in gm.graph.nodes
             for v in pytree.tree_leaves(_value(n)) if isinstance(v, FakeTensor)]
    if not modes:
        return gm
    try:
        return _Rewriter(gm, modes[0]).rewrite(ambient)
    except _Unhandled as e:
        log.info("fxmlir: autocast kept implicit: %s", e)
        return gm
