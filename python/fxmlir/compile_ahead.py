"""Compile-ahead of a graph's JIT regions: each region compiles during the
round trip, in parallel, as mlir_jit would at its first call (which then
finds the code cached); one that does not compile is put back in the graph,
costing only itself."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from fxmlir import _C, progress
from fxmlir.fallback import fall_back

# The switch that avoids every region failure.
NO_REGIONS = "codegen=False (FXMLIR_CODEGEN_FUSERS=0)"


def compile_regions(module: _C.Module, times: dict[str, float], graph: str, strict: bool,
                    failure_folder: Callable[[_C.JitRegion, str], str]
                    ) -> tuple[dict[str, str], dict[str, str]]:
    """Compiles each JIT region of `module` now, as mlir_jit would at its
    first call (which then finds the code cached). A region that does not
    compile is put back in the graph, its ops left to eager, with a warning
    naming it, why, the folder `failure_folder` wrote for it and the switch
    that avoids it: it costs only itself, not the graph's other regions.
    Returns the text of the regions kept and why the others failed, by
    name."""
    if "fxmlir.mlir_jit" not in module.op_counts():
        return {}, {}
    import fxmlir.jit_ops  # noqa: F401  (mlir_jit's library: only needed with regions)

    start = time.perf_counter()
    regions = {region.name: region for region in module.jit_regions()}
    with progress.timed(f"{graph}: compiling {len(regions)} JIT regions"):
        failures = _compile_each(list(regions.values()))
    times["jit"] = (time.perf_counter() - start) * 1e3
    for name, reason in failures.items():
        where = failure_folder(regions[name], reason)
        module.inline_jit_region(name)
        del regions[name]
        fall_back(f"fxmlir: {graph}: JIT region @{name} left to eager: {reason} ({where}; "
                  f"{NO_REGIONS} turns JIT regions off)", strict, stacklevel=3)
    return {name: region.text for name, region in regions.items()}, failures


def _compile_each(regions: list[_C.JitRegion]) -> dict[str, str]:
    """Compiles the regions in parallel, one per core (the JIT releases the
    GIL and gives each compile its own context); returns why each region
    that did not compile failed, in graph order."""
    workers = min(len(regions), _usable_cores())
    if workers <= 1:
        reasons = [compile_region(region) for region in regions]
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="fxmlir-jit") as pool:
            reasons = list(pool.map(compile_region, regions))
    return {region.name: reason for region, reason in zip(regions, reasons)
            if reason is not None}


def _usable_cores() -> int:
    """The cores this process may run on (a container's, not the host's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def compile_region(region: _C.JitRegion) -> str | None:
    """Compiles one region; None, or why it does not compile."""
    try:
        # A CUDA region compiles for its device at its first call; its
        # lowering is checked now.
        if region.device_type == "cuda":
            _C.jit_check_cuda(region.text, region.name)
        else:
            _C.jit_compile_cpu(region.text, region.name)
    except _C.Error as e:
        return str(e)
    return None
