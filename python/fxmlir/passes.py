"""The pass registry as Python sees it: names, summaries, and which stages'
default pipelines run each pass.

The table lives in the core (mlir/lib/Core/PassRegistry.cpp), which also
registers each stage's default pipeline as "fxmlir-<stage>" for fxmlir-opt,
so fxmlir-opt, Python and FXMLIR_PASSES name passes the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from fxmlir import _C


@cache
def registry() -> dict[str, _C.PassDescription]:
    """Pipeline passes by name, in pipeline order."""
    return {p.name: p for p in _C.pipeline_passes()}


def stages() -> tuple[str, ...]:
    return tuple(_C.stages())


def stage_pipeline_name(stage: str) -> str:
    """The registered default pipeline of a stage: "fxmlir-forward"."""
    return "fxmlir-" + stage.replace("_", "-")


def describe() -> str:
    """One line per pass: name, the stages that run it by default, summary."""
    width = max(map(len, registry()))
    stage_width = max(len(",".join(p.stages)) for p in registry().values())
    return "\n".join(f"{p.name:<{width}}  {','.join(p.stages) or 'opt-in':<{stage_width}}"
                     f"  {p.summary}" for p in registry().values())


def default_pipeline(stage: str) -> tuple[str, ...]:
    return tuple(n for n, p in registry().items() if stage in p.stages)


@dataclass(frozen=True)
class Selection:
    """Which passes run: exactly `explicit` when given, else each stage's
    default pipeline with `added` and without `removed`."""

    explicit: tuple[str, ...] | None = None
    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()

    @property
    def is_default(self) -> bool:
        return self.explicit is None and not self.added and not self.removed

    def for_stage(self, stage: str) -> tuple[str, ...]:
        """The stage's passes, in pipeline order."""
        if self.explicit is not None:
            chosen = set(self.explicit)
        else:
            chosen = (set(default_pipeline(stage)) | self.added) - self.removed
        return tuple(n for n in registry() if n in chosen)

    def pipeline(self, stage: str) -> str:
        """The textual pipeline of the stage: its registered name when
        nothing was changed, else its passes."""
        if self.is_default:
            return stage_pipeline_name(stage)
        return ",".join(self.for_stage(stage))


def parse_selection(items: list[str], what: str = "FXMLIR_PASSES") -> Selection:
    """The selection items such as ["default"], ["none"], ["cse",
    "canonicalize"] or ["-cse", "+fuse-x"] (edits to the default pipelines,
    alone or after "default") make. `what` names the setting in errors."""
    names = registry()
    accepted = ("'default', 'none', a comma-separated list of pass names, or of -name/+name "
                f"edits to the default pipelines; pass names: {', '.join(names)}")
    if not items or not all(items):
        raise ValueError(f"{what}={','.join(items)!r} has an empty pass name "
                         f"(use 'none' to run no pass); accepted values: {accepted}")
    edits = [item for item in items if item[0] in "+-"]
    plain = [item for item in items if item[0] not in "+-"]
    if "none" in plain and len(items) > 1:
        raise ValueError(f"{what}={','.join(items)!r}: 'none' must stand alone; "
                         f"accepted values: {accepted}")
    if edits and set(plain) - {"default"}:
        raise ValueError(f"{what}={','.join(items)!r} mixes edits of the default pipelines "
                         f"({', '.join(edits)}) with pass names ({', '.join(plain)}); "
                         f"accepted values: {accepted}")
    for item in plain + edits:
        name = item.lstrip("+-") if item[0] in "+-" else item
        if name not in names and item not in ("default", "none"):
            raise ValueError(f"{what}: unknown pass '{name}'; accepted values: {accepted}")
    if edits or plain == ["default"]:
        return Selection(added=frozenset(e[1:] for e in edits if e[0] == "+"),
                         removed=frozenset(e[1:] for e in edits if e[0] == "-"))
    return Selection(explicit=tuple(n for n in names if n in plain))
