"""Checks that the core library's layers call only downward.

The layers of mlir/lib, top first: the C++ API (Core) uses the JIT, which
compiles with the passes that Registration registers: the graph passes
(Transforms), which outline into JIT regions what the code generator
(Codegen: fxmlir to linalg, then CPU and GPU lowerings) can lower, all over
the dialect (Dialect). A unit may call its own layer and the layers below
it, never one above: a call upward would tie the layers into a circle, so that
none could be built, tested or read without the others.

What a unit calls is read from the object files of a build (`nm`), so a
call counts by its exact symbol, never by a name two layers happen to share.

    python3 tools/check_layers.py BUILD_DIR/mlir/lib/CMakeFiles/FxmlirCore.dir

Prints each call upward (caller's source, the symbol, the callee's source)
and exits 1 when there is one.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

# Top first; a layer may call the layers after it.
LAYERS = ["Core", "JIT", "Registration", "Transforms", "Codegen", "Dialect"]

# nm's letters for a definition another object can link to (text, data,
# read-only data, bss); weak definitions (inline functions, templates) are
# copied into each caller and link nothing.
_STRONG = set("TDRB")


def layer_of(obj: pathlib.Path, root: pathlib.Path) -> str:
    """The layer of an object: the folder of its source under mlir/lib; the
    ATen op shards, generated into the build folder, are the dialect's."""
    top = obj.relative_to(root).parts[0]
    if top.startswith("AtenOps."):
        return "Dialect"
    if top not in LAYERS:
        raise SystemExit(f"check_layers: {obj}: source folder '{top}' is in no layer; "
                         f"add it to LAYERS ({', '.join(LAYERS)})")
    return top


def symbols(objects: list[pathlib.Path]) -> dict[pathlib.Path, tuple[set[str], set[str]]]:
    """(strong definitions, undefined references) of each object, from one
    run of nm."""
    out = subprocess.run(["nm", "-P", "-A", *map(str, objects)], capture_output=True,
                         text=True, check=True).stdout
    table = {obj: (set(), set()) for obj in objects}
    for line in out.splitlines():
        path, _, rest = line.partition(": ")
        fields = rest.split()
        if len(fields) < 2:
            continue
        defined, undefined = table[pathlib.Path(path)]
        name, kind = fields[0], fields[1]
        if kind == "U":
            undefined.add(name)
        elif kind in _STRONG:
            defined.add(name)
    return table


def demangle(names: list[str]) -> list[str]:
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                         text=True, check=True).stdout
    return out.splitlines()


def upward_calls(root: pathlib.Path,
                 objects: list[pathlib.Path]) -> list[tuple[pathlib.Path, str, pathlib.Path]]:
    """(caller object, mangled symbol, callee object) of every call from a
    layer to one above it."""
    layers = {obj: layer_of(obj, root) for obj in objects}
    table = symbols(objects)
    definer = {name: obj for obj, (defined, _) in table.items() for name in defined}
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    return [(obj, name, definer[name])
            for obj, (_, undefined) in table.items() for name in sorted(undefined)
            if name in definer and rank[layers[definer[name]]] < rank[layers[obj]]]


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python3 tools/check_layers.py OBJECT_DIR", file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    objects = sorted(root.rglob("*.o"))
    if not objects:
        raise SystemExit(f"check_layers: no object files under {root}")
    found = upward_calls(root, objects)
    readable = demangle([name for _, name, _ in found]) if found else []
    for (caller, _, callee), name in zip(found, readable):
        print(f"{caller.relative_to(root)} ({layer_of(caller, root)}) calls {name}, "
              f"defined in {callee.relative_to(root)} ({layer_of(callee, root)})")
    if found:
        print(f"check_layers: {len(found)} call(s) upward; layers, top first: "
              f"{' > '.join(LAYERS)}")
        return 1
    print(f"check_layers: {len(objects)} objects, every call downward: {' > '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
