"""The folder a fallback leaves: the failed graph's repro.py and the module
as the failing step left it, where dumps go (or a temporary folder)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch.fx as fx

from fxmlir import _C
from fxmlir.compile_ahead import NO_REGIONS
from fxmlir.config import Options
from fxmlir.dump import Dumper
from fxmlir.repro_script import repro_source


def dump_failure(options: Options, graph_id: str, label: str, stage: str, reason: str,
                  gm: fx.GraphModule, latest: list[str | _C.Module]) -> str:
    """Writes the failed graph's repro.py and the module; says where, or why
    it could not: the fallback itself must never fail."""
    root = options.dump_dir or Path(tempfile.gettempdir()) / "fxmlir-failures"
    dumper = Dumper(root, graph_id, label, stage)

    def repro() -> str:
        try:
            return repro_source(gm, f"{graph_id}/{label}", stage, reason, options)
        except Exception as e:  # noqa: BLE001 - the graph's code is still worth having
            return f"# {reason}\n# no runnable repro: {type(e).__name__}: {e}\n{gm.code}"

    # The module as the failing step left it; the graph's JSON when the core
    # could not build it.
    last = latest[-1] if latest else None
    dumper.failed(reason, repro, (lambda: str(last)) if isinstance(last, _C.Module) else None)
    if isinstance(last, str):
        dumper.write("failed-graph.json", last)
    if dumper.error is not None:  # e.g. a folder is a file, or the disk full
        return f"no dump written to {root}: {dumper.error}"
    return f"dumped to {dumper.folder}"


# A region's repro: its text parsed and compiled as the round trip did.
_REGION_REPRO = '''"""fxmlir: {graph}: JIT region @{name} did not compile.

`python {name}-repro.py` compiles it again as the round trip did (its text
is {name}.mlir beside this file) and prints why it fails; exit status 1
while it does. {no_regions} turns JIT regions off."""

import sys
from pathlib import Path

from fxmlir import _C
from fxmlir.compile_ahead import compile_region

text = (Path(__file__).parent / "{name}.mlir").read_text()
(region,) = [r for r in _C.Context().parse(text).jit_regions() if r.name == "{name}"]
reason = compile_region(region)
print(reason or "compiled")
sys.exit(1 if reason else 0)
'''


def dump_region_failure(options: Options, graph_id: str, label: str, stage: str,
                        region: _C.JitRegion, reason: str) -> str:
    """Writes the JIT region that did not compile (<name>.mlir) and
    <name>-repro.py, which compiles it again; says where, or why it could
    not."""
    root = options.dump_dir or Path(tempfile.gettempdir()) / "fxmlir-failures"
    dumper = Dumper(root, graph_id, label, stage)
    dumper.write(f"{region.name}.mlir", region.text)
    dumper.write(f"{region.name}-repro.py", _REGION_REPRO.format(
        graph=f"{graph_id}/{label}", name=region.name, no_regions=NO_REGIONS))
    if dumper.error is not None:
        return f"no dump written to {root}: {dumper.error}"
    return f"its text and {region.name}-repro.py in {dumper.folder}"
