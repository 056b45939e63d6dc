"""The pass registry as Python sees it: names, summaries, default pipeline.

The list itself lives in the core (mlir/lib/Core/PassRegistry.cpp), so
fxmlir-opt, Python and FXMLIR_PASSES name passes the same way.
"""

from __future__ import annotations

from functools import cache

from fxmlir import _C


@cache
def registry() -> dict[str, _C.PassDescription]:
    """Pipeline passes by name, in pipeline order."""
    return {p.name: p for p in _C.pipeline_passes()}


def describe() -> str:
    """One line per pass: name, whether it runs by default, summary."""
    width = max(map(len, registry()))
    return "\n".join(f"{p.name:<{width}}  {'default' if p.in_default_pipeline else 'opt-in '}"
                     f"  {p.summary}" for p in registry().values())


def default_pipeline() -> tuple[str, ...]:
    return tuple(n for n, p in registry().items() if p.in_default_pipeline)


def parse_selection(items: list[str], what: str = "FXMLIR_PASSES") -> tuple[str, ...]:
    """Passes selected by items such as ["default"], ["none"], ["cse",
    "canonicalize"] or ["-cse", "+fuse-x"] (edits to the default pipeline,
    alone or after "default"). The result keeps pipeline order. `what` names
    the setting in errors."""
    names = registry()
    accepted = ("'default', 'none', a comma-separated list of pass names, or of -name/+name "
                f"edits to the default pipeline; pass names: {', '.join(names)}")
    if not items or not all(items):
        raise ValueError(f"{what}={','.join(items)!r} has an empty pass name "
                         f"(use 'none' to run no pass); accepted values: {accepted}")
    edits = [item for item in items if item[0] in "+-"]
    plain = [item for item in items if item[0] not in "+-"]
    if "none" in plain and len(items) > 1:
        raise ValueError(f"{what}={','.join(items)!r}: 'none' must stand alone; "
                         f"accepted values: {accepted}")
    if edits and set(plain) - {"default"}:
        raise ValueError(f"{what}={','.join(items)!r} mixes edits of the default pipeline "
                         f"({', '.join(edits)}) with pass names ({', '.join(plain)}); "
                         f"accepted values: {accepted}")
    selected = set(default_pipeline()) if edits or "default" in plain else set()
    for item in plain + edits:
        if item in ("default", "none"):
            continue
        sign, name = (item[0], item[1:]) if item[0] in "+-" else ("+", item)
        if name not in names:
            raise ValueError(f"{what}: unknown pass '{name}'; accepted values: {accepted}")
        if sign == "+":
            selected.add(name)
        else:
            selected.discard(name)
    return tuple(n for n in names if n in selected)
