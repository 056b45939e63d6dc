"""The pass registry as Python sees it: names, summaries, and which stages'
default pipelines run each pass.

The table lives in the core (mlir/lib/Registration/PassRegistry.cpp), which also
builds each stage's pipeline, registered as "fxmlir-<stage>" with the
selection as options: the round trip runs it, and fxmlir-opt by the same
name, so fxmlir-opt, Python and FXMLIR_PASSES name passes the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from fxmlir import _C

# Codegen's pass (the codegen setting): JIT regions, after autodiff, where
# its cost model says they beat eager's kernels.
OUTLINE = "fxmlir-outline-jit-regions"
# The eager_random setting's pass: fused random ops draw eager's masks.
EAGER_RANDOM = "fxmlir-eager-random"


@cache
def registry() -> dict[str, _C.PassDescription]:
    """Pipeline passes by name, in pipeline order."""
    return {p.name: p for p in _C.pipeline_passes()}


def stages() -> tuple[str, ...]:
    return tuple(_C.stages())


def describe() -> str:
    """One line per pass: name, the stages that run it by default, summary."""
    width = max(map(len, registry()))
    stage_width = max(len(",".join(p.stages)) for p in registry().values())
    return "\n".join(f"{p.name:<{width}}  {','.join(p.stages) or 'opt-in':<{stage_width}}"
                     f"  {p.summary}" for p in registry().values())


def default_pipeline(stage: str) -> tuple[str, ...]:
    return Selection().for_stage(stage)


@dataclass(frozen=True)
class Selection:
    """Which passes run: exactly `explicit` when given, else each stage's
    default pipeline with `added` and without `removed`."""

    explicit: tuple[str, ...] | None = None
    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()

    def for_stage(self, stage: str) -> tuple[str, ...]:
        """The stage's passes, in pipeline order (the core's rule)."""
        if self.explicit == ():
            return ()
        return tuple(_C.stage_passes(stage, list(self.explicit or ()), sorted(self.added),
                                     sorted(self.removed)))

    def adding(self, name: str) -> Selection:
        """This selection with pass `name` too."""
        if self.explicit is not None:
            return replace(self, explicit=tuple(dict.fromkeys(self.explicit + (name,))))
        return replace(self, added=self.added | {name}, removed=self.removed - {name})

    def removing(self, name: str) -> Selection:
        """This selection without pass `name`."""
        if self.explicit is not None:
            return replace(self, explicit=tuple(n for n in self.explicit if n != name))
        return replace(self, added=self.added - {name}, removed=self.removed | {name})

    def spelled(self) -> str:
        """The selection as FXMLIR_PASSES / `passes=` would spell it."""
        if self.explicit is not None:
            return ",".join(self.explicit) or "none"
        edits = [f"+{n}" for n in sorted(self.added)] + [f"-{n}" for n in sorted(self.removed)]
        return ",".join(["default", *edits])

    def stage_options(self, stage: str) -> dict[str, list[str]]:
        """The keywords of Module.run_stage (and explain_stage,
        _C.stage_pipeline) that run this selection's passes in `stage`."""
        if not self.for_stage(stage):
            raise ValueError(f"the pass selection {self.spelled()!r} runs no pass "
                             f"in the {stage} stage")
        return {"only": list(self.explicit or ()), "add": sorted(self.added),
                "remove": sorted(self.removed)}


def parse_selection(items: list[str], what: str, given: object) -> Selection:
    """The selection that `items` make: ["default"], ["none"], pass names
    (["cse", "canonicalize"]: exactly these), -name/+name edits of the default
    pipelines (["-cse", "+x"]), or "default" followed by edits and names
    (["default", "x", "-cse"]: the default pipelines plus x, without cse).
    A pass is named at most once. `what` names the setting and `given` is its
    value as the user gave it, which every error quotes."""
    names = registry()
    accepted = ("'default', 'none', pass names, -name/+name edits of the default pipelines, "
                "or 'default' followed by edits and pass names to add; each pass at most "
                f"once; pass names: {', '.join(names)}")

    def error(problem: str) -> ValueError:
        return ValueError(f"{what}={given!r} {problem}; accepted values: {accepted}")

    if not items or not all(items):
        raise error("has an empty pass name (use 'none' to run no pass)")
    if "none" in items and len(items) > 1:
        raise error("combines 'none' with other items: 'none' must stand alone")
    if items.count("default") > 1:
        raise error("names 'default' twice")
    seen: set[str] = set()
    for item in items:
        name = item[1:] if item[0] in "+-" else item
        if name in ("default", "none") and name != item:
            raise error(f"edits {name!r} ({item!r}): only passes are added or removed")
        if item[0] in "+-" and name[:1] in ("", "+", "-"):
            raise error(f"has {item!r}: an edit is one + or - before a pass name")
        if name in ("default", "none"):
            continue
        if name not in names:
            raise error(f"names unknown pass {name!r}")
        if name in seen:
            raise error(f"names pass {name!r} twice")
        seen.add(name)
    edits = [item for item in items if item[0] in "+-"]
    plain = [item for item in items if item[0] not in "+-" and item != "default"]
    if "default" not in items and edits and plain:
        raise error(f"mixes edits of the default pipelines ({', '.join(edits)}) with pass "
                    f"names ({', '.join(plain)}); with 'default' among them the names are "
                    "added to the default pipelines")
    if "default" in items or edits:
        return Selection(added=frozenset(plain + [e[1:] for e in edits if e[0] == "+"]),
                         removed=frozenset(e[1:] for e in edits if e[0] == "-"))
    return Selection(explicit=tuple(n for n in names if n in plain))
