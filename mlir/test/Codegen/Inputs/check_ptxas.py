"""Assembles every kernel of a module lowered by --fxmlir-jit-cuda-ptx.

Reads the module from stdin, runs `ptxas -arch=<arch> -v` on the PTX of
each gpu.binary and prints one line per kernel (registers, spills, vector
accesses, shuffles), then a summary. Exits 1, naming the kernel, when one
does not assemble, spills, is an elementwise kernel (`*_elementwise`)
without a 16-byte-class vector access, or is a row reduction
(`*_row_reduction`) without `shfl.sync`.
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BINARY = re.compile(r'gpu\.binary @(\w+) .*?assembly = "((?:[^"\\]|\\.)*)"')
ENTRY = re.compile(r"\.visible \.entry (\w+)\(")
REGISTERS = re.compile(r"Used (\d+) registers")
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
VECTOR_LOAD = re.compile(r"\bld\.global(?:\.nc)?\.v[248]\.")
VECTOR_STORE = re.compile(r"\bst\.global\.v[248]\.")


def unescape(text: str) -> str:
    """MLIR's string escapes: \\XX in hex, \\\\ and \\"."""
    return re.sub(
        r"\\([0-9A-Fa-f]{2}|\\|\")",
        lambda m: m.group(1) if m.group(1) in ('\\', '"') else chr(int(m.group(1), 16)),
        text,
    )


def assemble(ptx: str, arch: str, work: Path, name: str) -> str:
    """ptxas -v's report for `ptx`; raises with ptxas's errors when it fails."""
    path = work / f"{name}.ptx"
    path.write_text(ptx)
    done = subprocess.run(
        ["ptxas", f"-arch={arch}", "-v", "-o", str(work / f"{name}.cubin"), str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"error: {name} does not assemble:\n{done.stderr}")
    return done.stderr + done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arch", default="sm_90")
    arch = parser.parse_args().arch
    binaries = BINARY.findall(sys.stdin.read())
    if not binaries:
        raise SystemExit("error: no gpu.binary in the input")
    errors = []
    counts = dict(kernels=0, spilling=0, elementwise=0, vectorized=0,
                  vector_loads=0, row_reductions=0, shuffles=0)
    with tempfile.TemporaryDirectory() as work:
        for module, escaped in binaries:
            ptx = unescape(escaped)
            report = assemble(ptx, arch, Path(work), module)
            for entry in ENTRY.findall(ptx):
                counts["kernels"] += 1
                registers = REGISTERS.search(report)
                spills = [int(n) for pair in SPILLS.findall(report) for n in pair]
                loads = len(VECTOR_LOAD.findall(ptx))
                stores = len(VECTOR_STORE.findall(ptx))
                shuffles = ptx.count("shfl.sync")
                print(f"{module} {entry}: registers={registers.group(1) if registers else '?'}"
                      f" spill_bytes={sum(spills)} vector_loads={loads}"
                      f" vector_stores={stores} shfl_sync={shuffles}")
                if not spills or sum(spills):
                    counts["spilling"] += 1
                    errors.append(f"{module}: spills ({report.strip()})")
                if entry.endswith("_elementwise"):
                    counts["elementwise"] += 1
                    counts["vectorized"] += bool(loads or stores)
                    counts["vector_loads"] += bool(loads)
                    if not loads and not stores:
                        errors.append(f"{module}: elementwise without vector accesses")
                if entry.endswith("_row_reduction"):
                    counts["row_reductions"] += 1
                    counts["shuffles"] += bool(shuffles)
                    if not shuffles:
                        errors.append(f"{module}: row reduction without shfl.sync")
    # A kernel that does not assemble ends the run above.
    print("SUMMARY kernels={kernels} assembled={kernels} spilling={spilling}"
          " elementwise={elementwise} with_vector_access={vectorized}"
          " with_vector_loads={vector_loads}"
          " row_reductions={row_reductions} with_shfl_sync={shuffles}".format(**counts))
    if errors:
        raise SystemExit("error: " + "\nerror: ".join(errors))


if __name__ == "__main__":
    main()
