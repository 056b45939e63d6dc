"""Warm restarts: AOTAutograd's own disk cache (torch's AOTAutogradCache,
the one Inductor's graphs use) keeps fxmlir's forward and backward graphs,
so that another process compiling the same graph with the same settings
skips AOTAutograd's trace and partition and both round trips.

Each stage's graph is handed to AOTAutograd as a CompiledStage, an
OutputCode that the cache stores whole (its bundled form): the generated
Python source of the round-tripped graph and of the graph it falls back to,
the globals that source names and the constants it reads. The key's
salt is fxmlir's version, the identity of its installed files, the CPU's
vector extensions and the compile's settings. A stage during which
anything fell back is not stored, so that the next process tries again and
warns again.

The key is fxmlir's own (`cache_key`, in place of torch's, which costs
0.5 s a process: it imports and hashes all of Inductor's backends): the
graph's code and constants, its inputs' metadata and aliasing, the grad,
autocast and determinism modes, AOTAutograd's configuration, torch's
version and fxmlir's salt. What torch checks on a hit stays torch's: the
shape guards an entry was compiled under.

On unless torch's cache switches say otherwise (TORCHINDUCTOR_AUTOGRAD_CACHE=0,
TORCHINDUCTOR_FORCE_DISABLE_CACHES=1); off when dumping (dump_dir: the dumps
come from the round trips) or with cudagraphs. Entries live where torch
keeps its caches (TORCHINDUCTOR_CACHE_DIR, under aotautograd/).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib
import json
import logging
import pickle
import types
from unittest import mock
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
import torch.fx as fx
from torch._functorch import config as functorch_config
from torch._functorch._aot_autograd import autograd_cache
from torch._functorch._aot_autograd.autograd_cache import (
    BypassAOTAutogradCache,
    should_use_local_autograd_cache,
)
from torch._functorch._aot_autograd.schemas import SerializableAOTDispatchCompiler
from torch._inductor.output_code import OutputCode
from torch.multiprocessing.reductions import StorageWeakRef

from fxmlir import cpu_products, direct_calls, graph_program
from fxmlir._version import __version__
from fxmlir.config import Options
from fxmlir.runtime_fallback import guard

log = logging.getLogger("fxmlir")

# The attribute of the graph handed to AOTAutograd that salts its cache key
# (AOTAutograd's key pickles the graph module's attributes with its code).
SALT_ATTRIBUTE = "_fxmlir_cache_salt"


def enabled(options: Options) -> bool:
    """Whether this compile reads and writes the cache."""
    return (should_use_local_autograd_cache() and options.dump_dir is None
            and not options.cudagraphs and hasattr(autograd_cache, "autograd_cache_key"))


@contextlib.contextmanager
def caching(gm: fx.GraphModule, options: Options) -> Iterator[None]:
    """AOTAutograd's cache on for the compile of `gm`, in its bundled form
    (the OutputCode stored whole), with the backward compiled at once (the
    entry is written once both stages are compiled; lazily, that would be
    at the first backward, outside this context)."""
    setattr(gm, SALT_ATTRIBUTE, salt(options))
    with functorch_config.patch(bundled_autograd_cache=True,
                                force_non_lazy_backward_lowering=True), \
            mock.patch.object(autograd_cache, "autograd_cache_key", cache_key):
        yield


def cache_key(mod: Any, example_inputs: list[Any], aot_config: Any,
              compiler_config_extra: Any = None) -> tuple[str, list[str]]:
    """AOTAutograd's cache key for `mod` as fxmlir compiles it (the
    signature of torch's autograd_cache_key, which it replaces)."""
    gm = mod.gm if isinstance(mod, torch._dynamo.utils.GmWrapper) else mod
    # Placeholder names normalized, Dynamo's bookkeeping fields set aside.
    with autograd_cache.sanitize_gm_for_cache(gm):
        autograd_cache.check_cacheable(gm)
        cacheable = aot_config.to_cacheable()
        details = [
            getattr(gm, SALT_ATTRIBUTE), torch.__version__, torch.version.git_version,
            [(name, module.code) for name, module in gm.named_modules()
             if isinstance(module, fx.GraphModule)],
            [(name, _tensor_key(t, values=True))
             for name, t in (*gm.named_parameters(), *gm.named_buffers())],
            [_tensor_key(x) if isinstance(x, torch.Tensor) else repr(x) for x in example_inputs],
            _aliases(example_inputs),
            torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),
            [(device, torch.get_autocast_dtype(device))
             for device in torch._C._autocast_supported_devices()
             if torch.is_autocast_enabled(device)],
            hashlib.sha256(functorch_config.save_config()).hexdigest(),
            [cacheable.num_params_buffers, cacheable.keep_inference_input_mutations,
             cacheable.is_export, cacheable.no_tangents, cacheable.dynamic_shapes,
             cacheable.aot_autograd_arg_pos_to_source, cacheable.static_input_indices,
             cacheable.pre_dispatch],
        ]
    digest = hashlib.sha256(repr(details).encode()).hexdigest()
    return autograd_cache.AOTAUTOGRAD_CACHE_PREFIX + "fxmlir" + digest, []


def _tensor_key(t: torch.Tensor, values: bool = False) -> Any:
    """A tensor's metadata as AOTAutograd's key reads it (sizes, strides,
    dtype, device, layout, requires_grad, ...), with a digest of its values
    for a graph's own constants."""
    meta = repr(autograd_cache.extract_tensor_metadata_for_cache_key(t))
    if not values:
        return meta
    data = t.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
    return meta, hashlib.sha256(data.numpy().tobytes()).hexdigest()


def _aliases(example_inputs: list[Any]) -> list[int]:
    """For each tensor input, the index of the first input sharing its
    storage: AOTAutograd compiles aliased inputs differently."""
    first: dict[Any, int] = {}
    return [first.setdefault(StorageWeakRef(x.untyped_storage()), i)
            for i, x in enumerate(example_inputs) if isinstance(x, torch.Tensor)]


def serializable(compile_graph: Callable[[fx.GraphModule, list[Any]], CompiledStage]
                 ) -> SerializableAOTDispatchCompiler:
    """A stage's compiler as AOTAutograd's cache takes it."""
    return SerializableAOTDispatchCompiler(CompiledStage, compile_graph)


def salt(options: Options) -> str:
    """fxmlir's part of the key: its version and files, the CPU's kind, and
    the settings (all but dump_dir, which turns the cache off)."""
    settings = {f.name: _stable(getattr(options, f.name))
                for f in dataclasses.fields(options) if f.name != "dump_dir"}
    # The CPU's vector extensions and 16-bit GEMMs: the JIT's cost model
    # decided the regions, and the products widened, for this machine's kind
    # (a cache folder may be shared).
    machine = [torch.backends.cpu.get_cpu_capability(), cpu_products.widened_dtypes()]
    text = json.dumps([__version__, _installed_files(), machine, settings], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _stable(value: Any) -> Any:
    """`value` in a form whose JSON text is the same in every process (sets
    sorted: their order follows string hashing, which varies)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _stable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return sorted(_stable(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_stable(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


@functools.cache
def _installed_files() -> list[tuple[str, int, int]]:
    """Name, size and modification time of each file of the installed package
    (its Python modules and libraries): a rebuild or an edit is a new key."""
    package = Path(__file__).parent
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                  for p in package.iterdir() if p.is_file())


@dataclasses.dataclass
class _Source:
    """A graph's generated forward without the graph: its source, the globals
    it names (modules by name) and the constants it reads from `self`."""

    code: str
    globals: dict[str, tuple[str, Any]]
    constants: dict[str, Any]
    # The graph program's data, where the graph has one (graph_program.py).
    program: graph_program.Encoding | None

    @classmethod
    def of(cls, gm: fx.GraphModule, program: bool = False) -> _Source:
        """`gm`'s source; with its graph program if `program` (for a
        compiled graph, whose code and program take the boxed list of
        inputs)."""
        if any(node.op == "call_module" for node in gm.graph.nodes):
            raise BypassAOTAutogradCache("fxmlir: a graph that calls a submodule")
        code = gm.code  # first: a lazy module generates its forward here
        names = dict(type(gm).forward.__globals__)
        names.pop("__builtins__", None)
        return cls(code,
                   {name: ("module", value.__name__) if isinstance(value, types.ModuleType)
                    else ("object", value) for name, value in names.items()},
                   {node.target: _fetch(gm, node.target)
                    for node in gm.graph.nodes if node.op == "get_attr"},
                   _program_of(gm) if program else None)

    def forward(self) -> Callable[..., Any]:
        """The forward, bound to a module holding the constants: its graph
        program where it has one."""
        run = graph_program.build(self.program) if self.program is not None else None
        if run is not None:
            return run
        names = {name: importlib.import_module(value) if kind == "module" else value
                 for name, (kind, value) in self.globals.items()}
        root = torch.nn.Module()
        for target, value in self.constants.items():
            *path, leaf = target.split(".")
            owner = root
            for part in path:
                if not hasattr(owner, part):
                    owner.add_module(part, torch.nn.Module())
                owner = getattr(owner, part)
            setattr(owner, leaf, value)
        return direct_calls.forward(self.code, names, root)


def _program_of(gm: fx.GraphModule) -> graph_program.Encoding | None:
    try:
        return graph_program.encode(gm)
    except graph_program.Unsupported:
        return None


def _fetch(gm: fx.GraphModule, target: str) -> Any:
    value: Any = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


class CompiledStage(OutputCode):
    """A forward, backward or inference graph as fxmlir compiled it, called in
    AOTAutograd's boxed convention; `cacheable` unless something fell back
    while it compiled."""

    def __init__(self, run: Callable[[list[Any]], Any], compiled: fx.GraphModule,
                 original: fx.GraphModule, graph: str, strict: bool, cacheable: bool,
                 programs: bool = True) -> None:
        super().__init__()
        self._run: Callable[[list[Any]], Any] | None = run
        self._graphs: tuple[fx.GraphModule, fx.GraphModule] | None = (compiled, original)
        self._sources: tuple[_Source, _Source | None] | None = None
        self.graph = graph
        self.strict = strict
        self.cacheable = cacheable
        self.programs = programs
        self._boxed_call = True

    def __call__(self, inputs: list[Any]) -> Any:
        assert self._run is not None, "a cached stage is called before its post_compile"
        return self._run(inputs)

    @property
    def accepts_missing_tangents(self) -> bool:
        """A backward compiled in this process (fxmlir.missing_tangents); one
        from the cache takes its tangents all."""
        return getattr(self._run, "accepts_missing_tangents", False)

    def prepare_for_serialization(self) -> None:
        """On the copy AOTAutograd's cache writes: sources for graphs."""
        if not self.cacheable:
            raise BypassAOTAutogradCache(f"fxmlir: {self.graph} fell back while it compiled")
        assert self._graphs is not None
        compiled, original = self._graphs
        self._sources = (_Source.of(compiled, program=self.programs),
                         None if original is compiled else _Source.of(original))
        try:  # what pickle cannot take is a bypass, not torch's warning
            pickle.dumps(self._sources)
        except Exception as error:  # noqa: BLE001 - any object a graph names
            raise BypassAOTAutogradCache(f"fxmlir: {self.graph}: {error}") from error
        self._graphs = None
        self._run = None

    def post_compile(self, example_inputs: Any, constants: Any, graph_kwargs: Any) -> None:
        """After a cache hit: the graph's forward again, and its fallback's
        (compiled only if it is needed)."""
        if self._run is not None:
            return
        assert self._sources is not None
        compiled, original = self._sources
        if "mlir_jit" in compiled.code:
            import fxmlir.jit_ops  # noqa: F401  (mlir_jit's library)
        self._run = guard(compiled.forward(), _lazy(original) if original else None,
                          self.graph, self.strict)
        log.info("fxmlir: %s graph from the warm-start cache", self.graph)

    def set_triton_bundle(self, triton_bundle: Any) -> None:
        pass


def _lazy(source: _Source) -> Callable[..., Any]:
    """source.forward(), compiled at its first call."""
    @functools.cache
    def forward() -> Callable[..., Any]:
        return source.forward()

    return lambda *args: forward()(*args)
