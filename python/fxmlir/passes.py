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


def parse_selection(spec: str, what: str = "FXMLIR_PASSES") -> tuple[str, ...]:
    """Passes selected by a spec such as "default", "none", "cse,canonicalize"
    or "-cse,+fuse-x" (changes to the default pipeline). The result keeps
    pipeline order. `what` names the setting in errors."""
    names = registry()
    items = [item.strip() for item in spec.split(",") if item.strip()]
    relative = all(item[0] in "+-" for item in items) and items
    selected = set(default_pipeline()) if relative else set()
    for item in items:
        if item == "default":
            selected |= set(default_pipeline())
            continue
        if item == "none":
            continue
        sign, name = (item[0], item[1:]) if item[0] in "+-" else ("+", item)
        if name not in names:
            raise ValueError(
                f"{what}: unknown pass '{name}'; accepted values: 'default', 'none', "
                f"or a comma-separated list of [+|-]name with name one of "
                f"{', '.join(names)}")
        if sign == "+":
            selected.add(name)
        else:
            selected.discard(name)
    return tuple(n for n in names if n in selected)
